/**
 * What every call of an `openai` provider shares (providers/openai.ts): the `openai` package,
 * loaded on the first call; one client per attempt (or one per size bound for the operator's own
 * key); and the mapping of any failure to a ProviderError with the key scrubbed from its text.
 */
import type OpenAI from 'openai';
import { egressFetch } from '../egress-fetch.js';
import { errorCodeForStatus, type RetryPolicy } from '../http.js';
import type { ProviderSpec } from '../specs.js';
import type { AdapterContext } from '../types.js';
import { ProviderError, type ProviderRun } from '../types.js';

/** Backoff between two tries of a call (Retry-After is honoured up to maxDelayMs). */
const BASE_DELAY_MS = 250;
const MAX_DELAY_MS = 30_000;
/** The SDK needs a key string; a keyless server gets this one, and no Authorization header is sent. */
const NO_KEY = 'unused';

export type OpenAiPackage = typeof import('openai');
let openAiPackage: OpenAiPackage | undefined;

/**
 * The `openai` package, loaded on the first call of a provider of this type: a service without
 * one never loads it. Its error classes are looked up through it (an error of the package can only
 * exist once it is loaded).
 */
export async function loadOpenAi(): Promise<OpenAiPackage> {
  return (openAiPackage ??= await import('openai'));
}

/** The package's connection error class, once the package is loaded (no error of it exists before). */
export function isConnectionError(err: unknown): err is Error & { cause?: unknown } {
  return openAiPackage !== undefined && err instanceof openAiPackage.APIConnectionError;
}

export interface OpenAiCalls {
  spec: ProviderSpec;
  ctx: AdapterContext;
  baseUrl: string;
  policy: RetryPolicy;
  clientFor(job: ProviderRun, maxBytes: number): Promise<OpenAI>;
  /** Runs `work`, mapping every failure; `consumed()` is what the provider did before it failed. */
  guarded<T>(job: ProviderRun, work: () => Promise<T>, consumed?: () => number): Promise<T>;
}

export function openAiCalls(spec: ProviderSpec, ctx: AdapterContext): OpenAiCalls {
  if (!spec.baseUrl) throw new Error(`providers file: openai provider ${spec.name} has no baseUrl`);
  const baseUrl = spec.baseUrl;
  const policy: RetryPolicy = { maxRetries: spec.maxRetries, baseDelayMs: BASE_DELAY_MS, maxDelayMs: MAX_DELAY_MS };
  // The SDK's own deadline only backs up ours: every try has the provider's deadline, so a call
  // with its retries and pauses ends within this bound anyway.
  const callDeadlineMs = spec.requestTimeoutMs * (spec.maxRetries + 1) + MAX_DELAY_MS * spec.maxRetries + 1000;

  /** A client for one attempt, with the attempt's key and the operation's size bound. */
  function client(sdk: OpenAiPackage, apiKey: string | undefined, maxBytes: number): OpenAI {
    const key = apiKey && apiKey.length > 0 ? apiKey : undefined;
    return new sdk.OpenAI({
      apiKey: key ?? NO_KEY,
      // Explicit values, so nothing is read from the environment (OPENAI_ORG_ID, OPENAI_LOG …).
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      baseURL: baseUrl,
      maxRetries: 0,
      timeout: callDeadlineMs,
      logLevel: 'off',
      fetch: egressFetch(ctx.providerEgress, { timeoutMs: spec.requestTimeoutMs, maxBytes, policy, sendAuthorization: key !== undefined }),
    });
  }

  /**
   * The client of an attempt. Jobs funded by credits use the operator's key, which the service
   * holds anyway: their clients are built once per size bound and reused. A workspace's own key
   * lives only in a client built for its attempt.
   */
  const operatorClients = new Map<number, OpenAI>();
  async function clientFor(job: ProviderRun, maxBytes: number): Promise<OpenAI> {
    const sdk = await loadOpenAi();
    if (job.funding !== 'credits' || job.apiKey !== spec.apiKey?.reveal()) return client(sdk, job.apiKey, maxBytes);
    let api = operatorClients.get(maxBytes);
    if (!api) operatorClients.set(maxBytes, (api = client(sdk, job.apiKey, maxBytes)));
    return api;
  }

  /** A ProviderError for any failure of a call; the caller's abort is rethrown as is. */
  function failure(err: unknown, job: ProviderRun, consumedMillicents = 0): unknown {
    if (job.signal.aborted) return job.signal.reason ?? err;
    let mapped: ProviderError | undefined;
    const sdk = openAiPackage;
    if (err instanceof ProviderError) mapped = err;
    else if (sdk && err instanceof sdk.APIConnectionError && err.cause instanceof ProviderError) mapped = err.cause;
    else if (sdk && err instanceof sdk.APIConnectionTimeoutError) mapped = new ProviderError('PROVIDER_TIMEOUT', 'The provider did not answer in time.');
    else if (sdk && err instanceof sdk.APIUserAbortError) mapped = new ProviderError('PROVIDER_TIMEOUT', 'The provider call was aborted.');
    else if (sdk && err instanceof sdk.APIConnectionError) mapped = new ProviderError('PROVIDER_ERROR', 'The provider could not be reached.');
    else if (sdk && err instanceof sdk.APIError && typeof err.status === 'number') mapped = new ProviderError(errorCodeForStatus(err.status), `the provider answered HTTP ${err.status}`);
    else if (err instanceof SyntaxError) mapped = new ProviderError('PROVIDER_ERROR', 'The provider answer is not valid JSON.');
    if (!mapped) return err;
    let message = mapped.message;
    // A refusal of the key may quote it (even masked): the message is ours, never the provider's.
    if (mapped.code === 'PROVIDER_AUTH') message = 'The provider refused the API key.';
    if (job.apiKey) message = message.split(job.apiKey).join('[redacted]');
    const consumed = Math.max(mapped.consumedMillicents, consumedMillicents);
    return message === mapped.message && consumed === mapped.consumedMillicents ? mapped : new ProviderError(mapped.code, message, consumed);
  }

  async function guarded<T>(job: ProviderRun, work: () => Promise<T>, consumed: () => number = () => 0): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw failure(err, job, consumed());
    }
  }

  return { spec, ctx, baseUrl, policy, clientFor, guarded };
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The model the answer names (providers resolve aliases), else the route's. */
export function answerModel(named: unknown, routeModel: string): string {
  return typeof named === 'string' && named.length > 0 && named.length <= 200 ? named : routeModel;
}
