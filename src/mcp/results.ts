/**
 * A tool's result from the REST answer it replayed: the body as JSON text (the REST body, plus
 * `idempotencyKey` on runs and retries and `nextStep` on failures) and, on success, as
 * structuredContent; `isError` exactly when the REST status is an error, `_meta.httpStatus` and
 * `_meta.retryAfter`; and, so an agent can use what was made without parsing the JSON, one
 * `resource_link` block per produced file (name, MIME type, size and its signed URL, which
 * expires: read the job again for fresh ones).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { nextStepForJobFailure, nextStepForRefusal, type NextStep } from '../modules/jobs/next-step.js';

/** At most this many files are linked (a sprite can have dozens of frames; the JSON still has all). */
export const MAX_RESOURCE_LINKS = 100;

interface FileLink {
  mediaId: string;
  url: string;
  mimeType: string;
  sizeBytes: number;
  name?: string;
}

function isFile(value: unknown): value is FileLink {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v.mediaId === 'string' && typeof v.url === 'string' && typeof v.mimeType === 'string' && typeof v.sizeBytes === 'number';
}

/** The files of a body (the file objects of results and outputs), with where they are, depth first, bounded. */
export function producedFiles(root: unknown): { path: string; file: FileLink }[] {
  const out: { path: string; file: FileLink }[] = [];
  const stack: { value: unknown; path: string }[] = [{ value: root, path: '' }];
  while (stack.length > 0 && out.length < MAX_RESOURCE_LINKS) {
    const { value, path } = stack.pop()!;
    if (isFile(value)) {
      out.push({ path, file: value });
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    const entries = Array.isArray(value) ? value.map((v, i) => [`[${i}]`, v] as const) : Object.entries(value).map(([k, v]) => [path ? `.${k}` : k, v] as const);
    for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], path: `${path}${entries[i]![0]}` });
  }
  return out;
}

/** Advice for a failure in a body: a refused request's code, or a failed job (run result, snapshot, lookup). */
export function nextStepOf(statusCode: number, body: Record<string, unknown>): NextStep | undefined {
  if (statusCode >= 400) return typeof body.code === 'string' ? nextStepForRefusal(body.code) : undefined;
  const data = body.data as Record<string, unknown> | undefined;
  for (const candidate of [data, data?.response as Record<string, unknown> | undefined]) {
    if (candidate?.status === 'failed' && typeof candidate.errorCode === 'string') return nextStepForJobFailure(candidate.errorCode);
  }
  return undefined;
}

export interface ReplayedAnswer {
  statusCode: number;
  body: Record<string, unknown>;
  retryAfter?: number;
  /** Set on runs and retries: the key the call used (the caller's, or one drawn for it). */
  idempotencyKey?: string;
}

export function toolResult(answer: ReplayedAnswer): CallToolResult {
  const { statusCode, retryAfter, idempotencyKey } = answer;
  const nextStep = nextStepOf(statusCode, answer.body);
  const body: Record<string, unknown> = { ...answer.body, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}), ...(nextStep ? { nextStep } : {}) };
  const content: CallToolResult['content'] = [{ type: 'text', text: JSON.stringify(body) }];
  if (nextStep) content.push({ type: 'text', text: `${nextStep.errorCode}: ${nextStep.advice}` });
  if (statusCode < 400) {
    for (const { path, file } of producedFiles(body.data)) {
      content.push({
        type: 'resource_link',
        uri: file.url,
        name: file.name ?? file.mediaId,
        title: `${path} (media ${file.mediaId})`,
        mimeType: file.mimeType,
        size: file.sizeBytes,
      });
    }
  }
  // A refusal carries its error body as text only: structuredContent must fit the tool's
  // outputSchema (the success body), and the SDK client checks it on errors too.
  return {
    content,
    ...(statusCode < 400 ? { structuredContent: body } : {}),
    isError: statusCode >= 400,
    _meta: { httpStatus: statusCode, ...(retryAfter !== undefined ? { retryAfter } : {}) },
  };
}
