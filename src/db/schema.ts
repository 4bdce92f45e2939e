/**
 * Table types for Kysely. Portable columns only: UUIDs as text, money as integer millicents,
 * times as epoch milliseconds (`*_at_ms`), JSON as text, flags as 0/1 integers.
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  created_at_ms: number;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  created_at_ms: number;
}

export interface OrganizationMembersTable {
  organization_id: string;
  user_id: string;
  role: 'owner' | 'admin' | 'member';
  created_at_ms: number;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  plan: string;
  owner_user_id: string | null;
  organization_id: string | null;
  /** JSON object of per-limit overrides (pointsPerMinute, pointsPerMonth, …). */
  limits_json: string;
  budget_daily_mc: number | null;
  budget_weekly_mc: number | null;
  budget_monthly_mc: number | null;
  created_at_ms: number;
  updated_at_ms: number;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  /** SHA-256 hex of the whole secret; the secret itself is never stored. */
  secret_hash: string;
  /** The first characters of the secret, for operators to recognise a key. */
  prefix: string;
  scopes_json: string;
  operations_json: string;
  transports_json: string;
  ip_ranges_json: string;
  expires_at_ms: number | null;
  budget_daily_mc: number | null;
  budget_weekly_mc: number | null;
  budget_monthly_mc: number | null;
  created_at_ms: number;
  revoked_at_ms: number | null;
  suspended_until_ms: number | null;
}

export interface ApiKeyWorkspacesTable {
  key_id: string;
  workspace_id: string;
}

export interface CreditAllocationsTable {
  id: string;
  workspace_id: string;
  amount_mc: number;
  remaining_mc: number;
  expires_at_ms: number | null;
  provenance: string;
  created_at_ms: number;
}

export interface CreditTransactionsTable {
  id: string;
  workspace_id: string;
  /** purchase, usage, expiration, adjustment. */
  type: string;
  amount_mc: number;
  allocation_id: string | null;
  key_id: string | null;
  tool_slug: string | null;
  job_id: string | null;
  execution_origin: string | null;
  created_at_ms: number;
}

export interface CreditHoldsTable {
  id: string;
  workspace_id: string;
  job_id: string;
  key_id: string | null;
  amount_mc: number;
  created_at_ms: number;
  released_at_ms: number | null;
}

export interface UsageCountersTable {
  workspace_id: string;
  window_kind: 'minute' | 'month';
  window_start_ms: number;
  used: number;
}

export interface DomainsTable {
  workspace_id: string;
  hostname: string;
  status: 'pending' | 'verified';
  verification_token: string;
  verified_method: string | null;
  verified_at_ms: number | null;
  created_at_ms: number;
}

export interface ProviderKeysTable {
  id: string;
  workspace_id: string;
  provider: string;
  /** AES-256-GCM under SECRET_KEY, bound to the row id. */
  sealed_key: string;
  created_at_ms: number;
  updated_at_ms: number;
}

/** Counters that tell every process of a deployment to drop cached state (keys, memberships). */
export interface CacheEpochsTable {
  name: string;
  epoch: number;
}

export interface Database {
  users: UsersTable;
  organizations: OrganizationsTable;
  organization_members: OrganizationMembersTable;
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  api_key_workspaces: ApiKeyWorkspacesTable;
  credit_allocations: CreditAllocationsTable;
  credit_transactions: CreditTransactionsTable;
  credit_holds: CreditHoldsTable;
  usage_counters: UsageCountersTable;
  domains: DomainsTable;
  provider_keys: ProviderKeysTable;
  cache_epochs: CacheEpochsTable;
}

export type Row<T extends keyof Database> = Selectable<Database[T]>;
export type NewRow<T extends keyof Database> = Insertable<Database[T]>;
export type RowUpdate<T extends keyof Database> = Updateable<Database[T]>;
// Generated is re-exported for later tables with database defaults.
export type { Generated };
