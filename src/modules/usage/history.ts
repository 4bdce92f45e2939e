/**
 * Usage history (issue 36; GET /v1/usage/history): the usage points each key spent on each
 * operation, and the 429 refusals by their `details.limit`, per UTC minute, hour and day.
 *
 * Counted in memory where the points are charged (UsageMeter.charge with an attribution) and
 * where a 429 is answered (app.ts), and added to `usage_history` by the meter's periodic flush in
 * one transaction. A refused request writes nothing of its own (decisions.md: refused requests
 * write nothing, so a flood of them costs no database write): its count waits in memory and is
 * written by the first flush that also writes points charged to the same workspace (any accepted
 * request, the history read itself included), or by the last flush at shutdown, or when more
 * than 10,000 counts wait (memory stays bounded; still one write per flush). One row per
 * workspace, span, bucket, key, operation and kind (`points`, or `429:<limit>`). Minute rows are kept for a day, hour rows for 62 days, day rows for good. The
 * history is a report, not a limit: admission reads the meter's own counters.
 */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Database } from '../../db/schema.js';

export interface Attribution {
  keyId: string;
  /** An operation id for run and retry points, else the endpoint (`GET /v1/balance`). */
  operation: string;
}

export const MINUTE_MS = 60_000;
const SPANS = [
  ['minute', MINUTE_MS],
  ['hour', 3_600_000],
  ['day', 86_400_000],
] as const;

/** The most refusal counts kept waiting in memory for a write of their workspace (see flush). */
const MAX_WAITING = 10_000;

/** How long rows of each span are kept. */
export const HISTORY_RETENTION_MS = { minute: 25 * 3_600_000, hour: 62 * 86_400_000 } as const;

interface Count {
  workspaceId: string;
  minute: number;
  keyId: string;
  operation: string;
  kind: string;
  count: number;
}

/** The counts of one workspace's current minute, by key, operation and kind (see `add`). */
interface MinuteIndex {
  minute: number;
  counts: Map<string, Map<string, Map<string, Count>>>;
}

export class UsageHistory {
  private counts = new Map<string, Count>();
  /**
   * Every request that charges points adds to the history, so finding its count must be cheap:
   * the strings of a request (the workspace's and key's ids, the route's endpoint) are the same
   * objects on every request, so nested maps over them hash nothing new, where one joined key
   * would be built and hashed anew each time. Holds the current minute of each workspace only;
   * cleared by each flush, which takes the counts away (a miss goes by the joined key).
   */
  private index = new Map<string, MinuteIndex>();

  /** Adds `count` (points, or one refusal) to the minute holding `at`. */
  add(workspaceId: string, at: number, by: Attribution, kind: string, count: number): void {
    const minute = at - (at % MINUTE_MS);
    let w = this.index.get(workspaceId);
    if (!w || w.minute !== minute) this.index.set(workspaceId, (w = { minute, counts: new Map() }));
    let byOperation = w.counts.get(by.keyId);
    if (!byOperation) w.counts.set(by.keyId, (byOperation = new Map()));
    let byKind = byOperation.get(by.operation);
    if (!byKind) byOperation.set(by.operation, (byKind = new Map()));
    let c = byKind.get(kind);
    if (!c) {
      const k = `${workspaceId}\u0000${minute}\u0000${by.keyId}\u0000${by.operation}\u0000${kind}`;
      c = this.counts.get(k);
      if (!c) this.counts.set(k, (c = { workspaceId, minute, keyId: by.keyId, operation: by.operation, kind, count: 0 }));
      byKind.set(kind, c);
    }
    c.count += count;
  }

  /** A 429 answered to a key: counted under `429:<details.limit>`. */
  refused(workspaceId: string, at: number, by: Attribution, limit: unknown): void {
    this.add(workspaceId, at, by, `429:${typeof limit === 'string' || typeof limit === 'number' ? String(limit) : 'unknown'}`, 1);
  }

  get pending(): number {
    return this.counts.size;
  }

  /**
   * Writes what was counted since the last flush; on failure it is kept for the next one. 429
   * counts of a workspace without points in this flush wait, unless `final` (see above).
   */
  async flush(db: Kysely<Database>, now: number, prune: boolean, final = false): Promise<void> {
    if (this.counts.size === 0 && !prune) return;
    const charged = new Set<string>();
    for (const c of this.counts.values()) if (c.kind === 'points' && c.count !== 0) charged.add(c.workspaceId);
    const taken: Count[] = [];
    const waiting = new Map<string, Count>();
    // Refusal counts that would wait beyond MAX_WAITING are written anyway: memory stays bounded
    // (a workspace refused for the rest of its month never has points to ride on), and the
    // writes stay one transaction per flush however many requests were refused.
    const all = final || this.counts.size > MAX_WAITING;
    for (const [k, c] of this.counts) {
      if (c.count === 0) continue;
      if (all || c.kind === 'points' || charged.has(c.workspaceId)) taken.push(c);
      else waiting.set(k, c);
    }
    this.counts = waiting;
    // The taken counts are no longer this history's: the next add finds (or makes) its own.
    this.index.clear();
    if (taken.length === 0 && !prune) return;
    const rows = new Map<string, { workspace_id: string; span: string; bucket_ms: number; key_id: string; operation: string; kind: string; count: number }>();
    for (const c of taken) {
      for (const [span, unit] of SPANS) {
        const bucket = c.minute - (c.minute % unit);
        const k = `${c.workspaceId}\u0000${span}\u0000${bucket}\u0000${c.keyId}\u0000${c.operation}\u0000${c.kind}`;
        const r = rows.get(k);
        if (r) r.count += c.count;
        else rows.set(k, { workspace_id: c.workspaceId, span, bucket_ms: bucket, key_id: c.keyId, operation: c.operation, kind: c.kind, count: c.count });
      }
    }
    try {
      await db.transaction().execute(async (trx) => {
        for (const r of rows.values()) {
          await trx
            .insertInto('usage_history')
            .values(r)
            .onConflict((oc) => oc.columns(['workspace_id', 'span', 'bucket_ms', 'key_id', 'operation', 'kind']).doUpdateSet({ count: sql`usage_history.count + excluded.count` }))
            .execute();
        }
        if (prune) {
          await trx.deleteFrom('usage_history').where('span', '=', 'minute').where('bucket_ms', '<', now - HISTORY_RETENTION_MS.minute).execute();
          await trx.deleteFrom('usage_history').where('span', '=', 'hour').where('bucket_ms', '<', now - HISTORY_RETENTION_MS.hour).execute();
        }
      });
    } catch (err) {
      for (const c of taken) this.add(c.workspaceId, c.minute, { keyId: c.keyId, operation: c.operation }, c.kind, c.count);
      throw err;
    }
  }
}
