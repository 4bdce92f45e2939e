/**
 * Idempotency of POST /v1/runs and POST /v1/jobs/{id}/retry (decisions.md section 1). Scope:
 * (API key, workspace, Idempotency-Key); kept 24 h. The first request claims the key (`in_flight`);
 * its successful response is stored in the same transaction as its side effects, so a replay
 * returns exactly what the first request answered. A claim left in flight by a process that died
 * is given up after IN_FLIGHT_TTL_MS. A request that fails before any side effect
 * releases the claim, so the client may retry after fixing the cause (e.g. adding credits).
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database, Row } from '../../db/schema.js';
import { AppError } from '../../http/errors.js';
import { sha256Hex } from '../../lib/crypto.js';
import { inWrite } from '../../db/group-commit.js';
import { arg, prepared } from '../../db/prepared.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/**
 * How long a claim may stay in flight. A synchronous run answers within its timeout (20 s at
 * most) and a retry's claim lasts one admission, so a claim older than this was abandoned by a
 * process that died mid-request: the key is then free again (like an expired one) instead of
 * answering 409 IDEMPOTENCY_IN_PROGRESS for a day. Completing a claim extends it to 24 h from
 * the request.
 */
export const IN_FLIGHT_TTL_MS = 10 * 60_000;

export interface IdempotencyScope {
  keyId: string;
  workspaceId: string;
  idemKey: string;
}

export type Claim = { kind: 'new' } | { kind: 'replay'; statusCode: number; body: unknown };

/** JSON with object keys sorted, so equal inputs hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

export function requestHash(endpoint: string, body: unknown): string {
  return sha256Hex(`${endpoint}\n${canonicalJson(body)}`);
}

/** The longest Idempotency-Key (spec: 1 to 128 characters). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 128;

/**
 * The Idempotency-Key of a run or retry. Missing (or empty, which says nothing) is 400
 * IDEMPOTENCY_KEY_REQUIRED; a key that was given but is longer than 128 characters is a malformed
 * header, 400 INVALID_REQUEST (decisions.md section 3), with `details.header` naming it.
 */
export function validateIdempotencyKey(header: string | string[] | undefined): string {
  if (typeof header !== 'string' || header.length < 1) throw new AppError('IDEMPOTENCY_KEY_REQUIRED');
  if (header.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new AppError('INVALID_REQUEST', {
      message: `The Idempotency-Key header must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters (it has ${header.length}).`,
      details: { header: 'Idempotency-Key', maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
    });
  }
  return header;
}

/** True for the refusal of an over-long Idempotency-Key (it costs 1 usage point, like a missing one). */
export function isIdempotencyKeyRefusal(err: AppError): boolean {
  return err.code === 'IDEMPOTENCY_KEY_REQUIRED' || (err.code === 'INVALID_REQUEST' && err.details?.header === 'Idempotency-Key');
}

function where(scope: IdempotencyScope) {
  return (qb: any) => qb.where('key_id', '=', scope.keyId).where('workspace_id', '=', scope.workspaceId).where('idem_key', '=', scope.idemKey);
}

/** Claims the key, or returns the stored response to replay; 409 on conflict or in-flight. */
export async function claim(deps: Deps, scope: IdempotencyScope, hash: string): Promise<Claim> {
  const now = deps.clock.now();
  return inWrite(deps, (db) => claimIn(db, scope, hash, now));
}

const claimQuery = prepared((db) =>
  db
    .insertInto('idempotency_keys')
    .values({
      key_id: arg(0),
      workspace_id: arg(1),
      idem_key: arg(2),
      request_hash: arg(3),
      state: 'in_flight',
      status_code: null,
      response_json: null,
      created_at_ms: arg(4),
      expires_at_ms: arg(5),
    })
    .onConflict((oc) => oc.columns(['key_id', 'workspace_id', 'idem_key']).doNothing())
    .returning('key_id'),
);

const completeQuery = prepared((db) =>
  db
    .updateTable('idempotency_keys')
    .set({ state: 'done', status_code: arg(0), response_json: arg(1), expires_at_ms: sql<number>`created_at_ms + ${sql.lit(IDEMPOTENCY_TTL_MS)}` })
    .where('key_id', '=', arg(2))
    .where('workspace_id', '=', arg(3))
    .where('idem_key', '=', arg(4))
    .where('state', '=', 'in_flight'),
);

/** A stored Idempotency-Key as weighed against a request (the columns both admission paths read). */
export interface StoredKey {
  hash: string;
  state: string;
  statusCode: number | string | null;
  response: string | null;
  expiresAt: number;
}

/**
 * What a stored Idempotency-Key means for a request with body hash `hash`: `expired` (the key is
 * free again; the caller replaces it), or the response to replay; 409 IDEMPOTENCY_CONFLICT for
 * another body, 409 IDEMPOTENCY_IN_PROGRESS while the first request runs. The one rule of both
 * admission paths (claimIn here, runs/admission-batch.ts).
 */
export function weighStoredKey(stored: StoredKey, hash: string, now: number): { kind: 'expired' } | Extract<Claim, { kind: 'replay' }> {
  if (Number(stored.expiresAt) <= now) return { kind: 'expired' };
  if (stored.hash !== hash) throw new AppError('IDEMPOTENCY_CONFLICT');
  if (stored.state !== 'done') throw new AppError('IDEMPOTENCY_IN_PROGRESS', { retryAfter: 1 });
  return { kind: 'replay', statusCode: Number(stored.statusCode), body: JSON.parse(stored.response as string) };
}

/**
 * The row of a key whose response is stored at once (a queued run admitted in a batch, whose
 * response is known before its transaction commits): what claim() then complete() leave.
 */
export function storedResponseRow(scope: IdempotencyScope, hash: string, statusCode: number, responseJson: string, now: number): Row<'idempotency_keys'> {
  return {
    key_id: scope.keyId,
    workspace_id: scope.workspaceId,
    idem_key: scope.idemKey,
    request_hash: hash,
    state: 'done',
    status_code: statusCode,
    response_json: responseJson,
    created_at_ms: now,
    expires_at_ms: now + IDEMPOTENCY_TTL_MS,
  };
}

/** The columns of storedResponseRow, in its order (batched inserts name them). */
export const IDEMPOTENCY_COLUMNS = Object.keys(storedResponseRow({ keyId: '', workspaceId: '', idemKey: '' }, '', 0, '', 0)) as (keyof Row<'idempotency_keys'>)[];

/**
 * claim() inside the caller's transaction, for a request whose side effects and stored response
 * commit in that same transaction: a refusal rolls the claim back with everything else.
 */
export async function claimIn(trx: Kysely<Database>, scope: IdempotencyScope, hash: string, now: number): Promise<Claim> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const [inserted] = (await claimQuery(trx, scope.keyId, scope.workspaceId, scope.idemKey, hash, now, now + IN_FLIGHT_TTL_MS)).rows;
    if (inserted) return { kind: 'new' };
    const row = await where(scope)(trx.selectFrom('idempotency_keys').selectAll()).executeTakeFirst();
    if (!row) continue;
    const weighed = weighStoredKey({ hash: row.request_hash, state: row.state, statusCode: row.status_code, response: row.response_json, expiresAt: Number(row.expires_at_ms) }, hash, now);
    if (weighed.kind === 'replay') return weighed;
    await where(scope)(trx.deleteFrom('idempotency_keys')).where('expires_at_ms', '<=', now).execute();
  }
  throw new AppError('IDEMPOTENCY_IN_PROGRESS', { retryAfter: 1 });
}

