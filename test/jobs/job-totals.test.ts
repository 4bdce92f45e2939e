/**
 * The job-path performance rules keep every money rule: group commit of concurrent writes
 * (a refused or failing unit is rolled back alone), the workspace totals that admission and
 * claiming read (trigger-kept on SQLite; always equal to the rows), and reads served from
 * caches (a job snapshot follows every new version).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { admin, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { scopeOf, seedTenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { drain, getJob, run } from '../support/jobs.js';
import { findOperation } from '../../src/operations/registry.js';
import { FLUSH_TURNS, inTransaction } from '../../src/db/group-commit.js';
import { JobWorker } from '../../src/worker/job-worker.js';
import { activeCounts } from '../../src/modules/jobs/store.js';
import { sumOpenHolds } from '../../src/modules/billing/store.js';

const MUSIC = (extra = '') => ({ prompt: `a calm tune ${extra}`, durationSeconds: 10 });
const MUSIC_MAX = findOperation('music.generate')!.price(MUSIC()).maximumMillicents;
const CHAT = { messages: [{ role: 'user', content: 'Hello there' }], maxTokens: 100 };

/**
 * What admission and claiming read (on SQLite the trigger-kept totals row, on PostgreSQL counts
 * over the rows) against counts and sums recomputed from the rows.
 */
