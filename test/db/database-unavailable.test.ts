/**
 * A job's finish when the database drops the connection (issue 32, item 3), on every test database.
 * The worker's database (its transactions, and on a PostgreSQL server its pipelined ones) is wrapped
 * so that chosen transactions fail as a PostgreSQL restart makes them fail: before anything ran (the server refused the connection), or after the commit landed
 * (the answer was lost with the connection). The rules (docs/operations.md, "PostgreSQL outage"):
 * - a finish that failed because the database was unreachable is tried again while the lease lasts,
 *   and the job completes; it is never turned into a failed job (INTERNAL_ERROR) because of the
 *   outage;
 * - a finish that committed before its answer was lost is recognised as done: the job stays
 *   completed with its files (a finish that found "nothing to change" used to delete the result's
 *   files of a job that had completed);
 * - a database that stays unreachable past the lease leaves the job to lease recovery, which runs
 *   it again once the database is back; nothing is charged twice;
 * - a webhook delivery's outcome whose write met the outage is written again once the database
 *   answers (the delivery is not left leased until its lease expires and then sent a second time).
 * And `isDatabaseUnavailable` tells these failures from the statement's own. The jobs run with
 * test keys (simulated work, the test balance, the ledger of the test twin); the webhook's event is
 * written directly in the live workspace.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { Pipelines } from '../../src/db/pg-pipeline.js';
import type { Deps } from '../../src/deps.js';
import { isDatabaseUnavailable } from '../../src/db/unavailable.js';
import { executeJob } from '../../src/modules/jobs/executor.js';
import { claimJobs } from '../../src/worker/job-claim.js';
import { recoverExpiredLeases } from '../../src/worker/job-recovery.js';
import { JobWorker } from '../../src/worker/job-worker.js';
import { describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { scopeOf, seedTenant } from '../support/seed.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { createHook, emit, onlyDelivery, WEBHOOK_TEST_ENV } from '../support/webhooks.js';
import { DeliveryWorker } from '../../src/modules/webhooks/delivery-worker.js';

type Fault = 'before' | 'after';

/** `deps` whose database fails its next transactions as a lost connection would (`arm`). */
function faultyDeps(deps: Deps): { deps: Deps; arm(fault: Fault, times?: number): void; failures(): number } {
  let armed: { fault: Fault; left: number } | undefined;
  let failures = 0;
  const lost = (code: string | undefined, message: string) => Object.assign(new Error(message), code ? { code } : {});
  /** Runs one transaction, failing it as armed. */
  const faulty = async <T>(transaction: () => Promise<T>): Promise<T> => {
    const fault = armed && armed.left > 0 ? armed.fault : undefined;
    if (fault) armed!.left--;
    if (fault === 'before') {
      failures++;
      throw lost('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432');
    }
    const value = await transaction();
    if (fault === 'after') {
      failures++;
      throw lost(undefined, 'Connection terminated unexpectedly');
    }
    return value;
  };
  const db = new Proxy(deps.db, {
    get(target, prop) {
      if (prop === 'transaction') {
        return () => {
          const builder = target.transaction();
          return { execute: <T>(fn: (trx: never) => Promise<T>): Promise<T> => faulty(() => builder.execute(fn as never) as Promise<T>) };
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as Kysely<Database>;
  // On a PostgreSQL server the batched finishes send their statements in pipelines (db/pg-pipeline.ts).
  const pipelines = deps.caps.pipelines;
  const caps = pipelines ? { ...deps.caps, pipelines: { transaction: (fn: never) => faulty(() => pipelines.transaction(fn)) } as unknown as Pipelines } : deps.caps;
  return {
    deps: { ...deps, db, caps },
    arm: (fault, times = 1) => (armed = { fault, left: times }),
    failures: () => failures,
  };
}

async function claimedJob(ctx: TestContext) {
  const t = await seedTenant(ctx.deps, { credits: 10_000_000, mode: 'test' });
  const res = await run(ctx, t, 'music.generate', { prompt: 'a restart [sim:delay=0]', durationSeconds: 10 });
  assert.equal(res.statusCode, 202, res.body);
  const jobId = res.json().data.jobId as string;
  const [job] = await claimJobs(ctx.deps, 'test-worker', 10);
  assert.equal(job?.id, jobId);
  return { t, job: job! };
}

async function jobState(ctx: TestContext, jobId: string) {
  const row = await ctx.deps.db.selectFrom('jobs').select(['status', 'error_code', 'cost_mc']).where('id', '=', jobId).executeTakeFirstOrThrow();
  const media = await ctx.deps.db.selectFrom('media').select(['id', 'storage_key']).where('job_id', '=', jobId).execute();
  const usage = await ctx.deps.db.selectFrom('credit_transactions').select('amount_mc').where('job_id', '=', jobId).where('type', '=', 'usage').execute();
  return { ...row, media, usage: usage.map((u) => Number(u.amount_mc)) };
}

async function readable(ctx: TestContext, storageKey: string): Promise<boolean> {
  try {
    const stream = await ctx.deps.blobs.read(storageKey);
    return Buffer.concat((await stream.toArray()) as Buffer[]).length > 0;
  } catch {
    return false;
  }
}

test('isDatabaseUnavailable: connection failures yes, the statement\'s own failures no', () => {
  const yes = [
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
    Object.assign(new Error('the database system is shutting down'), { code: '57P03' }),
    Object.assign(new Error('sorry, too many clients already'), { code: '53300' }),
    Object.assign(new Error('connection failure'), { code: '08006' }),
    new Error('Connection terminated unexpectedly'),
    new Error('Client has encountered a connection error and is not queryable'),
    new Error('timeout exceeded when trying to connect'),
    new Error('outer', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }),
    new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })], ''),
  ];
  const no = [
    Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }),
    Object.assign(new Error('could not serialize access'), { code: '40001' }),
    Object.assign(new Error('syntax error'), { code: '42601' }),
    new Error('was-guard: spendable: 12'),
    new TypeError('x is undefined'),
    'ECONNREFUSED',
    undefined,
  ];
  for (const err of yes) assert.equal(isDatabaseUnavailable(err), true, String((err as Error).message));
  for (const err of no) assert.equal(isDatabaseUnavailable(err), false, String(err));
});

