/**
 * A workspace's own provider keys ("personal provider key" funding). Stored sealed with
 * AES-256-GCM under SECRET_KEY, bound to the row id (a sealed value copied to another row does not
 * open); never returned after being set. Setting a key again replaces it.
 */
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { findWorkspace } from '../accounts/store.js';
import * as store from './store.js';

export interface ProviderKeyInfo {
  id: string;
  workspaceId: string;
  provider: string;
  createdAt: number;
  updatedAt: number;
}

function aad(id: string): string {
  return `provider-key:${id}`;
}

export async function setProviderKey(deps: Deps, workspaceId: string, input: { provider: string; apiKey: string }): Promise<ProviderKeyInfo> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    if (!(await findWorkspace(trx, workspaceId))) throw new AppError('NOT_FOUND', { message: 'No such workspace.' });
    const fresh = { id: newId(), workspaceId, provider: input.provider, createdAt: now, updatedAt: now };
    // Insert first; on a conflict (an existing key, perhaps inserted concurrently) replace that row's
    // key, sealed again under that row's id.
    if (await store.insertProviderKey(trx, { ...fresh, sealedKey: deps.keyring.encrypt(input.apiKey, aad(fresh.id)) })) return fresh;
    const existing = (await store.findProviderKey(trx, workspaceId, input.provider))!;
    await store.updateProviderKey(trx, workspaceId, existing.id, deps.keyring.encrypt(input.apiKey, aad(existing.id)), now);
    return { id: existing.id, workspaceId, provider: input.provider, createdAt: existing.createdAt, updatedAt: now };
  });
}

/** The plaintext key of a workspace for a provider, for the provider adapter only. */
export async function readProviderKey(deps: Deps, workspaceId: string, provider: string): Promise<string | undefined> {
  const row = await store.findProviderKey(deps.db, workspaceId, provider);
  return row && deps.keyring.decrypt(row.sealedKey, aad(row.id));
}
