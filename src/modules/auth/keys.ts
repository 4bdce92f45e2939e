/**
 * Creating and revoking API keys (operator side). A key and its workspace links are written in
 * one transaction; the secret is returned once and stored only as its SHA-256.
 */
import type { Deps } from '../../deps.js';
import { lockForUpdate, lockWorkspace } from '../../db/locking.js';
import { AppError } from '../../http/errors.js';
import { randomToken } from '../../lib/crypto.js';
import { isUuid, newId } from '../../lib/ids.js';
import * as accounts from '../accounts/store.js';
import type { BudgetCeilings } from '../accounts/types.js';
import { resolveLimits } from '../usage/plans.js';
import { isOperationId } from '../../operations/ids.js';
import { isValidRange } from '../../lib/ip-ranges.js';
import { isScope, TRANSPORTS, type Scope, type Transport } from './scopes.js';
import { userManagesWorkspace } from '../accounts/service.js';
import { hashSecret, KEY_SECRET_PREFIX, TEST_KEY_SECRET_PREFIX } from './service.js';
import { ensureTestTwin } from '../accounts/test-twins.js';
import type { Mode } from '../../lib/livemode.js';
import * as store from './store.js';
import type { ApiKey } from './types.js';

export interface CreateKeyInput {
  userId: string;
  workspaceIds: string[];
  scopes: Scope[];
  operations: string[];
  transports: Transport[];
  expiresAt?: number | null;
  ipRanges?: string[];
  budgets?: Partial<BudgetCeilings>;
  /** `live` (default) or `test` (decisions.md "Test mode"). */
  mode?: Mode;
}

/** A key includes 1 to 100 workspaces (GET /v1/workspaces lists at most 100). */
export const MAX_KEY_WORKSPACES = 100;

/** A new secret of a key of `mode`: its prefix, then 32 random bytes in base64url (43 characters). */
function newSecret(mode: Mode): string {
  return `${mode === 'test' ? TEST_KEY_SECRET_PREFIX : KEY_SECRET_PREFIX}${randomToken(32)}`;
}

/** What operators see of a secret: its mode's prefix and 7 random characters. */
function displayPrefix(secret: string): string {
  const prefix = secret.startsWith(TEST_KEY_SECRET_PREFIX) ? TEST_KEY_SECRET_PREFIX : KEY_SECRET_PREFIX;
  return secret.slice(0, prefix.length + 7);
}

/** Checks what the admin schema checks too, because the command line and tests call this directly. */
function validateInput(input: CreateKeyInput, now: number): void {
  const invalid = (message: string) => new AppError('INVALID_REQUEST', { message });
  if (input.workspaceIds.length === 0 || input.workspaceIds.length > MAX_KEY_WORKSPACES) {
    throw invalid(`A key includes 1 to ${MAX_KEY_WORKSPACES} workspaces.`);
  }
  const badIds = input.workspaceIds.filter((id) => !isUuid(id));
  if (badIds.length > 0) throw invalid(`Workspace ids must be UUIDs: ${badIds.join(', ')}`);
  const badScopes = input.scopes.filter((s) => !isScope(s));
  if (input.scopes.length === 0 || badScopes.length > 0) throw invalid(`A key needs at least one known scope${badScopes.length ? `; unknown: ${badScopes.join(', ')}` : ''}.`);
  const badTransports = input.transports.filter((t) => !(TRANSPORTS as readonly string[]).includes(t));
  if (input.transports.length === 0 || badTransports.length > 0) throw invalid('A key needs at least one transport: rest, mcp.');
  if (input.expiresAt != null && (!Number.isSafeInteger(input.expiresAt) || input.expiresAt <= now)) {
    throw invalid('expiresAt must be a time in the future.');
  }
}

