/**
 * Event retention (housekeeping): events older than EVENT_RETENTION_DAYS leave the feed together
 * with their finished webhook deliveries (succeeded or failed), as Stripe keeps events for 30 days.
 * An event that still has a delivery pending or being delivered is kept until that delivery ends,
 * so retention never drops an event on its way to a receiver. Feed cursors stay valid: they are
 * positions, not references to rows.
 */
import type { Deps } from '../../deps.js';

const DAY_MS = 86_400_000;

/** Deletes up to `batch` expired events (and their deliveries) in one transaction; returns how many. */
export async function purgeExpiredEvents(deps: Deps, batch: number): Promise<number> {
  const cutoff = deps.clock.now() - deps.config.eventRetentionDays * DAY_MS;
  return deps.db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('events')
      .select('id')
      .where('created_at_ms', '<', cutoff)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('webhook_deliveries')
              .select('webhook_deliveries.id')
              .whereRef('webhook_deliveries.event_id', '=', 'events.id')
              .where('webhook_deliveries.status', 'in', ['pending', 'delivering']),
          ),
        ),
      )
      .orderBy('created_at_ms')
      .limit(batch)
      .execute();
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id);
    await trx.deleteFrom('webhook_deliveries').where('event_id', 'in', ids).where('status', 'in', ['succeeded', 'failed']).execute();
    await trx.deleteFrom('events').where('id', 'in', ids).execute();
    return ids.length;
  });
}