/** Stores the response, in the transaction that made the side effects it reports. */
export async function complete(trx: Transaction<Database>, scope: IdempotencyScope, statusCode: number, body: unknown): Promise<void> {
  await completeQuery(trx, statusCode, JSON.stringify(body), scope.keyId, scope.workspaceId, scope.idemKey);
}

/** Gives the key back after a failure with no side effects. */
export async function release(deps: Deps, scope: IdempotencyScope): Promise<void> {
  await inWrite(deps, (db) => where(scope)(db.deleteFrom('idempotency_keys')).where('state', '=', 'in_flight').execute());
}

export async function purgeExpired(deps: Deps): Promise<void> {
  await deps.db.deleteFrom('idempotency_keys').where('expires_at_ms', '<=', deps.clock.now()).execute();
}

/** What an Idempotency-Key of a key and workspace was used for (GET /v1/runs/lookup). */
export interface IdempotencyRecord {
  idempotencyKey: string;
  /** completed: the response is stored; in_progress: the first request is still running. */
  state: 'completed' | 'in_progress';
  statusCode: number | null;
  jobId: string | null;
  response: Record<string, unknown> | null;
  createdAt: string;
  expiresAt: string;
}

/**
 * The record of an Idempotency-Key in its scope (the key and workspace that used it), or 404
 * NOT_FOUND when it was never used there or has expired (24 h after the request; an in-flight
 * claim abandoned by a dead process expires sooner, see IN_FLIGHT_TTL_MS). Another key's or
 * workspace's use of the same string is never visible.
 */
export async function lookup(deps: Deps, scope: IdempotencyScope): Promise<IdempotencyRecord> {
  const row = await where(scope)(deps.db.selectFrom('idempotency_keys').selectAll()).executeTakeFirst();
  if (!row || Number(row.expires_at_ms) <= deps.clock.now()) throw new AppError('NOT_FOUND', { message: 'No request with this Idempotency-Key in the last 24 hours for this key and workspace.' });
  const response = row.state === 'done' && row.response_json ? (JSON.parse(row.response_json as string) as Record<string, unknown>) : null;
  return {
    idempotencyKey: scope.idemKey,
    state: row.state === 'done' ? 'completed' : 'in_progress',
    statusCode: row.state === 'done' ? Number(row.status_code) : null,
    jobId: typeof response?.jobId === 'string' ? response.jobId : null,
    response,
    createdAt: new Date(Number(row.created_at_ms)).toISOString(),
    expiresAt: new Date(Number(row.expires_at_ms)).toISOString(),
  };
}
