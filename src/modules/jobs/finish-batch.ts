/**
 * Batched finishes of the jobs a worker ran, on PostgreSQL. A finish used to be about fifteen
 * statements under the workspace lock (status change, hold, allocations, ledger, cost, version,
 * notification, event, webhook fan-out, media rows); finishes of one workspace that arrive
 * together are applied here in one transaction of two round trips whatever their number: one
 * read of the jobs, their open holds, the allocations and the webhooks; then the workspace lock,
 * one statement applying every finish with all it writes, re-checking under the lock that the
 * rows it was decided from are unchanged (db/guard.ts), and the commit. If they changed (a
 * cancel, another process's settlement), the batch is decided again with the lock taken first.
 *
 * The rules are lifecycle.finishJob's, applied to each finish in arrival order: the change holds
 * only while the job is still processing under the attempt's lease token; the attempt's
 * consumption is charged up to the open hold, spending allocations earliest-expiry first (only
 * those not yet expired when the hold was admitted), one `usage` ledger entry per job, the hold
 * released; the new version, the terminal event and its webhook deliveries, and the media rows
 * (with their `media.created` events) of the attempt's last files, written with it.
 *
 * Anything unusual goes the one-by-one way (lifecycle.finishJob), which stays the reference:
 * finishes without a lease (a cancel) and a synchronous run's finish (it stores the response in
 * the same transaction) never come here; a recovery's WORKER_LOST finish does, under the expired
 * lease's token. What a finish writes is decided by the same pure rules on both ways
 * (finish-rules.ts, reservations/spending.ts, states.ts). A batch falls back whole when
 * credits are due to expire (expiry is weighed after each settlement), when allocations would
 * not cover a charge (logged there), when one job appears twice, or when its write fails.
 */
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { Batcher } from '../../db/batcher.js';
import { batchTransaction, type BatchRunner } from '../../db/batch-transaction.js';
import type { EventType } from '../events/store.js';
import { presentMedia } from '../media/service.js';
import { mediaRow } from '../media/store.js';
import { ledgerRow, usageEntry } from '../billing/store.js';
import { deliveriesFor, notifyDeliveryWorkers } from '../webhooks/fan-out.js';
import { jobChangesToNotify } from './changes.js';
import { finishFiguresQuery, parseFinishRead, parseWrittenJobs, writeFinishMoneyQuery, writeFinishRecordsQuery, type FinishPatch, type FinishWrites } from './finish-batch-store.js';
import { isGuardFailure } from '../../db/guard.js';
import { inSpendingOrder, planSettlement } from '../reservations/spending.js';
import { lockWorkspaceQuery } from '../accounts/store.js';
import type { FinishRequest } from './finish-rules.js';
import { toMetadata } from './snapshot.js';
import { TERMINAL_EVENT } from './states.js';
import { finishFields, type FinishFields } from './finish-rules.js';
import { noteJobWrite, type JobRow } from './store.js';

/** Finish this job one by one (lifecycle.finishJob). */
export const FINISH_SINGLY = Symbol('finish singly');

interface QueuedFinish {
  jobId: string;
  req: FinishRequest;
}

type Outcome = JobRow | undefined | typeof FINISH_SINGLY;

/** Whether this finish may be batched: a worker's, under its lease, from processing. */
export function batchableFinish(deps: Deps, req: FinishRequest): boolean {
  return deps.caps.batchedWrites && req.leaseToken !== null && req.from.length === 1 && req.from[0] === 'processing' && !req.alsoInFinish;
}

const batchers = new WeakMap<Kysely<Database>, Batcher<QueuedFinish, Outcome>>();

export function finishInBatch(deps: Deps, jobId: string, req: FinishRequest): Promise<Outcome> {
  let batcher = batchers.get(deps.db);
  if (!batcher) batchers.set(deps.db, (batcher = new Batcher((_, items) => runBatch(deps, items))));
  return batcher.submit(req.workspaceId, { jobId, req });
}

/** Thrown inside the batch's transaction to roll it back and finish its jobs one by one. */
class FallBack extends Error {}

async function runBatch(deps: Deps, items: QueuedFinish[]): Promise<Outcome[]> {
  if (new Set(items.map((i) => i.jobId)).size !== items.length) {
    deps.metrics.observeBatch('finish', items.length, true);
    return items.map(() => FINISH_SINGLY);
  }
  try {
    let done: { outcomes: Outcome[]; deliveries: number };
    try {
      done = await batchTransaction(deps, (tx) => finishBatch(deps, tx, items, true));
    } catch (err) {
      if (!isGuardFailure(err)) throw err;
      // A job or the credits changed before the lock (a cancel, another worker): decide again under it.
      done = await batchTransaction(deps, (tx) => finishBatch(deps, tx, items, false));
    }
    const { outcomes, deliveries } = done;
    if (deliveries > 0) notifyDeliveryWorkers();
    deps.metrics.observeBatch('finish', items.length, false);
    return outcomes;
  } catch (err) {
    if (!(err instanceof FallBack)) deps.log.warn({ err, jobs: items.length }, 'batched finish failed; finishing its jobs one by one');
    deps.metrics.observeBatch('finish', items.length, true);
    return items.map(() => FINISH_SINGLY);
  }
}

