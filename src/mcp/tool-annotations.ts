/**
 * What each MCP tool tells an agent before it calls it: a human title and the four behaviour
 * hints of the MCP specification (ToolAnnotations). They must be true of the REST route the
 * tool replays onto:
 *
 * - readOnlyHint: the call changes nothing in the workspace (reads, and estimates, which reserve
 *   nothing). Usage points are still charged; they are request accounting, not state.
 * - destructiveHint (only meaningful when not read-only): the call can undo or overwrite something
 *   that existed (cancelling a job, changing or revoking a webhook, replacing its secret). Runs,
 *   retries, uploads and creations only add.
 * - idempotentHint: calling again with the same arguments has no further effect. Runs and retries
 *   are idempotent only with the same idempotencyKey; since it is optional (the server draws one
 *   when it is missing) they are not marked idempotent. Cancel, update and revoke are.
 * - openWorldHint: the call reaches outside the service (providers, fetched web pages, scanned
 *   sites, webhook receivers).
 *
 * A test keeps this table complete: every tool has an entry.
 */
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';

type Hints = Required<Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>>;

const READ: Hints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** Adds something new each call (a job that spends credits, a media item, a webhook). */
const ADD: Hints = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
/** Paid work on a provider or the open web. */
const RUN: Hints = { ...ADD, openWorldHint: true };

const TABLE: Record<string, { title: string; hints: Hints }> = {
  service_workspaces_list: { title: 'List workspaces', hints: READ },
  service_usage_get: { title: 'Read usage points, budgets and stream limits', hints: READ },
  service_usage_history: { title: 'Read usage points and 429s per minute, hour or day', hints: READ },
  service_balance_get: { title: 'Read the credit balance', hints: READ },
  service_transactions_list: { title: 'List credit transactions', hints: READ },
  service_costs_get: { title: 'Read costs per day, operation and key', hints: READ },
  service_tools_list: { title: 'List Tool operations and their inputs', hints: READ },
  service_estimates_create: { title: 'Estimate the cost of an operation (reserves nothing)', hints: READ },
  service_runs_create: { title: 'Run a Tool operation (spends credits)', hints: RUN },
  service_runs_lookup: { title: 'Find the run or retry of an idempotency key', hints: READ },
  service_jobs_list: { title: 'List jobs', hints: READ },
  service_jobs_get: { title: 'Read a job', hints: READ },
  service_jobs_output: { title: 'Read the complete output of a job, page by page', hints: READ },
  service_jobs_cancel: { title: 'Cancel a job', hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true } },
  service_jobs_retry: { title: 'Retry a failed job (spends credits)', hints: RUN },
  service_queue_get: { title: 'Read the job queue', hints: READ },
  service_media_list: { title: 'List media', hints: READ },
  service_media_get: { title: 'Read a media item', hints: READ },
  service_media_upload: { title: 'Upload a small media file', hints: ADD },
  service_media_download: { title: 'Get a temporary download URL of a media item', hints: READ },
  service_voices_list: { title: 'List the workspace voices (made by voice.clone)', hints: READ },
  service_voices_get: { title: 'Read a workspace voice', hints: READ },
  service_voices_delete: { title: 'Delete a workspace voice for good', hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false } },
  service_events_list: { title: 'List workspace events', hints: READ },
  service_test_events_trigger: { title: 'Send a sample event to the test webhooks (test keys only)', hints: { ...ADD, openWorldHint: true } },
  service_webhooks_list: { title: 'List webhooks', hints: READ },
  service_webhooks_create: { title: 'Create a webhook', hints: ADD },
  service_webhooks_update: { title: 'Change a webhook', hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false } },
  service_webhooks_revoke: { title: 'Revoke a webhook for good', hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false } },
  service_webhooks_rotate: { title: 'Replace a webhook signing secret', hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false } },
  service_deliveries_list: { title: 'List deliveries of a webhook', hints: READ },
  service_deliveries_replay: { title: 'Send a failed webhook delivery again', hints: { ...ADD, openWorldHint: true } },
};

/** The annotations of a route tool; undefined for a tool missing from the table (a test catches it). */
export function routeToolAnnotations(name: string): (ToolAnnotations & Hints & { title: string }) | undefined {
  const entry = TABLE[name];
  return entry ? { title: entry.title, ...entry.hints } : undefined;
}

/** The annotations of a per-operation run tool (service_run_<operation>). */
export function operationToolAnnotations(title: string): ToolAnnotations & Hints & { title: string } {
  return { title, ...RUN };
}
