/**
 * The complete-output document of a job result: the UTF-8 bytes of
 * JSON.stringify(presentResult(stored result, signing time)) and their SHA-256.
 *
 * A paginated read renders its document once (cached by signing time), and every read after the
 * first of a result reuses a template: the document with the signed values of its file
 * references (`url`, `urlExpiresAt`) cut out. A new read signs those anew and splices them in
 * instead of loading, parsing, presenting and encoding a result of up to 16 MiB again.
 *
 * Invariant: a document assembled from a template is byte for byte the one presentResult
 * renders at that signing time. The template is made from presentResult's own output, and only
 * after checking that this output equals the stored result everywhere except those two fields of
 * file references, and that signing them here gives presentResult's values; otherwise there is no
 * template and every read renders in full (test/jobs/output-paging.test.ts compares both ways).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { toIso } from '../../lib/clock.js';
import { signedMediaUrl } from '../media/service.js';
import { presentResult, storedResult } from './snapshot.js';
import * as store from './store.js';

export interface OutputDocument {
  bytes: Buffer;
  sha256: string;
}

interface Template {
  /** Static bytes around the signed values: parts.length === slots.length + 1. */
  parts: Buffer[];
  slots: { ref: number; field: 'url' | 'urlExpiresAt' }[];
  /** The media id of each file reference. */
  refs: string[];
  /** The whole document when it has no file reference (it is then the same at every signing time). */
  constant?: OutputDocument;
}

/** One byte budget for documents and templates; the oldest entry goes first. */
const MAX_CACHED_BYTES = 96 * 1024 * 1024;
const cache = new Map<string, { size: number; value: OutputDocument | Template }>();
let cachedBytes = 0;

function remember(key: string, size: number, value: OutputDocument | Template): void {
  if (size > MAX_CACHED_BYTES / 2) return;
  cache.set(key, { size, value });
  cachedBytes += size;
  for (const [k, e] of cache) {
    if (cachedBytes <= MAX_CACHED_BYTES) break;
    cache.delete(k);
    cachedBytes -= e.size;
  }
}

