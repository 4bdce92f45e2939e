/**
 * Table types for Kysely. Portable columns only: UUIDs as text, money as integer millicents,
 * times as epoch milliseconds (`*_at_ms`), JSON as text, flags as 0/1 integers.
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { JobStatus, JobsTable, JobVersionsTable, IdempotencyKeysTable, EventsTable, MediaTable, VoicesTable, WebhooksTable, DeliveryStatus, WebhookDeliveriesTable, NotificationsTable, StreamSlotsTable, McpStreamSlotsTable, ConsoleSignInLinksTable, ConsoleSessionsTable, WorkspaceTotalsTable } from './schema-work.js';

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
  /** Spendable credits below which `credits.low` is raised; null: off (migration 0012). */
  low_credits_mc: number | null;
  created_at_ms: number;
  updated_at_ms: number;
  /** Set on a test twin only: the live workspace it belongs to (migration 0016, lib/livemode.ts). */
  live_workspace_id: Generated<string | null>;
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
  /** SHA-256 hex of the secret a roll replaced; accepted until previous_secret_expires_at_ms (migration 0011). */
  previous_secret_hash: Generated<string | null>;
  previous_secret_expires_at_ms: Generated<number | null>;
  /** `live` or `test` (migration 0016): a test key works in its workspaces' test twins (lib/livemode.ts). */
  mode: Generated<'live' | 'test'>;
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
  /** When the expiry was processed; what remains afterwards backs holds admitted before expiry. */
  expiry_settled_at_ms: Generated<number | null>;
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
  /** Operator adjustments only (migration 0011): why, and where the money came from or went. */
  reason: Generated<string | null>;
  provenance: Generated<string | null>;
  /** The operation a job's entry paid for (migration 0015); null for entries of no job. */
  operation_id: Generated<string | null>;
}

/** Usage points and 429s per workspace, span, bucket, key and operation (migration 0015; usage/history.ts). */
export interface UsageHistoryTable {
  workspace_id: string;
  /** minute, hour or day. */
  span: string;
  bucket_ms: number;
  key_id: string;
  operation: string;
  /** `points`, or `429:<details.limit>`. */
  kind: string;
  count: number;
}

/** The ledger summed per workspace, UTC hour, kind and attribution (migration 0015; modules/costs). */
export interface CostRollupsTable {
  workspace_id: string;
  /** 'hour' or 'day': every ledger entry is counted once in each. */
  span: string;
  bucket_ms: number;
  /** purchase, usage, expiration, refund (adjustment > 0), debit (adjustment < 0). */
  kind: string;
  /** '' when the entries have none. */
  operation_id: string;
  key_id: string;
  execution_origin: string;
  amount_mc: number;
  entries: number;
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

/** The work tables (jobs, their outputs and notifications): schema-work.ts. */
export type { JobStatus, JobsTable, JobVersionsTable, IdempotencyKeysTable, EventsTable, MediaTable, VoicesTable, WebhooksTable, DeliveryStatus, WebhookDeliveriesTable, NotificationsTable, StreamSlotsTable, McpStreamSlotsTable, ConsoleSignInLinksTable, ConsoleSessionsTable, WorkspaceTotalsTable } from './schema-work.js';

export interface Database {
  users: UsersTable;
  organizations: OrganizationsTable;
  organization_members: OrganizationMembersTable;
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  api_key_workspaces: ApiKeyWorkspacesTable;
  credit_allocations: CreditAllocationsTable;
  credit_transactions: CreditTransactionsTable;
  cost_rollups: CostRollupsTable;
  usage_history: UsageHistoryTable;
  credit_holds: CreditHoldsTable;
  usage_counters: UsageCountersTable;
  domains: DomainsTable;
  provider_keys: ProviderKeysTable;
  cache_epochs: CacheEpochsTable;
  jobs: JobsTable;
  job_versions: JobVersionsTable;
  idempotency_keys: IdempotencyKeysTable;
  events: EventsTable;
  media: MediaTable;
  voices: VoicesTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  notifications: NotificationsTable;
  stream_slots: StreamSlotsTable;
  mcp_stream_slots: McpStreamSlotsTable;
  console_sign_in_links: ConsoleSignInLinksTable;
  console_sessions: ConsoleSessionsTable;
  workspace_totals: WorkspaceTotalsTable;
}

export type Row<T extends keyof Database> = Selectable<Database[T]>;
export type NewRow<T extends keyof Database> = Insertable<Database[T]>;
export type RowUpdate<T extends keyof Database> = Updateable<Database[T]>;
// Generated is re-exported for later tables with database defaults.
export type { Generated };