export async function createKey(deps: Deps, input: CreateKeyInput): Promise<{ key: ApiKey; secret: string }> {
  const now = deps.clock.now();
  validateInput(input, now);
  const unknownOps = input.operations.filter((op) => !isOperationId(op));
  if (unknownOps.length > 0) throw new AppError('INVALID_REQUEST', { message: `Unknown operations: ${unknownOps.join(', ')}` });
  const badRanges = (input.ipRanges ?? []).filter((r) => !isValidRange(r));
  if (badRanges.length > 0) throw new AppError('INVALID_REQUEST', { message: `Invalid IP ranges: ${badRanges.join(', ')}` });
  const workspaceIds = [...new Set(input.workspaceIds.map((id) => id.toLowerCase()))].sort();

  // 32 random bytes (256 bits), base64url: 43 characters after the prefix. Only the SHA-256 is
  // stored; `prefix` keeps 7 of those characters so operators can tell keys apart.
  const mode = input.mode ?? 'live';
  const secret = newSecret(mode);
  const key: ApiKey = {
    id: newId(),
    userId: input.userId,
    prefix: displayPrefix(secret),
    scopes: [...new Set(input.scopes)],
    operations: [...new Set(input.operations)],
    transports: [...new Set(input.transports)],
    ipRanges: input.ipRanges ?? [],
    expiresAt: input.expiresAt ?? null,
    budgets: {
      dailyMillicents: input.budgets?.dailyMillicents ?? null,
      weeklyMillicents: input.budgets?.weeklyMillicents ?? null,
      monthlyMillicents: input.budgets?.monthlyMillicents ?? null,
    },
    workspaceIds,
    mode,
    createdAt: now,
    revokedAt: null,
    suspendedUntil: null,
  };

  await deps.db.transaction().execute(async (trx) => {
    const user = await accounts.findUser(trx, input.userId);
    if (!user) throw new AppError('NOT_FOUND', { message: 'No such user.' });
    for (const workspaceId of workspaceIds) {
      // Lock the workspace so concurrent creations cannot both pass the active-key limit.
      await lockWorkspace(trx, deps.caps, workspaceId);
      const ws = await accounts.findWorkspace(trx, workspaceId);
      if (!ws) throw new AppError('NOT_FOUND', { message: `No such workspace: ${workspaceId}` });
      if (!(await userManagesWorkspace(trx, input.userId, ws))) {
        throw new AppError('FORBIDDEN', { message: `The user neither owns nor administers workspace ${workspaceId}.` });
      }
      const limit = resolveLimits(ws).activeKeys;
      if ((await store.countActiveKeys(trx, workspaceId, now)) >= limit) {
        throw new AppError('ACTIVE_KEY_LIMIT', { message: `Workspace ${workspaceId} already has ${limit} active keys, the most its plan allows.` });
      }
      if (mode === 'test') await ensureTestTwin(trx, ws, deps.config.testCreditsMillicents, now);
    }
    await store.insertKey(trx, key, hashSecret(secret));
    await store.bumpAuthEpoch(trx);
  });
  deps.authCache.clear();
  return { key, secret };
}

export async function revokeKey(deps: Deps, keyId: string): Promise<ApiKey> {
  const key = await deps.db.transaction().execute(async (trx) => {
    const found = await store.findKey(trx, keyId);
    if (!found) throw new AppError('NOT_FOUND', { message: 'No such key.' });
    await store.markKeyRevoked(trx, keyId, deps.clock.now());
    await store.bumpAuthEpoch(trx);
    return (await store.findKey(trx, keyId))!;
  });
  deps.authCache.clear();
  return key;
}

export interface UpdateKeyInput {
  scopes?: Scope[];
  operations?: string[];
  transports?: Transport[];
  expiresAt?: number | null;
  ipRanges?: string[];
  budgets?: Partial<BudgetCeilings>;
}

/** Refuses changes of a revoked key: revocation is permanent, nothing about the key matters any more. */
async function changeableKey(deps: Deps, trx: Parameters<typeof store.findKey>[0], keyId: string): Promise<ApiKey> {
  // Locked (PostgreSQL): two rolls, or a roll and a revoke, of one key run one after the other.
  await lockForUpdate(deps.caps, trx.selectFrom('api_keys').select('id').where('id', '=', keyId)).executeTakeFirst();
  const found = await store.findKey(trx, keyId);
  if (!found) throw new AppError('NOT_FOUND', { message: 'No such key.' });
  if (found.revokedAt !== null) throw new AppError('CONFLICT', { message: 'The key is revoked; a revoked key cannot be changed or rolled.' });
  return found;
}

