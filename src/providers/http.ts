/**
 * HTTP calls to a provider, shared by the remote adapters: one guarded request per try through the
 * egress client (never redirected, bounded body, a deadline per call), 429 and 5xx retried inside
 * the attempt with exponential backoff honouring Retry-After, and the provider's answer mapped onto
 * the job error codes of decisions.md section 5. This is the only layer that retries.
 *
 * Invariant: an error thrown from here never carries the request's headers (the key) or body.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { EgressError, type Egress, type EgressRequest, type EgressResponse } from '../egress/types.js';
import { ProviderError } from './types.js';

export interface ProviderCall extends Omit<EgressRequest, 'maxRedirects'> {
  /**
   * Retry 429 and 5xx answers (true, the default), only 429 ('rate-limits': a request that must
   * not run twice, such as creating a prediction, since a 5xx may come after the work was
   * accepted), or nothing (false). Network failures are retried only for GET.
   */
  retry?: boolean | 'rate-limits';
}

export interface RetryPolicy {
  maxRetries: number;
  /** First backoff when the provider gives no Retry-After (doubles each retry). */
  baseDelayMs: number;
  /** Longest pause between two tries, Retry-After included. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 2, baseDelayMs: 250, maxDelayMs: 30_000 };

/** The job error code for a provider's HTTP status. */
export function errorCodeForStatus(status: number): string {
  if (status === 401 || status === 403) return 'PROVIDER_AUTH';
  if (status === 429) return 'PROVIDER_RATE_LIMITED';
  if (status === 408 || status === 504) return 'PROVIDER_TIMEOUT';
  if (status >= 400 && status < 500) return 'PROVIDER_REJECTED';
  return 'PROVIDER_ERROR';
}

const RETRYABLE = (status: number) => status === 429 || status >= 500;

/** Seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A short, key-free description of a provider's error answer (its JSON message when it has one). */
export function describeAnswer(res: Pick<EgressResponse, 'status' | 'body'>): string {
  let detail = '';
  try {
    const json = JSON.parse(res.body.toString('utf8')) as { error?: { message?: unknown } | string; detail?: unknown; message?: unknown };
    const m = typeof json.error === 'object' ? json.error?.message : (json.error ?? json.detail ?? json.message);
    if (typeof m === 'string') detail = m;
  } catch {
    /* not JSON */
  }
  return `the provider answered HTTP ${res.status}${detail ? `: ${detail.slice(0, 300)}` : ''}`;
}

/**
 * An answer over the call's size bound: the provider answered (and may have done the work), but
 * nothing of the answer is read beyond the bound, so what it reports is unknown.
 */
export class AnswerTooLarge extends ProviderError {
  constructor() {
    super('PROVIDER_ERROR', 'The provider answer exceeds the size bound.');
  }
}

/** Maps a failed call onto a ProviderError (the caller's own abort is rethrown unchanged). */
export function providerFailure(err: unknown, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) return signal.reason ?? err;
  if (err instanceof ProviderError) return err;
  if (err instanceof EgressError) {
    if (err.code === 'EGRESS_TIMEOUT') return new ProviderError('PROVIDER_TIMEOUT', 'The provider did not answer in time.');
    if (err.code === 'EGRESS_TOO_LARGE') return new AnswerTooLarge();
    if (err.code === 'EGRESS_BLOCKED') return new ProviderError('PROVIDER_ERROR', 'The provider address is not permitted.');
    return new ProviderError('PROVIDER_ERROR', `The provider could not be reached (${err.code}).`);
  }
  return err;
}

/**
 * One call with its retries. Resolves with the final answer when it is a success (2xx) or not
 * retryable; throws ProviderError for a refusal that stays after the retries, or a network failure.
 * A non-2xx answer that is not retried is thrown as the ProviderError of its status.
 */
export async function callProvider(egress: Egress, url: string, call: ProviderCall, policy: RetryPolicy = DEFAULT_RETRY_POLICY): Promise<EgressResponse> {
  const { retry = true, ...init } = call;
  for (let attempt = 0; ; attempt++) {
    let res: EgressResponse;
    try {
      res = await egress.request(url, { ...init, maxRedirects: 0 });
    } catch (err) {
      const failure = providerFailure(err, init.signal);
      const networkRetry = retry === true && (init.method ?? 'GET') === 'GET' && err instanceof EgressError && err.code === 'EGRESS_NETWORK';
      if (!networkRetry || attempt >= policy.maxRetries) throw failure;
      await pause(policy.baseDelayMs * 2 ** attempt, policy, init.signal);
      continue;
    }
    if (res.status >= 200 && res.status < 300) return res;
    const retryable = retry === 'rate-limits' ? res.status === 429 : retry && RETRYABLE(res.status);
    if (retryable && attempt < policy.maxRetries) {
      await pause(retryAfterMs(res.headers['retry-after']) ?? policy.baseDelayMs * 2 ** attempt, policy, init.signal);
      continue;
    }
    throw new ProviderError(errorCodeForStatus(res.status), redactKey(describeAnswer(res), init.headers));
  }
}

/** A provider may echo the key it was sent: the bearer token of the request never leaves in a message. */
function redactKey(text: string, headers: Record<string, string> | undefined): string {
  const auth = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
  const token = auth?.replace(/^Bearer\s+/i, '');
  return token && token.length >= 4 ? text.split(token).join('[redacted]') : text;
}

async function pause(ms: number, policy: RetryPolicy, signal: AbortSignal | undefined): Promise<void> {
  await sleep(Math.min(Math.max(0, ms), policy.maxDelayMs), undefined, signal ? { signal } : {});
}

/** Parses a JSON answer, or fails the attempt with PROVIDER_ERROR (a malformed answer). */
export function jsonAnswer<T>(res: EgressResponse): T {
  try {
    return JSON.parse(res.body.toString('utf8')) as T;
  } catch {
    throw new ProviderError('PROVIDER_ERROR', 'The provider answer is not valid JSON.');
  }
}