function digest(bytes: Buffer): OutputDocument {
  return { bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** Same rule as presentResult: an object naming a media id and a MIME type is a file reference. */
function isFileReference(obj: Record<string, unknown>): boolean {
  return typeof obj.mediaId === 'string' && typeof obj.mimeType === 'string';
}

/**
 * True when `presented` equals `stored` except for `url` and `urlExpiresAt` of file references;
 * collects those presented file references in document order.
 */
function differsOnlyBySignatures(stored: unknown, presented: unknown, refs: Record<string, unknown>[]): boolean {
  if (Array.isArray(stored)) {
    if (!Array.isArray(presented) || presented.length !== stored.length) return false;
    return stored.every((v, i) => differsOnlyBySignatures(v, presented[i], refs));
  }
  if (stored === null || typeof stored !== 'object') return stored === presented;
  if (presented === null || typeof presented !== 'object' || Array.isArray(presented)) return false;
  const s = stored as Record<string, unknown>;
  const p = presented as Record<string, unknown>;
  const sKeys = Object.keys(s);
  const pKeys = Object.keys(p);
  if (isFileReference(s)) {
    refs.push(p);
    const own = (o: object, k: string) => Object.hasOwn(o, k);
    return pKeys.every((k) => k === 'url' || k === 'urlExpiresAt' || (own(s, k) && p[k] === s[k])) && own(p, 'url') && own(p, 'urlExpiresAt') && sKeys.every((k) => own(p, k));
  }
  if (pKeys.length !== sKeys.length) return false;
  return sKeys.every((k, i) => pKeys[i] === k && differsOnlyBySignatures(s[k], p[k], refs));
}

async function signatures(deps: Deps, workspaceId: string, refs: string[], signingTime: number): Promise<{ url: string; urlExpiresAt: string }[]> {
  const signed = await Promise.all(refs.map((id) => signedMediaUrl(deps, { id, workspaceId }, signingTime)));
  return signed.map((s) => ({ url: s.url, urlExpiresAt: toIso(s.expiresAt) }));
}

/** The template of a presented result, or undefined when the invariant above cannot be shown. */
async function makeTemplate(deps: Deps, workspaceId: string, stored: unknown, presented: unknown, signingTime: number): Promise<Template | undefined> {
  const refs: Record<string, unknown>[] = [];
  if (!differsOnlyBySignatures(stored, presented, refs)) return undefined;
  const ids = refs.map((r) => r.mediaId as string);
  const signed = await signatures(deps, workspaceId, ids, signingTime);
  if (refs.some((r, i) => r.url !== signed[i]!.url || r.urlExpiresAt !== signed[i]!.urlExpiresAt)) return undefined;
  // Each signed value becomes a token no result can hold by chance (random per template).
  const nonce = randomBytes(12).toString('hex');
  refs.forEach((r, i) => {
    r.url = `${nonce}:${i}:url`;
    r.urlExpiresAt = `${nonce}:${i}:urlExpiresAt`;
  });
  const text = Buffer.from(JSON.stringify(presented ?? null), 'utf8');
  // The caller may still render `presented` itself.
  refs.forEach((r, i) => Object.assign(r, signed[i]));
  if (refs.length === 0) return { parts: [text], slots: [], refs: ids, constant: digest(text) };
  const parts: Buffer[] = [];
  const slots: Template['slots'] = [];
  const marker = Buffer.from(`"${nonce}:`);
  let from = 0;
  for (let at = text.indexOf(marker); at >= 0; at = text.indexOf(marker, from)) {
    const close = text.indexOf(0x22, at + marker.length);
    const [ref, field] = text.subarray(at + marker.length, close).toString('latin1').split(':');
    if (field !== 'url' && field !== 'urlExpiresAt') return undefined;
    parts.push(text.subarray(from, at));
    slots.push({ ref: Number(ref), field });
    from = close + 1;
  }
  parts.push(text.subarray(from));
  return slots.length === 2 * refs.length ? { parts, slots, refs: ids } : undefined;
}

async function assemble(deps: Deps, workspaceId: string, t: Template, signingTime: number): Promise<OutputDocument> {
  if (t.constant) return t.constant;
  const signed = await signatures(deps, workspaceId, t.refs, signingTime);
  const values = t.slots.map((s) => Buffer.from(JSON.stringify(signed[s.ref]![s.field]), 'utf8'));
  const bytes = Buffer.concat(t.parts.flatMap((part, i) => (i < values.length ? [part, values[i]!] : [part])));
  return digest(bytes);
}

/**
 * The document of the job's result `resultHash` (its stored digest, shortened) signed at
 * `signingTime`. The result is loaded only when no template of it is cached; a stored result
 * that no longer has that digest is 409 OUTPUT_CHANGED.
 */
export async function outputDocument(deps: Deps, workspaceId: string, jobId: string, resultHash: string, signingTime: number): Promise<OutputDocument> {
  const docKey = `doc:${workspaceId}:${jobId}:${resultHash}:${signingTime}`;
  const cached = cache.get(docKey)?.value as OutputDocument | undefined;
  if (cached) return cached;
  const templateKey = `template:${workspaceId}:${jobId}:${resultHash}`;
  const template = cache.get(templateKey)?.value as Template | undefined;
  let doc: OutputDocument;
  if (template) doc = await assemble(deps, workspaceId, template, signingTime);
  else {
    const row = await store.findJob(deps.db, workspaceId, jobId);
    if (!row || (row.output_sha256 ?? 'none').slice(0, 24) !== resultHash) throw new AppError('OUTPUT_CHANGED');
    const stored = storedResult(row);
    const presented = await presentResult(deps, workspaceId, stored, signingTime);
    const made = await makeTemplate(deps, workspaceId, stored, presented, signingTime);
    if (made) {
      remember(templateKey, made.parts.reduce((n, p) => n + p.length, 0), made);
      doc = await assemble(deps, workspaceId, made, signingTime);
    } else doc = digest(Buffer.from(JSON.stringify(presented ?? null), 'utf8'));
    if (made?.constant) return doc;
  }
  if (!template?.constant) remember(docKey, doc.bytes.length, doc);
  return doc;
}
