/**
 * A workspace's own provider keys ("personal provider key" funding). Stored sealed with
 * AES-256-GCM under SECRET_KEY, bound to the row id; never returned after being set.
 */
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { findWorkspace } from '../accounts/store.js';

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
    const existing = await trx
      .selectFrom('provider_keys')
      .select(['id', 'created_at_ms'])
      .where('workspace_id', '=', workspaceId)
      .where('provider', '=', input.provider)
      .executeTakeFirst();
    const id = existing?.id ?? newId();
    const sealed = deps.keyring.encrypt(input.apiKey, aad(id));
    if (existing) {
      await trx.updateTable('provider_keys').set({ sealed_key: sealed, updated_at_ms: now }).where('id', '=', id).execute();
    } else {
      await trx
        .insertInto('provider_keys')
        .values({ id, workspace_id: workspaceId, provider: input.provider, sealed_key: sealed, created_at_ms: now, updated_at_ms: now })
        .execute();
    }
    return { id, workspaceId, provider: input.provider, createdAt: existing?.created_at_ms ?? now, updatedAt: now };
  });
}

/** The plaintext key of a workspace for a provider, for the provider adapter only. */
export async function readProviderKey(deps: Deps, workspaceId: string, provider: string): Promise<string | undefined> {
  const row = await deps.db
    .selectFrom('provider_keys')
    .select(['id', 'sealed_key'])
    .where('workspace_id', '=', workspaceId)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return row && deps.keyring.decrypt(row.sealed_key, aad(row.id));
}
