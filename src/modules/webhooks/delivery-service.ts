/**
 * Delivery history and replay (decisions.md section 1, Replay).
 *
 * Replay: only a failed delivery (409 DELIVERY_NOT_FAILED), at most MAX_REPLAYS per event to this
 * webhook (409 REPLAY_LIMIT_REACHED), not for a revoked webhook (409 WEBHOOK_REVOKED). Before it
 * is queued, authorization (the hostname verified in this workspace) and the destination (every
 * address it resolves to permitted by the egress address policy) are checked at once (400
 * WEBHOOK_URL_REJECTED), and the worker checks both again when it sends. The same delivery row
 * goes back to pending, due now, with replayCount + 1 and the same event id; a replay is one
 * attempt (like a manual resend): if it fails, the delivery is failed again and may be replayed
 * while replays remain. A disabled webhook is sent nothing, so its deliveries are not replayed
 * (409 WEBHOOK_DISABLED) until it is enabled again.
 */
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { keysetPage, type PageRequest } from '../../http/pagination.js';
import { findDelivery, findWebhookForDelivery, listDeliveries, markReplayed, type Delivery } from './delivery-store.js';
import { requireDestination } from './destination.js';
import { notifyDeliveryWorkers } from './fan-out.js';

export const MAX_REPLAYS = 3;

async function requireWebhook(deps: Deps, workspaceId: string, webhookId: string) {
  const webhook = await findWebhookForDelivery(deps.db, workspaceId, webhookId);
  if (!webhook) throw new AppError('NOT_FOUND', { message: 'No such webhook in this workspace.' });
  return webhook;
}

/** A webhook's deliveries, newest first (another workspace's webhook is 404). */
export async function listWebhookDeliveries(deps: Deps, workspaceId: string, webhookId: string, page: PageRequest) {
  await requireWebhook(deps, workspaceId, webhookId);
  const result = await keysetPage(deps, `webhook.deliveries:${webhookId}`, workspaceId, page, (position, limit) =>
    listDeliveries(deps.db, workspaceId, webhookId, position, limit),
  );
  return { ...result, hasMore: result.nextCursor !== null };
}

export async function replayDelivery(deps: Deps, workspaceId: string, webhookId: string, deliveryId: string): Promise<Delivery> {
  const webhook = await requireWebhook(deps, workspaceId, webhookId);
  const delivery = await findDelivery(deps.db, workspaceId, webhookId, deliveryId);
  if (!delivery) throw new AppError('NOT_FOUND', { message: 'No such delivery of this webhook.' });
  if (webhook.revoked_at_ms !== null) throw new AppError('WEBHOOK_REVOKED');
  if (delivery.status !== 'failed') throw new AppError('DELIVERY_NOT_FAILED');
  if (delivery.replayCount >= MAX_REPLAYS) throw new AppError('REPLAY_LIMIT_REACHED', { message: `This event was already replayed ${MAX_REPLAYS} times to this webhook.` });
  if (Number(webhook.enabled) !== 1) throw new AppError('WEBHOOK_DISABLED');
  // Authorization (hostname verified in this workspace) and destination (resolves only to
  // permitted addresses) exactly as at creation: 400 WEBHOOK_URL_REJECTED with details.reason.
  await requireDestination(deps, workspaceId, webhook.url);
  const replayed = await markReplayed(deps.db, delivery, deps.clock.now());
  // A concurrent replay (or another change) won the race: answer as if this one came second.
  if (!replayed) {
    const now = await findDelivery(deps.db, workspaceId, webhookId, deliveryId);
    throw new AppError(now && now.replayCount >= MAX_REPLAYS ? 'REPLAY_LIMIT_REACHED' : 'DELIVERY_NOT_FAILED');
  }
  deps.log.info({ deliveryId, webhookId, workspaceId, replayCount: replayed.replayCount }, 'webhook delivery replay queued');
  notifyDeliveryWorkers();
  return replayed;
}
