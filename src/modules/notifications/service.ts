/**
 * Capped account notifications, read by operators (admin API, command line tool).
 *
 * `webhook.failing`: a webhook's destination keeps failing (also an event: modules/alerts). Raised when a delivery ends failed
 * because of its destination, or when one delivery has failed FAILING_STREAK attempts in a row
 * (so an operator hears of a dead endpoint within the first hour, not after the last retry). The
 * unique index (kind, subject, UTC day) caps it at one per webhook per day; raising it again that
 * day is a no-op (insert-or-ignore), so it is safe to call from every failed attempt.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { keysetPage, type PageRequest } from '../../http/pagination.js';
import { newId } from '../../lib/ids.js';
import { findWorkspace } from '../accounts/store.js';
import { raiseAlert } from '../alerts/service.js';
import { utcDay } from '../alerts/rules.js';
import { insertNotificationOnce, listNotifications } from './store.js';

type Db = Kysely<Database> | Transaction<Database>;

export const WEBHOOK_FAILING = 'webhook.failing' as const;
/** Consecutive failed attempts of one delivery that raise `webhook.failing` before it gives up. */
export const FAILING_STREAK = 3;

export { utcDay };

export interface WebhookFailure {
  workspaceId: string;
  webhookId: string;
  hostname: string;
  deliveryId: string;
  eventId: string;
  attempts: number;
  lastErrorCode: string;
  lastStatusCode: number | null;
  /** True when the delivery gave up (failed for good), false while it is still being retried. */
  final: boolean;
}

/**
 * Records that a webhook is failing, at most once per webhook per UTC day; true when it was new.
 * It is an alert (modules/alerts): the notification comes with a `webhook.failing` event of the
 * same id in the feed, delivered to the workspace's webhooks subscribed to that type.
 */
export async function raiseWebhookFailing(db: Db, f: WebhookFailure, now: number): Promise<boolean> {
  const status = f.lastStatusCode === null ? '' : ` (HTTP ${f.lastStatusCode})`;
  const message = f.final
    ? `Webhook deliveries to ${f.hostname} are failing: a delivery gave up after ${f.attempts} attempt(s) with ${f.lastErrorCode}${status}.`
    : `Webhook deliveries to ${f.hostname} are failing: ${f.attempts} attempts in a row failed, the last with ${f.lastErrorCode}${status}.`;
  return raiseAlert(
    db,
    {
      workspaceId: f.workspaceId,
      type: WEBHOOK_FAILING,
      subject: f.webhookId,
      day: utcDay(now),
      message,
      data: {
        webhookId: f.webhookId,
        hostname: f.hostname,
        deliveryId: f.deliveryId,
        eventId: f.eventId,
        attempts: f.attempts,
        lastErrorCode: f.lastErrorCode,
        lastStatusCode: f.lastStatusCode,
        final: f.final,
      },
    },
    now,
  );
}

export const PROVIDER_KEY_REJECTED = 'provider_key.rejected';

/**
 * The provider refused a workspace's own key (401/403): its jobs fail PROVIDER_AUTH until the key
 * is replaced. At most once per provider per workspace per UTC day; the key itself is never named.
 */
export async function raiseProviderKeyRejected(db: Db, f: { workspaceId: string; provider: string; jobId: string }, now: number): Promise<boolean> {
  return insertNotificationOnce(db, {
    id: newId(),
    workspaceId: f.workspaceId,
    kind: PROVIDER_KEY_REJECTED,
    // The cap is per (kind, subject, day) over all workspaces: the subject names both.
    subjectId: `${f.workspaceId}:${f.provider}`,
    day: utcDay(now),
    message: `The provider "${f.provider}" refused the workspace's own provider key; its jobs fail with PROVIDER_AUTH until the key is replaced.`,
    details: { provider: f.provider, jobId: f.jobId },
    createdAt: now,
  });
}

/** A workspace's notifications, newest first (404 for an unknown workspace). */
export async function listWorkspaceNotifications(deps: Deps, workspaceId: string, page: PageRequest) {
  if (!(await findWorkspace(deps.db, workspaceId))) throw new AppError('NOT_FOUND', { message: 'No such workspace.' });
  return keysetPage(deps, 'admin.notifications', workspaceId, page, (position, limit) => listNotifications(deps.db, workspaceId, position, limit));
}
