/**
 * Table types for Kysely (schema.ts has the conventions): the work tables, jobs and what they
 * produce and notify (versions, idempotency keys, events, media, voices, webhooks and deliveries,
 * notifications, stream slots), and the console's sign-in tables.
 */
import type { Generated } from 'kysely';

/** The job statuses; their meaning and the changes between them: modules/jobs/states.ts. */
export type JobStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled';

export interface JobsTable {
  id: string;
  workspace_id: string;
  key_id: string | null;
  operation_id: string;
  tool_slug: string;
  status: JobStatus;
  execution_origin: string | null;
  /** 'credits' or 'provider_key' (a workspace's own provider key pays). */
  funding: string;
  input_json: string;
  /** The complete public result (JSON text) once there is one. */
  output_json: string | null;
  /** SHA-256 of output_json: identifies the result without loading it. */
  output_sha256: string | null;
  progress: number;
  /** Consumed cost, cumulative over attempts. */
  cost_mc: number;
  /** Bounded maximum cost reserved for the current attempt. */
  max_cost_mc: number;
  error_code: string | null;
  /** Per-job sequence, +1 on every visible change (SSE ids, event versions). */
  version: number;
  attempt: number;
  steps_total: number;
  steps_done: number;
  /** Private worker checkpoint state; never returned. */
  checkpoint_json: string | null;
  created_at_ms: number;
  started_at_ms: number | null;
  completed_at_ms: number | null;
  updated_at_ms: number;
  run_after_ms: number;
  /** Fencing token: incremented on every claim; writes by a worker must present the current one. */
  lease_token: number;
  lease_owner: string | null;
  lease_expires_at_ms: number | null;
  recoveries: number;
}

export interface JobVersionsTable {
  job_id: string;
  version: number;
  snapshot_json: string;
  created_at_ms: number;
}

export interface IdempotencyKeysTable {
  key_id: string;
  workspace_id: string;
  idem_key: string;
  request_hash: string;
  state: 'in_flight' | 'done';
  status_code: number | null;
  response_json: string | null;
  created_at_ms: number;
  expires_at_ms: number;
}

export interface EventsTable {
  id: string;
  workspace_id: string;
  type: string;
  data_json: string;
  created_at_ms: number;
  /** PostgreSQL only (xid8, set by the database): the writing transaction, the feed's position. */
  tx_id: Generated<string>;
}

/** A media item of a workspace; the bytes are in the blob store under `storage_key`. */
export interface MediaTable {
  id: string;
  workspace_id: string;
  name: string;
  mime_type: string;
  /** image, audio, video, model or document. */
  kind: string;
  size_bytes: number;
  /** Hex SHA-256 of the stored bytes. */
  sha256: string;
  storage_key: string;
  /** The job that produced it; null for uploads. */
  job_id: string | null;
  created_at_ms: number;
}

/**
 * A workspace voice made by voice.clone (issue 37): its reference audio (a media item of the same
 * workspace) with that item's sha256, the provider and model that cloned it and the provider's own
 * id of the clone. Soft-deleted: `deleted_at_ms` is set by DELETE /v1/voices/{id}.
 */
export interface VoicesTable {
  id: string;
  workspace_id: string;
  name: string;
  reference_media_id: string;
  reference_sha256: string;
  provider: string;
  model: string | null;
  provider_voice_id: string | null;
  /** The voice.clone job that made it (unique). */
  job_id: string;
  created_at_ms: number;
  deleted_at_ms: number | null;
}

/** A workspace's webhook endpoint; the signing secret is stored encrypted (Keyring). */
export interface WebhooksTable {
  id: string;
  workspace_id: string;
  url: string;
  /** Lower-cased hostname of `url`: the verified domain it needs. */
  hostname: string;
  /** JSON array of subscribed event types. */
  event_types_json: string;
  enabled: number;
  secret_enc: string;
  created_at_ms: number;
  updated_at_ms: number;
  revoked_at_ms: number | null;
}

export type DeliveryStatus = 'pending' | 'delivering' | 'succeeded' | 'failed';

/** One event for one webhook: its attempts, schedule and lease. */
export interface WebhookDeliveriesTable {
  id: string;
  workspace_id: string;
  webhook_id: string;
  event_id: string;
  status: DeliveryStatus;
  attempts: number;
  replay_count: number;
  last_status_code: number | null;
  last_error_code: string | null;
  next_attempt_at_ms: number;
  lease_token: number;
  lease_owner: string | null;
  lease_expires_at_ms: number | null;
  created_at_ms: number;
  updated_at_ms: number;
  delivered_at_ms: number | null;
}

/** Capped account notifications (for example repeated webhook failures), read by operators. */
export interface NotificationsTable {
  id: string;
  workspace_id: string;
  kind: string;
  /** What the notification is about (a webhook id, an allocation id, `workspace:key`, …); with kind and day, the cap. */
  subject_id: string;
  /** UTC day, YYYY-MM-DD: the day of the notification, or the day that names an alert's period (src/modules/alerts/). */
  day: string;
  message: string;
  details_json: string;
  created_at_ms: number;
}

/** An open SSE stream, counted against the workspace's plan limit by every API process. */
export interface StreamSlotsTable {
  id: string;
  workspace_id: string;
  key_id: string;
  job_id: string;
  expires_at_ms: number;
}

/** A standing MCP stream (GET /mcp) of a key, in any API process; counts while expires_at_ms is ahead. */
export interface McpStreamSlotsTable {
  id: string;
  key_id: string;
  expires_at_ms: number;
}

/** One-time console sign-in links (migration 0014); the token is stored only as its SHA-256. */
export interface ConsoleSignInLinksTable {
  id: string;
  token_hash: string;
  user_id: string;
  created_at_ms: number;
  expires_at_ms: number;
  used_at_ms: number | null;
}

/** Console browser sessions (migration 0014); the cookie's token is stored only as its SHA-256. */
export interface ConsoleSessionsTable {
  id: string;
  token_hash: string;
  user_id: string;
  created_at_ms: number;
  last_seen_at_ms: number;
  /** The absolute end of the session, whatever its activity. */
  expires_at_ms: number;
  revoked_at_ms: number | null;
}

/** Waiting and running jobs and open holds of a workspace, kept by triggers (migration 0006; SQLite only). */
export interface WorkspaceTotalsTable {
  workspace_id: string;
  pending_jobs: number;
  processing_jobs: number;
  open_hold_mc: number;
}