describeEachDatabase('a job finish when the database drops the connection', (get) => {
  test('refused before it ran: the finish is tried again and the job completes (not failed INTERNAL_ERROR)', async () => {
    const ctx = get();
    const { t, job } = await claimedJob(ctx);
    const faulty = faultyDeps(ctx.deps);
    faulty.arm('before', 2);
    const outcome = await executeJob(faulty.deps, job, new AbortController().signal);
    assert.equal(faulty.failures(), 2, 'the finish met the outage twice');
    assert.equal(outcome.status, 'completed');
    const state = await jobState(ctx, job.id);
    assert.equal(state.status, 'completed');
    assert.equal(state.error_code, null);
    assert.deepEqual(state.usage, [-Number(state.cost_mc)], 'one usage entry: the job cost');
    assert.ok(state.media.length > 0, 'music.generate stores its audio');
    for (const m of state.media) assert.ok(await readable(ctx, m.storage_key), 'the result file is stored');
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('committed, answer lost: the attempt knows its finish is there and keeps the files', async () => {
    const ctx = get();
    const { t, job } = await claimedJob(ctx);
    const faulty = faultyDeps(ctx.deps);
    faulty.arm('after', 1);
    const outcome = await executeJob(faulty.deps, job, new AbortController().signal);
    assert.equal(faulty.failures(), 1);
    assert.equal(outcome.status, 'completed');
    assert.equal(outcome.row?.id, job.id);
    const state = await jobState(ctx, job.id);
    assert.equal(state.status, 'completed');
    assert.deepEqual(state.usage, [-Number(state.cost_mc)], 'charged once');
    assert.ok(state.media.length > 0);
    for (const m of state.media) assert.ok(await readable(ctx, m.storage_key), 'the completed job\'s file was not deleted');
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('unreachable past the lease: left to lease recovery, run again once the database is back, charged once', async () => {
    const ctx = get();
    const { t, job } = await claimedJob(ctx);
    const faulty = faultyDeps({ ...ctx.deps, config: { ...ctx.deps.config, jobLeaseMs: 1000 } });
    faulty.arm('before', 1_000);
    const outcome = await executeJob(faulty.deps, job, new AbortController().signal);
    assert.equal(outcome.status, 'lost');
    assert.ok(faulty.failures() >= 2, 'tried again before giving up');
    let state = await jobState(ctx, job.id);
    assert.equal(state.status, 'processing', 'not failed because of the outage');
    assert.deepEqual(state.usage, []);
    ctx.clock.advance(ctx.deps.config.jobLeaseMs + 1);
    assert.equal(await recoverExpiredLeases(ctx.deps), 1);
    assert.equal(await new JobWorker(ctx.deps).runOnce(), 1);
    state = await jobState(ctx, job.id);
    assert.equal(state.status, 'completed');
    assert.deepEqual(state.usage, [-Number(state.cost_mc)], 'charged once');
    for (const m of state.media) assert.ok(await readable(ctx, m.storage_key));
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });
}, testKeySuite());

const receiver = HttpsReceiver.forThisFile();

describeEachDatabase(
  'a webhook delivery outcome when the database drops the connection',
  (get) => {
    test('the success is written again once the database answers, not left to the lease (and a second send)', async () => {
      const ctx = get();
      const hook = await createHook(ctx, receiver);
      await emit(ctx, hook.tenant.workspace.id);
      receiver.reset();
      receiver.reply({ status: 200, hold: true });
      const faulty = faultyDeps(ctx.deps);
      const run = new DeliveryWorker(faulty.deps, { concurrency: 4 }).runOnce();
      await receiver.waitFor(1);
      // The database goes away while the receiver answers: the first two writes of the outcome fail.
      faulty.arm('before', 2);
      receiver.release();
      assert.equal(await run, 1);
      assert.equal(faulty.failures(), 2, 'the outcome write met the outage twice');
      const row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'succeeded');
      assert.equal(Number(row.attempts), 1);
      assert.equal(receiver.requests.length, 1, 'sent once');
    });
  },
  { env: WEBHOOK_TEST_ENV },
);