async function assertTotalsMatchRows(ctx: TestContext, workspaceId: string): Promise<{ pending: number; processing: number; held: number }> {
  const active = await activeCounts(ctx.deps.db, workspaceId);
  const totals = { pending: active.pending, processing: active.processing, held: await sumOpenHolds(ctx.deps.db, workspaceId) };
  const count = async (status: string) =>
    Number(
      (
        await ctx.deps.db
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('workspace_id', '=', workspaceId)
          .where('status', '=', status as never)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const held = await ctx.deps.db
    .selectFrom('credit_holds')
    .select((eb) => eb.fn.sum<number>('amount_mc').as('total'))
    .where('workspace_id', '=', workspaceId)
    .where('released_at_ms', 'is', null)
    .executeTakeFirst();
  const rows = { pending: await count('pending'), processing: await count('processing'), held: Number(held?.total ?? 0) };
  assert.deepEqual(totals, rows, 'workspace totals equal the rows');
  return rows;
}

describeEachDatabase('job paths: group commit and workspace totals', (get) => {
  test('group commit: a unit that throws is rolled back alone; the units around it commit', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const keys = [randomUUID(), randomUUID(), randomUUID()];
    const insert = (idemKey: string) => (trx: Parameters<Parameters<typeof inTransaction>[1]>[0]) =>
      trx
        .insertInto('idempotency_keys')
        .values({ key_id: t.key.id, workspace_id: t.workspace.id, idem_key: idemKey, request_hash: 'h', state: 'in_flight', status_code: null, response_json: null, created_at_ms: 1, expires_at_ms: 2 })
        .execute();
    const outcomes = await Promise.allSettled([
      inTransaction(ctx.deps, insert(keys[0]!)),
      inTransaction(ctx.deps, async (trx) => {
        await insert(keys[1]!)(trx);
        throw new Error('refused after writing');
      }),
      inTransaction(ctx.deps, insert(keys[2]!)),
    ]);
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
    const stored = await ctx.deps.db.selectFrom('idempotency_keys').select('idem_key').where('workspace_id', '=', t.workspace.id).execute();
    assert.deepEqual(stored.map((r) => r.idem_key).sort(), [keys[0], keys[2]].sort());
  });

  test('group commit: on a single writer, units that arrive within FLUSH_TURNS turns of the event loop after the first share its transaction (a named batch on PostgreSQL: within its turn); a later one gets the next', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    // A batch name makes units share transactions on PostgreSQL too (a single writer shares them anyway).
    const submit = () => inTransaction(ctx.deps, async (trx) => trx, t.workspace.id);
    const turns = ctx.deps.caps.singleWriter ? FLUSH_TURNS : 1;
    const afterTurns = (n: number) => new Promise<void>((resolve) => {
      const step = (left: number) => (left === 0 ? resolve() : setImmediate(() => step(left - 1)));
      step(n);
    });
    const first = submit();
    const sameTurn = submit();
    // Each of these is submitted in the check phase of a later turn, before the batch's flush.
    const joined = Array.from({ length: turns - 1 }, (_, i) => afterTurns(i + 1).then(submit));
    // Submitted in the flush's own turn, after it took the batch: the next transaction.
    const late = afterTurns(turns).then(submit);
    const shared = await first;
    assert.equal(await sameTurn, shared, 'a unit of the same turn joined the batch');
    for (const trx of await Promise.all(joined)) assert.equal(trx, shared, 'a unit of the first turns joined the batch');
    assert.notEqual(await late, shared, 'a unit after the flush started is in a transaction of its own');
  });

  test('group commit: concurrent admissions against credits for K admit exactly K; each refusal leaves no job, hold or idempotency record', async () => {
    const ctx = get();
    const K = 3;
    const t = await seedTenant(ctx.deps, { credits: K * MUSIC_MAX, mode: 'test' });
    await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { waitingJobs: 1000, pointsPerMinute: 1_000_000 } });
    const results = await Promise.all(Array.from({ length: 12 }, () => run(ctx, t, 'music.generate', MUSIC())));
    assert.equal(results.filter((r) => r.statusCode === 202).length, K);
    assert.equal(results.filter((r) => r.statusCode === 402).length, 12 - K);
    const jobs = await ctx.deps.db.selectFrom('jobs').select('id').where('workspace_id', '=', scopeOf(t)).execute();
    const records = await ctx.deps.db.selectFrom('idempotency_keys').select(['idem_key', 'state']).where('workspace_id', '=', scopeOf(t)).execute();
    assert.equal(jobs.length, K);
    assert.equal(records.length, K);
    assert.ok(records.every((r) => r.state === 'done'));
    assert.equal((await assertTotalsMatchRows(ctx, scopeOf(t))).held, K * MUSIC_MAX);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('workspace totals (waiting jobs, running jobs, open holds) equal the rows through admission, claim, cancel, failure, retry and settlement', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { waitingJobs: 1000, pointsPerMinute: 1_000_000 } });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await run(ctx, t, 'music.generate', MUSIC(`[sim:delay=0] ${i}`))).json().data.jobId);
    const failing = (await run(ctx, t, 'music.generate', MUSIC('[sim:delay=0][sim:failAt=0]'))).json().data.jobId;
    assert.deepEqual(await assertTotalsMatchRows(ctx, scopeOf(t)), { pending: 5, processing: 0, held: 5 * MUSIC_MAX });

    const cancel = await ctx.app.inject({ method: 'POST', url: `/v1/jobs/${ids[0]}/cancel`, headers: { authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id } });
    assert.equal(cancel.statusCode, 200);
    assert.deepEqual(await assertTotalsMatchRows(ctx, scopeOf(t)), { pending: 4, processing: 0, held: 4 * MUSIC_MAX });

    // A synchronous run is inserted as processing and settles at once.
    assert.equal((await run(ctx, t, 'chat.generate', CHAT)).statusCode, 200);
    await assertTotalsMatchRows(ctx, scopeOf(t));

    await drain(ctx);
    assert.equal((await getJob(ctx, t, failing)).status, 'failed');
    assert.deepEqual(await assertTotalsMatchRows(ctx, scopeOf(t)), { pending: 0, processing: 0, held: 0 });

    const retry = await ctx.app.inject({
      method: 'POST',
      url: `/v1/jobs/${failing}/retry`,
      headers: { authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id, 'idempotency-key': randomUUID() },
    });
    assert.equal(retry.statusCode, 202);
    const afterRetry = await assertTotalsMatchRows(ctx, scopeOf(t));
    assert.equal(afterRetry.pending, 1);
    assert.ok(afterRetry.held > 0);
    await drain(ctx);
    assert.deepEqual(await assertTotalsMatchRows(ctx, scopeOf(t)), { pending: 0, processing: 0, held: 0 });
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('running-jobs limit: claims read the running total and never start more than the limit', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { waitingJobs: 1000, runningJobs: 2, pointsPerMinute: 1_000_000 } });
    for (let i = 0; i < 5; i++) await run(ctx, t, 'music.generate', MUSIC(`${i}`));
    const worker = new JobWorker(ctx.deps, { concurrency: 8 });
    const { claimJobs } = await import('../../src/worker/job-claim.js');
    const claimed = await claimJobs(ctx.deps, worker.owner, 8);
    assert.equal(claimed.length, 2);
    assert.deepEqual(await assertTotalsMatchRows(ctx, scopeOf(t)), { pending: 3, processing: 2, held: 5 * MUSIC_MAX });
    assert.equal((await claimJobs(ctx.deps, worker.owner, 8)).length, 0);
  });

  test('running-jobs limit: a workspace at its limit does not hold back the queue (its waiting jobs are no candidates)', async () => {
    const ctx = get();
    const { claimJobs } = await import('../../src/worker/job-claim.js');
    const owner = new JobWorker(ctx.deps).owner;
    const busy = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    await admin(ctx, `/admin/v1/workspaces/${busy.workspace.id}/settings`, { limits: { waitingJobs: 1000, runningJobs: 1, pointsPerMinute: 1_000_000 } });
    for (let i = 0; i < 12; i++) await run(ctx, busy, 'music.generate', MUSIC(`${i}`));
    assert.equal((await claimJobs(ctx.deps, owner, 1)).length, 1, 'the busy workspace now runs as many jobs as it may');
    const other = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const otherJob = (await run(ctx, other, 'music.generate', MUSIC('other'))).json().data.jobId as string;
    // Eleven of the busy workspace's jobs wait ahead of it: more than a claim of two reads.
    const claimed = await claimJobs(ctx.deps, owner, 2);
    assert.deepEqual(claimed.map((j) => j.id), [otherJob]);
    assert.deepEqual(await assertTotalsMatchRows(ctx, scopeOf(busy)), { pending: 11, processing: 1, held: 12 * MUSIC_MAX });
    // With a free slot again, the busy workspace's oldest waiting job is claimed next.
    await admin(ctx, `/admin/v1/workspaces/${busy.workspace.id}/settings`, { limits: { waitingJobs: 1000, runningJobs: 2, pointsPerMinute: 1_000_000 } });
    const next = await claimJobs(ctx.deps, owner, 2);
    assert.equal(next.length, 1);
    assert.equal(next[0]!.workspace_id, scopeOf(busy));
  });

  test('running-jobs limit: the largest overrides the admin API accepts still let jobs be admitted and claimed', async () => {
    const ctx = get();
    const { claimJobs } = await import('../../src/worker/job-claim.js');
    const owner = new JobWorker(ctx.deps).owner;
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const huge = Number.MAX_SAFE_INTEGER;
    const res = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { runningJobs: huge, waitingJobs: huge, pointsPerMinute: huge, pointsPerMonth: huge, streams: huge, activeKeys: huge } });
    assert.equal(res.statusCode, 200);
    const jobIds: string[] = [];
    for (let i = 0; i < 3; i++) jobIds.push((await run(ctx, t, 'music.generate', MUSIC(`${i}`))).json().data.jobId as string);
    assert.deepEqual((await claimJobs(ctx.deps, owner, 8)).map((j) => j.id), jobIds);
  });

  test('claims follow queue order across workspaces when slots are scarce (not the order of workspace ids)', async () => {
    const ctx = get();
    const { claimJobs } = await import('../../src/worker/job-claim.js');
    const owner = new JobWorker(ctx.deps).owner;
    // Ids are time-ordered: `first` has the smaller id, but `second` admits the older job.
    const first = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const second = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    assert.ok(first.workspace.id < second.workspace.id);
    assert.ok(scopeOf(first) < scopeOf(second), 'and so are the test twins the jobs are stored under');
    const older = (await run(ctx, second, 'music.generate', MUSIC('older'))).json().data.jobId as string;
    const newer = (await run(ctx, first, 'music.generate', MUSIC('newer'))).json().data.jobId as string;
    assert.deepEqual((await claimJobs(ctx.deps, owner, 1)).map((j) => j.id), [older]);
    assert.deepEqual((await claimJobs(ctx.deps, owner, 1)).map((j) => j.id), [newer]);
  });

  test('job snapshot reads follow every new version (rendered snapshots are cached by version)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const jobId = (await run(ctx, t, 'music.generate', MUSIC('[sim:delay=0]'))).json().data.jobId;
    const first = await getJob(ctx, t, jobId);
    assert.equal(first.status, 'pending');
    assert.deepEqual(await getJob(ctx, t, jobId), first);
    await drain(ctx);
    const done = await getJob(ctx, t, jobId);
    assert.equal(done.status, 'completed');
    assert.ok(done.version > first.version);
    assert.equal(typeof (done.output.audio as { url: string }).url, 'string');
    const versions = await sql<{ n: number }>`select count(*) as n from job_versions where job_id = ${jobId}`.execute(ctx.deps.db);
    assert.equal(Number(versions.rows[0]!.n), done.version);
  });
}, testKeySuite());
