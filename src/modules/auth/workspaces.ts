/** The workspaces a key may use right now: included in the key and still managed by its owner. */
import type { Deps } from '../../deps.js';
import { findWorkspaces } from '../accounts/store.js';
import { managingRole } from './service.js';
import type { ApiKey } from './types.js';

export interface KeyWorkspace {
  id: string;
  name: string;
  organizationId: string | null;
  role: 'owner' | 'admin';
  plan: string;
}

export async function listKeyWorkspaces(deps: Deps, key: ApiKey): Promise<KeyWorkspace[]> {
  const items: KeyWorkspace[] = [];
  for (const ws of await findWorkspaces(deps.db, key.workspaceIds.slice(0, 100))) {
    const role = await managingRole(deps, key.userId, ws);
    if (role) items.push({ id: ws.id, name: ws.name, organizationId: ws.organizationId, role, plan: ws.plan });
  }
  return items;
}
