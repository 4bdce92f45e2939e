/**
 * What a succeeded Replicate prediction returned: its output bounded in size, the files it names
 * (URLs or data URIs) downloaded and checked like uploads, placed where the operation's result
 * keeps them, and what it consumed.
 */
import type { MediaKind } from '../operations/contract.js';
import type { OperationId } from '../operations/ids.js';
import type { Quantities } from '../operations/pricing.js';
import type { RetryPolicy } from './http.js';
import { checkProviderFile, downloadProviderFile, MAX_PROVIDER_FILE_BYTES } from './provider-files.js';
import type { AdapterContext } from './types.js';
import { ProviderError, type ProducedFile, type ProviderRun } from './types.js';

/**
 * Largest text a prediction's output may hold (the strings of its JSON, file URLs included): the
 * bound of a public job result. A larger output fails the job before anything is downloaded.
 */
export const MAX_OUTPUT_TEXT_BYTES = 16 * 1024 * 1024;

/** Where each operation's files go in its result (the contract owns the shape). */
const FILE_FIELDS: Partial<Record<OperationId, { field: string; list?: boolean; base: string; optional?: boolean }>> = {
  'image.generate': { field: 'images', list: true, base: 'image' },
  'headshot.generate': { field: 'images', list: true, base: 'headshot' },
  'background.remove': { field: 'image', base: 'cutout' },
  'video.generate': { field: 'video', base: 'video' },
  'music.generate': { field: 'audio', base: 'music' },
  'speech.generate': { field: 'audio', base: 'speech' },
  'three-d.generate': { field: 'glb', base: 'model' },
  'three-d.rig': { field: 'glb', base: 'rigged' },
  'voice.clone': { field: 'sample', base: 'sample', optional: true },
};

const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

/**
 * The files of a succeeded prediction's output, or undefined when the operation produces no
 * media. Consumed work is charged even when a file is unusable: the error carries the charge.
 */
export async function outputFiles(
  job: ProviderRun,
  output: unknown,
  predictSeconds: number,
  redact: (text: string) => string,
  download: (url: string) => Promise<Buffer>,
): Promise<ProducedFile[] | undefined> {
  const produces = job.operation.produces;
  try {
    checkOutputSize(output);
    return produces ? await resultFiles(job, produces, output, download) : undefined;
  } catch (err) {
    if (job.signal.aborted) throw job.signal.reason;
    if (err instanceof ProviderError) throw new ProviderError(err.code, redact(err.message), job.charge(usedQuantities(job, predictSeconds, 0)));
    throw err;
  }
}

/**
 * What a prediction consumed: its seconds, the images it returned, and the seconds of media or
 * characters of text the input asked for (a prediction makes what it was asked for).
 */
export function usedQuantities(job: ProviderRun, predictSeconds: number, images: number): Quantities {
  const asked = job.operation.quantities(job.input).maximum;
  const q: Quantities = { predictSeconds };
  if (asked.images !== undefined) q.images = images;
  if (asked.seconds !== undefined) q.seconds = asked.seconds;
  if (asked.characters !== undefined) q.characters = asked.characters;
  return q;
}

function checkOutputSize(output: unknown): void {
  let total = 0;
  const visit = (v: unknown, depth: number): void => {
    if (total > MAX_OUTPUT_TEXT_BYTES || depth > 32) return;
    if (typeof v === 'string') total += Buffer.byteLength(v, 'utf8');
    else if (Array.isArray(v)) for (const x of v) visit(x, depth + 1);
    else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) {
      total += Buffer.byteLength(k, 'utf8');
      visit(x, depth + 1);
    }
  };
  visit(output, 0);
  if (total > MAX_OUTPUT_TEXT_BYTES) throw new ProviderError('PROVIDER_ERROR', `The prediction output exceeds ${MAX_OUTPUT_TEXT_BYTES / 1024 / 1024} MiB.`);
}

/** File addresses in an output: a URL string, a list of them, or an object holding them (in order). */
export function outputUrls(output: unknown): string[] {
  const urls: string[] = [];
  const visit = (v: unknown, depth: number) => {
    if (depth > 4 || urls.length >= 64) return;
    if (typeof v === 'string') {
      if (/^(https?:|data:)/i.test(v)) urls.push(v);
    } else if (Array.isArray(v)) for (const x of v) visit(x, depth + 1);
    else if (typeof v === 'object' && v !== null) for (const x of Object.values(v)) visit(x, depth + 1);
  };
  visit(output, 0);
  return urls;
}

async function resultFiles(job: ProviderRun, produces: MediaKind, output: unknown, download: (url: string) => Promise<Buffer>): Promise<ProducedFile[]> {
  const place = FILE_FIELDS[job.operation.id] ?? { field: produces, base: produces };
  let urls = outputUrls(output);
  if (urls.length === 0) {
    if (place.optional) return [];
    throw new ProviderError('PROVIDER_ERROR', 'The prediction succeeded without returning a file.');
  }
  // Never more files than the run was priced for: a model that ignores num_outputs and returns
  // more images than asked fails the job (nothing of it is stored; its prediction time is charged).
  const asked = Math.max(1, num(job.input.count, 1));
  if (place.list && urls.length > asked) throw new ProviderError('PROVIDER_ERROR', `The prediction returned ${urls.length} files where ${asked} were asked for.`);
  urls = place.list ? urls : urls.slice(0, 1);
  const files: ProducedFile[] = [];
  for (const [i, url] of urls.entries()) {
    const bytes = await download(url);
    files.push(place.list ? await checkProviderFile(bytes, produces, place.field, `${place.base}-${i + 1}`, i) : await checkProviderFile(bytes, produces, place.field, place.base));
  }
  return files;
}

/** The bytes of one output file: a data URI decoded, a URL downloaded (the key only to the provider's own origin). */
export async function fetchFile(
  ctx: AdapterContext,
  baseUrl: string,
  url: string,
  headers: Record<string, string>,
  job: ProviderRun,
  timeoutMs: number,
  policy: RetryPolicy,
): Promise<Buffer> {
  if (/^data:/i.test(url)) {
    const m = /^data:[^,]*?(;base64)?,(.*)$/is.exec(url);
    if (!m) throw new ProviderError('PROVIDER_ERROR', 'The provider returned a malformed data URI.');
    let bytes: Buffer;
    try {
      bytes = m[1] ? Buffer.from(m[2]!, 'base64') : Buffer.from(decodeURIComponent(m[2]!), 'utf8');
    } catch {
      throw new ProviderError('PROVIDER_ERROR', 'The provider returned a malformed data URI.');
    }
    if (bytes.length > MAX_PROVIDER_FILE_BYTES) throw new ProviderError('PROVIDER_ERROR', 'The provider answer exceeds the size bound.');
    return bytes;
  }
  const { authorization } = headers;
  return downloadProviderFile(ctx, baseUrl, url, { ...(authorization ? { headers: { authorization } } : {}), signal: job.signal, timeoutMs, policy });
}
