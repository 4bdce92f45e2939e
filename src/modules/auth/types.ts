/** API keys and the authorization context of a request. */
import type { BudgetCeilings, Workspace } from '../accounts/types.js';
import type { Mode } from '../../lib/livemode.js';
import type { Scope, Transport } from './scopes.js';

export interface ApiKey {
  id: string;
  userId: string;
  prefix: string;
  scopes: Scope[];
  operations: string[];
  transports: Transport[];
  ipRanges: string[];
  expiresAt: number | null;
  budgets: BudgetCeilings;
  workspaceIds: string[];
  /** `test`: works in its workspaces' test twins, on the simulated provider (lib/livemode.ts). */
  mode: Mode;
  createdAt: number;
  revokedAt: number | null;
  suspendedUntil: number | null;
  /** Until when the secret a roll replaced is still accepted (null or absent: no such secret). */
  previousSecretExpiresAt?: number | null;
  /**
   * Set only on the copy of a key found by its previous (rolled) secret: that secret is refused
   * from this instant on. Checked at every use, so a cached copy stops working on time.
   */
  rolledSecretUntil?: number;
}

/** Set on every authenticated request: who calls, for which workspace, with what rights. */
export interface AuthContext {
  key: ApiKey;
  workspace: Workspace;
  role: 'owner' | 'admin';
  transport: Transport;
}
