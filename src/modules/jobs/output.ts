/**
 * Complete job output (spec Rule 6): the whole public result as one JSON document served in
 * fragments of at most 8192 UTF-8 bytes that end on character boundaries. Every page of one
 * paginated read belongs to one byte-identical document: file URLs inside it are signed at the
 * read's fixed signing time, carried in the cursor. Cursors are signed (tampered → 400), each
 * lives OUTPUT_CURSOR_TTL_S from the page that issued it (older → 410; a read may take longer
 * than that, as long as no step between two pages does) and name the result they belong to
 * (changed → 409).
 */
import { CompiledQuery } from 'kysely';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { hmacSha256, safeEqual } from '../../lib/crypto.js';
import { toIso } from '../../lib/clock.js';
import type { OutputPageFields } from './output-body.js';
import { arg, prepared } from '../../db/prepared.js';
import { outputDocument } from './output-document.js';

export const FRAGMENT_BYTES = 8192;
export const MAX_RESULT_BYTES = 16 * 1024 * 1024;

interface OutputCursor {
  j: string; // job id
  h: string; // hash of the stored result
  o: number; // byte offset of the next fragment
  t: number; // signing time of file URLs (ms)
  i: number; // when this cursor was issued (ms): it lives OUTPUT_CURSOR_TTL_S from then
}

function encodeCursor(deps: Deps, c: OutputCursor): string {
  const payload = Buffer.from(JSON.stringify(c), 'utf8').toString('base64url');
  const mac = hmacSha256(deps.keyring.key('output-cursor'), payload).subarray(0, 18).toString('base64url');
  return `${payload}.${mac}`;
}

function decodeCursor(deps: Deps, jobId: string, cursor: string): OutputCursor {
  const [payload, mac, extra] = cursor.split('.');
  if (!payload || !mac || extra !== undefined) throw new AppError('INVALID_CURSOR');
  const expected = hmacSha256(deps.keyring.key('output-cursor'), payload).subarray(0, 18).toString('base64url');
  if (!safeEqual(mac, expected)) throw new AppError('INVALID_CURSOR');
  let c: OutputCursor;
  try {
    c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as OutputCursor;
  } catch {
    throw new AppError('INVALID_CURSOR');
  }
  if (c.j !== jobId || !Number.isSafeInteger(c.o) || c.o < 0) throw new AppError('INVALID_CURSOR');
  return c;
}

/** Moves `end` back so the fragment does not split a UTF-8 character. */
function characterBoundary(bytes: Buffer, end: number): number {
  while (end < bytes.length && end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return end;
}

/**
 * The job's result digest, from the index that holds it (migration 0006). SQLite would otherwise
 * look the row up by primary key and walk the overflow pages of a result of up to 16 MiB to
 * reach the digest behind it, on every page of a read. Both statements are compiled once
 * (prepared.ts): building a Kysely query on every page cost more than running it.
 */
const readHeadSqlite = prepared<{ output_sha256: string | null }>(() => ({
  compile: () => CompiledQuery.raw('select output_sha256 from jobs indexed by jobs_output_head_idx where id = ? and workspace_id = ?', [arg(0), arg(1)]) as CompiledQuery<{ output_sha256: string | null }>,
}));
const readHeadPostgres = prepared((db) => db.selectFrom('jobs').select(['output_sha256']).where('workspace_id', '=', arg(0)).where('id', '=', arg(1)));

async function readHead(deps: Deps, workspaceId: string, jobId: string): Promise<{ output_sha256: string | null } | undefined> {
  if (deps.caps.indexHints) return (await readHeadSqlite(deps.db, jobId, workspaceId)).rows[0];
  return (await readHeadPostgres.named(deps.db, deps.caps.namedStatements, workspaceId, jobId)).rows[0];
}

/** One page: its fields and its fragment, the document's bytes from offsetBytes (output-body.ts writes the body). */
export interface OutputPage extends OutputPageFields {
  fragment: Buffer;
}

export async function readOutput(deps: Deps, workspaceId: string, jobId: string, cursor: string | undefined): Promise<OutputPage> {
  const now = deps.clock.now();
  const ttlMs = deps.config.outputCursorTtlS * 1000;
  const prior = cursor === undefined ? undefined : decodeCursor(deps, jobId, cursor);
  // Identify the result by its stored digest; the document is rendered once per read (output-document.ts).
  const head = await readHead(deps, workspaceId, jobId);
  // The job must be in the caller's workspace before the cursor's age is told: another
  // workspace's job is 404 with any cursor of it, fresh or expired (decisions.md section 3).
  if (!head) throw new AppError('NOT_FOUND', { message: 'No such job in this workspace.' });
  if (prior && now - prior.i > ttlMs) throw new AppError('CURSOR_EXPIRED');
  const resultHash = (head.output_sha256 ?? 'none').slice(0, 24);
  if (prior && prior.h !== resultHash) throw new AppError('OUTPUT_CHANGED');
  const signingTime = prior?.t ?? now;
  const doc = await outputDocument(deps, workspaceId, jobId, resultHash, signingTime);
  const offset = prior?.o ?? 0;
  if (offset > doc.bytes.length) throw new AppError('INVALID_CURSOR');
  const end = characterBoundary(doc.bytes, Math.min(doc.bytes.length, offset + FRAGMENT_BYTES));
  const next: OutputCursor | null = end < doc.bytes.length ? { j: jobId, h: resultHash, o: end, t: signingTime, i: now } : null;
  return {
    jobId,
    fragment: doc.bytes.subarray(offset, end),
    offsetBytes: offset,
    totalBytes: doc.bytes.length,
    sha256: doc.sha256,
    // Until when this page's nextCursor may be used.
    snapshotExpiresAt: toIso(now + ttlMs),
    nextCursor: next ? encodeCursor(deps, next) : null,
  };
}
