/**
 * POST /v1/test/webhook-events (docs/decisions.md "Test mode"): a test key asks for a sample event
 * of a type, as `stripe trigger` does. The event is stored in the test twin like any other, so it
 * is in the test event feed and goes to every test webhook subscribed to its type, signed and
 * retried like any delivery. Its data has the type's documented shape; the ids in it are made
 * for the sample and name nothing stored. Live keys are refused (403 TEST_MODE_ONLY).
 */
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { toIso } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { isLiveScope, publicWorkspaceId } from '../../lib/livemode.js';
import type { AuthContext } from '../auth/types.js';
import { presentEvent, type PublicEvent } from './service.js';
import { insertEvent, type EventType } from './store.js';

const DAY_MS = 86_400_000;
/** SHA-256 of no bytes: the sample media item is empty. */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** Sample data of `type`, shaped as the feed and webhook bodies document it. */
export function sampleData(type: EventType, auth: AuthContext, now: number): Record<string, unknown> {
  const workspaceId = publicWorkspaceId(auth.workspace.id);
  const at = toIso(now);
  const job = (status: 'completed' | 'failed' | 'cancelled') => ({
    job: {
      id: newId(), workspaceId, livemode: false, toolSlug: 'chat', operationId: 'chat.generate', status, executionOrigin: 'api',
      progress: { percentage: status === 'completed' ? 100 : 0 }, costMillicents: 0, maximumCostMillicents: 0,
      errorCode: status === 'failed' ? 'SIMULATED_FAILURE' : null, createdAt: at, startedAt: at, completedAt: at, version: 3,
    },
  });
  switch (type) {
    case 'job.completed':
      return job('completed');
    case 'job.failed':
      return job('failed');
    case 'job.cancelled':
      return job('cancelled');
    case 'media.created':
      return { media: { id: newId(), workspaceId, livemode: false, name: 'sample.png', mimeType: 'image/png', sizeBytes: 0, sha256: EMPTY_SHA256, createdAt: at, downloadUrl: null } };
    case 'budget.threshold_crossed':
      return { budget: { scope: 'key', keyId: auth.key.id, period: 'day' }, thresholdPercent: 80, spentMillicents: 8_000, reservedMillicents: 0, limitMillicents: 10_000 };
    case 'credits.low':
      return { spendableMillicents: 900, thresholdMillicents: 1_000 };
    case 'allocation.expiring':
      return { allocation: { id: newId(), remainingMillicents: 5_000, expiresAt: toIso(now + 3 * DAY_MS), provenance: 'purchase', createdAt: at } };
    case 'key.expiring':
      return { keyId: auth.key.id, expiresAt: toIso(now + 3 * DAY_MS) };
    case 'key.suspended':
      return { keyId: auth.key.id, until: toIso(now + 300_000) };
    case 'webhook.failing':
      return { webhookId: newId(), hostname: 'hooks.example.com', deliveryId: newId(), eventId: newId(), attempts: 3, lastErrorCode: 'WEBHOOK_HTTP_ERROR', lastStatusCode: 500, final: false };
  }
}

/** Stores a sample event of `type` in the caller's test twin (fanned out to its webhooks). */
export async function triggerTestEvent(deps: Deps, auth: AuthContext, type: EventType): Promise<{ event: PublicEvent; deliveries: number }> {
  if (isLiveScope(auth.workspace.id)) throw new AppError('TEST_MODE_ONLY');
  const now = deps.clock.now();
  const event = await deps.db.transaction().execute((trx) => insertEvent(trx, auth.workspace.id, type, sampleData(type, auth, now), now));
  const deliveries = await deps.db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('event_id', '=', event.id)
    .executeTakeFirstOrThrow();
  return { event: presentEvent(event), deliveries: Number(deliveries.n) };
}