/**
 * Changes what a key may do (any of scopes, operations, transports, expiry, IP ranges, budgets;
 * lists are replaced, budgets merged per period with null removing one). Takes effect on every
 * process within one auth-epoch poll; this process at once.
 */
export async function updateKey(deps: Deps, keyId: string, input: UpdateKeyInput): Promise<ApiKey> {
  const now = deps.clock.now();
  const invalid = (message: string) => new AppError('INVALID_REQUEST', { message });
  if (input.scopes && (input.scopes.length === 0 || input.scopes.some((s) => !isScope(s)))) throw invalid('A key needs at least one known scope.');
  if (input.transports && (input.transports.length === 0 || input.transports.some((t) => !(TRANSPORTS as readonly string[]).includes(t)))) {
    throw invalid('A key needs at least one transport: rest, mcp.');
  }
  const unknownOps = (input.operations ?? []).filter((op) => !isOperationId(op));
  if (unknownOps.length > 0) throw invalid(`Unknown operations: ${unknownOps.join(', ')}`);
  const badRanges = (input.ipRanges ?? []).filter((r) => !isValidRange(r));
  if (badRanges.length > 0) throw invalid(`Invalid IP ranges: ${badRanges.join(', ')}`);
  if (input.expiresAt != null && (!Number.isSafeInteger(input.expiresAt) || input.expiresAt <= now)) throw invalid('expiresAt must be a time in the future.');
  const key = await deps.db.transaction().execute(async (trx) => {
    await changeableKey(deps, trx, keyId);
    await store.updateKey(trx, keyId, {
      ...(input.scopes ? { scopes: [...new Set(input.scopes)] } : {}),
      ...(input.operations ? { operations: [...new Set(input.operations)] } : {}),
      ...(input.transports ? { transports: [...new Set(input.transports)] } : {}),
      ...(input.ipRanges ? { ipRanges: input.ipRanges } : {}),
      ...(input.expiresAt !== undefined ? { expiresAt: input.expiresAt } : {}),
      ...(input.budgets ? { budgets: input.budgets } : {}),
    });
    await store.bumpAuthEpoch(trx);
    return (await store.findKey(trx, keyId))!;
  });
  deps.authCache.clear();
  return key;
}

/** The longest overlap a roll may give the replaced secret: 30 days. */
export const MAX_ROLL_OVERLAP_SECONDS = 30 * 24 * 3600;

/**
 * Rolls a key's secret: a new secret (returned once, stored as its hash) becomes current; the
 * replaced one keeps working for `overlapSeconds` (0: refused at once), then 401. A secret an
 * earlier roll left in its overlap stops at once: a key has at most two secrets.
 */
export async function rollKey(deps: Deps, keyId: string, overlapSeconds: number): Promise<{ key: ApiKey; secret: string }> {
  if (!Number.isSafeInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_ROLL_OVERLAP_SECONDS) {
    throw new AppError('INVALID_REQUEST', { message: `overlapSeconds must be a whole number from 0 to ${MAX_ROLL_OVERLAP_SECONDS}.` });
  }
  const now = deps.clock.now();
  let secret = '';
  const key = await deps.db.transaction().execute(async (trx) => {
    // The new secret keeps the key's mode (its prefix says which).
    secret = newSecret((await changeableKey(deps, trx, keyId)).mode);
    const previousHash = (await store.findSecretHash(trx, keyId))!;
    await store.rollKeySecret(trx, keyId, { secretHash: hashSecret(secret), prefix: displayPrefix(secret), previousHash, previousUntil: now + overlapSeconds * 1000 });
    await store.bumpAuthEpoch(trx);
    return (await store.findKey(trx, keyId))!;
  });
  deps.authCache.clear();
  return { key, secret };
}
