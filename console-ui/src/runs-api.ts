/**
 * The console's run and job endpoints (src/console/routes-runs.ts, routes-jobs.ts) and the
 * verified reader of a job's complete output: every fragment in order, offsets checked, and the
 * whole document's SHA-256 compared with the digest the service announced, as the public API's
 * complete-output rule asks of a client.
 */
import { ApiError, request, type ApiKey, type KeyMode } from './api.js';

/** A JSON Schema as /v1/tools serves an operation's input (the parts the form reads). */
export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
}

export interface MediaField {
  field: string;
  multiple: boolean;
  kinds: string[];
  within?: string;
}

export interface Operation {
  operationId: string;
  summaryKey: string;
  inputSchema: JsonSchema;
  usagePoints: number;
  asynchronous: boolean;
  mediaFields: MediaField[];
}

export interface Tool {
  slug: string;
  name: string;
  description: string;
  operations: Operation[];
}

export interface Estimate {
  operationId: string;
  estimatedCostMillicents: number;
  maximumCostMillicents: number;
  usagePoints: number;
}

export type RunAnswer =
  | { kind: 'result'; jobId: string; status: string; errorCode: string | null; costMillicents: number; result: Record<string, unknown> | null }
  | { kind: 'job'; jobId: string; status: string; maximumCostMillicents: number };

export const JOB_STATUSES = ['pending', 'processing', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export interface JobMetadata {
  id: string;
  workspaceId: string;
  /** False for a test job (decisions.md "Test mode"). */
  livemode: boolean;
  toolSlug: string;
  operationId: string;
  status: JobStatus;
  executionOrigin: string | null;
  progress: { percentage: number };
  costMillicents: number;
  maximumCostMillicents: number;
  errorCode: string | null;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  version: number;
}

export interface JobSnapshot extends JobMetadata {
  output: Record<string, unknown>;
}

interface OutputPage {
  jobId: string;
  fragment: string;
  offsetBytes: number;
  totalBytes: number;
  sha256: string;
  nextCursor: string | null;
}

export interface MediaChoice {
  id: string;
  name: string;
  mimeType: string;
}

export interface OperationBody {
  keyId: string;
  /** The mode the key must be of (the shell's test-mode switch). */
  mode: KeyMode;
  operationId: string;
  input: Record<string, unknown>;
}

const ws = (workspaceId: string) => `/workspaces/${encodeURIComponent(workspaceId)}`;
/** A job endpoint of `mode` (`?mode=test` for a test job; live is the server's default). */
const job = (workspaceId: string, jobId: string, mode: KeyMode, rest = '', query: Record<string, string> = {}) => {
  const params = new URLSearchParams(query);
  if (mode === 'test') params.set('mode', 'test');
  const qs = params.toString();
  return `${ws(workspaceId)}/jobs/${encodeURIComponent(jobId)}${rest}${qs ? `?${qs}` : ''}`;
};

export const runsApi = {
  tools: (workspaceId: string, keyId: string, mode: KeyMode) => request<{ items: Tool[] }>('GET', `${ws(workspaceId)}/tools?keyId=${encodeURIComponent(keyId)}&mode=${mode}`),
  estimate: (workspaceId: string, body: OperationBody) => request<Estimate>('POST', `${ws(workspaceId)}/estimates`, body),
  /** One Idempotency-Key per submitted form: the same key again replays the first answer. */
  run: (workspaceId: string, body: OperationBody, idempotencyKey: string) =>
    request<{ run: RunAnswer; replayed: boolean }>('POST', `${ws(workspaceId)}/runs`, body, { 'idempotency-key': idempotencyKey }),
  jobs: (workspaceId: string, mode: KeyMode, q: { status?: string; operationId?: string; cursor?: string; limit?: number }) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== '') params.set(k, String(v));
    if (mode === 'test') params.set('mode', 'test');
    const qs = params.toString();
    return request<{ items: JobMetadata[]; nextCursor: string | null }>('GET', `${ws(workspaceId)}/jobs${qs ? `?${qs}` : ''}`);
  },
  job: (workspaceId: string, jobId: string, mode: KeyMode) => request<JobSnapshot>('GET', job(workspaceId, jobId, mode)),
  cancel: (workspaceId: string, jobId: string, mode: KeyMode) => request<JobSnapshot>('POST', job(workspaceId, jobId, mode, '/cancel')),
  retry: (workspaceId: string, jobId: string, mode: KeyMode, keyId: string, idempotencyKey: string) =>
    request<{ run: RunAnswer; replayed: boolean }>('POST', job(workspaceId, jobId, mode, '/retry'), { keyId }, { 'idempotency-key': idempotencyKey }),
  /** The workspace's newest media of the mode (the Media page's list endpoint), to pick from in media fields. */
  media: (workspaceId: string, mode: KeyMode) => request<{ items: MediaChoice[] }>('GET', `${ws(workspaceId)}/media?limit=100${mode === 'test' ? '&mode=test' : ''}`),
};