/**
 * Decides and writes a batch of finishes. `optimistic`: the rows are read before the workspace
 * lock and the write re-checks them under it (guard.ts), so the lock is held for one round trip
 * that needs nothing from this process in between; otherwise lock, then read.
 */
async function finishBatch(deps: Deps, tx: BatchRunner, items: QueuedFinish[], optimistic: boolean): Promise<{ outcomes: Outcome[]; deliveries: number }> {
  const now = deps.clock.now();
  const workspaceId = items[0]!.req.workspaceId;
  for (const i of items) noteJobWrite(i.jobId);
  const figures = finishFiguresQuery(deps.db, workspaceId, items.map((i) => i.jobId), now);
  const lock = lockWorkspaceQuery(deps.db, workspaceId);
  const read = parseFinishRead((optimistic ? (await tx.run([figures]))[0] : (await tx.run([lock, figures]))[1])!.rows);
  if (read.dueAllocations) throw new FallBack();
  const rows = new Map(read.jobs.map((j) => [j.id, j]));
  const holds = new Map(read.holds.map((h) => [h.job_id, h]));
  // Read once for the batch; each hold's debits lower what is left for the next (spending.ts).
  const allocations = inSpendingOrder(read.allocations);
  const debits = new Map<string, number>();
  const w: FinishWrites = { patches: [], debits: [], releasedHolds: [], ledger: [], versions: [], media: [], events: [], deliveries: [], notify: [] };
  const addEvent = (type: EventType, data: Record<string, unknown>, createdAt: number) => {
    const event = { id: newId(), workspace_id: workspaceId, type, data_json: JSON.stringify(data), created_at_ms: createdAt };
    w.events.push(event);
    w.deliveries.push(...deliveriesFor(read.hooks, { id: event.id, workspaceId, type }, now));
  };
  const applies: boolean[] = [];
  for (const item of items) {
    const row = rows.get(item.jobId);
    // Cancelled, recovered or finished meanwhile: this attempt changes nothing.
    if (!row || row.status !== 'processing' || Number(row.lease_token) !== item.req.leaseToken) {
      applies.push(false);
      continue;
    }
    applies.push(true);
    const hold = holds.get(item.jobId);
    let charge = 0;
    if (row.funding === 'credits' && hold) {
      const plan = planSettlement(allocations, { amountMillicents: Number(hold.amount_mc), createdAt: Number(hold.created_at_ms) }, item.req.consumedMillicents);
      charge = plan.charge;
      // A shortfall is logged and charged as far as it goes by the one-by-one path.
      if (plan.shortfall > 0) throw new FallBack();
      for (const d of plan.debits) debits.set(d.allocationId, (debits.get(d.allocationId) ?? 0) + d.amountMillicents);
      if (charge > 0) {
        const job = { workspaceId, jobId: row.id, keyId: row.key_id, toolSlug: row.tool_slug, operationId: row.operation_id, executionOrigin: row.execution_origin };
        w.ledger.push(ledgerRow(usageEntry(job, charge, newId(), now)));
      }
      w.releasedHolds.push(hold.id);
    }
    const fields = finishFields(item.req, now);
    w.patches.push({ id: row.id, lease_token: item.req.leaseToken!, expected_version: Number(row.version), fields, charge });
    for (const m of item.req.media ?? []) {
      w.media.push(mediaRow(m));
      // Stamped by this transaction, like every event (the file may have been made long before).
      addEvent('media.created', { media: presentMedia(m), jobId: m.jobId }, now);
    }
    const metadata = toMetadata(finishedRow(row, fields, charge, now));
    w.versions.push({ job_id: row.id, version: Number(row.version) + 1, snapshot_json: JSON.stringify(metadata), created_at_ms: now });
    addEvent(TERMINAL_EVENT[item.req.status], { job: metadata }, now);
  }
  if (w.patches.length === 0) {
    await tx.run([], { commit: true });
    return { outcomes: items.map(() => undefined), deliveries: 0 };
  }
  w.debits = [...debits].map(([id, amount]) => ({ id, amount }));
  w.notify = jobChangesToNotify(deps.db, w.patches.map((p) => p.id));
  // The records first, then the lock (optimistic) and the money: the lock is held only for the money.
  const records = writeFinishRecordsQuery(deps.db, w);
  const money = writeFinishMoneyQuery(deps.db, workspaceId, w, now);
  const written = optimistic ? (await tx.run([records, lock, money], { commit: true }))[2] : (await tx.run([records, money], { commit: true }))[1];
  const updated = new Map(parseWrittenJobs(written!.rows).map((j) => [j.id, j]));
  return { outcomes: items.map((item, i) => (applies[i] ? updated.get(item.jobId) : undefined)), deliveries: w.deliveries.length };
}

/** The row as writeFinishesQuery leaves it: what the new version and the event show. */
function finishedRow(row: JobRow, fields: FinishFields, charge: number, now: number): JobRow {
  return { ...row, ...fields, updated_at_ms: now, version: Number(row.version) + 1, cost_mc: Number(row.cost_mc) + charge };
}