/**
 * Keys the console may act with for `scope` in `mode` (the shell's test-mode switch: test keys in
 * test mode, live keys otherwise): not revoked, not expired, holding the scope, usable over REST.
 */
export function usableKeys(keys: ApiKey[], scope: string, mode: KeyMode, now = Date.now()): ApiKey[] {
  return keys.filter((k) => k.mode === mode && !k.revokedAt && (!k.expiresAt || Date.parse(k.expiresAt) > now) && k.scopes.includes(scope) && k.transports.includes('rest'));
}

/** A random UUID (version 4) from getRandomValues, which browsers offer on plain http too. */
export function newIdempotencyKey(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export interface CompleteOutput {
  value: unknown;
  sha256: string;
  totalBytes: number;
  /** False only where the browser offers no SubtleCrypto (plain http on another host than localhost). */
  verified: boolean;
}

function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Reads the job's complete output through every fragment and verifies it against its digest. */
export async function readCompleteOutput(workspaceId: string, jobId: string, mode: KeyMode): Promise<CompleteOutput> {
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [];
  let received = 0;
  let cursor: string | null = null;
  let first: OutputPage | undefined;
  do {
    const page: OutputPage = await request<OutputPage>('GET', job(workspaceId, jobId, mode, '/output', cursor ? { cursor } : {}));
    first ??= page;
    if (page.offsetBytes !== received || page.sha256 !== first.sha256 || page.totalBytes !== first.totalBytes) {
      throw new ApiError(0, 'OUTPUT_CHANGED', 'The output changed while it was read; open the job again.');
    }
    const bytes = encoder.encode(page.fragment);
    parts.push(bytes);
    received += bytes.length;
    cursor = page.nextCursor;
  } while (cursor);
  const whole = new Uint8Array(received);
  let at = 0;
  for (const p of parts) {
    whole.set(p, at);
    at += p.length;
  }
  if (received !== first.totalBytes) throw new ApiError(0, 'OUTPUT_INCOMPLETE', `Read ${received} of ${first.totalBytes} bytes of the output; open the job again.`);
  let verified = false;
  if (globalThis.crypto?.subtle) {
    const digest = hex(await crypto.subtle.digest('SHA-256', whole));
    if (digest !== first.sha256) throw new ApiError(0, 'OUTPUT_UNVERIFIED', 'The output does not match its SHA-256 digest; open the job again.');
    verified = true;
  }
  return { value: JSON.parse(new TextDecoder().decode(whole)) as unknown, sha256: first.sha256, totalBytes: received, verified };
}

/** Millicents as currency: 1 cent = 1000 millicents. */
export function formatMillicents(mc: number): string {
  const dollars = mc / 100_000;
  return `$${dollars.toFixed(dollars !== 0 && Math.abs(dollars) < 0.01 ? 5 : 2)} (${mc.toLocaleString('en-US')} millicents)`;
}
