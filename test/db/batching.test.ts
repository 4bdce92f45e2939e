/**
 * Runs of one workspace that arrive together, and the finishes of its jobs, are decided and
 * written in batches on PostgreSQL (runs/admission-batch.ts, jobs/finish-batch.ts). The rules
 * are those of one-by-one processing, which SQLite keeps using: these tests hold on every
 * database, and on PostgreSQL also check that the batches ran (batches_total) without falling
 * back. The tenants run their operations with test keys (simulated work, the test balance):
 * rows are read and written under the test twin's id (scopeOf).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { scopeOf, seedTenant, type Tenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { balance, drain, run } from '../support/jobs.js';
import { JobWorker } from '../../src/worker/job-worker.js';
import { claimJobs } from '../../src/worker/job-claim.js';
import { finishJob } from '../../src/modules/jobs/lifecycle.js';
import { finishFields } from '../../src/modules/jobs/finish-rules.js';
import { IDEMPOTENCY_TTL_MS, requestHash } from '../../src/modules/idempotency/service.js';
import { batchTransaction } from '../../src/db/batch-transaction.js';
import { lockWorkspaceQuery } from '../../src/modules/accounts/store.js';
import { writeAdmissionsQuery } from '../../src/modules/runs/admission-batch-store.js';
import { writeFinishMoneyQuery } from '../../src/modules/jobs/finish-batch-store.js';
import { isGuardFailure } from '../../src/db/guard.js';
import { waitUntil } from '../support/wait.js';
import { batchCounts } from '../support/batch-counts.js';

const IMAGE = (n: number | string) => ({ prompt: `batched image ${n}` });

async function tenant(ctx: TestContext, limits: Record<string, number> = {}): Promise<Tenant> {
  const t = await seedTenant(ctx.deps, { credits: 10_000_000, mode: 'test' });
  const res = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 1_000_000, waitingJobs: 1000, ...limits } });
  assert.equal(res.statusCode, 200, res.body);
  return t;
}

async function jobsOf(ctx: TestContext, workspaceId: string) {
  return ctx.deps.db.selectFrom('jobs').selectAll().where('workspace_id', '=', workspaceId).execute();
}

describeEachDatabase('batched admission', (get) => {
  test('idempotency in one batch: the same Idempotency-Key sent 10 times at once admits one job; the other nine replay its response', async () => {
    const ctx = get();
    const t = await tenant(ctx);
    const key = 'same-key-at-once';
    const results = await Promise.all(Array.from({ length: 10 }, () => run(ctx, t, 'image.generate', IMAGE(1), key)));
    for (const r of results) assert.equal(r.statusCode, 202, r.body);
    const ids = new Set(results.map((r) => r.json().data.jobId));
    assert.equal(ids.size, 1);
    assert.equal(results.filter((r) => r.headers['idempotent-replayed'] === 'true').length, 9);
    assert.equal((await jobsOf(ctx, scopeOf(t))).length, 1);
    assert.equal((await balance(ctx, t)).reservedMillicents, results[0]!.json().data.maximumCostMillicents);
    await drain(ctx);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('idempotency in one batch: the same key with two bodies at the same time admits one of them; the other is 409 IDEMPOTENCY_CONFLICT', async () => {
    const ctx = get();
    const t = await tenant(ctx);
    const results = await Promise.all([run(ctx, t, 'image.generate', IMAGE('a'), 'k-conflict'), run(ctx, t, 'image.generate', IMAGE('b'), 'k-conflict')]);
    const admitted = results.findIndex((r) => r.statusCode === 202);
    assert.notEqual(admitted, -1, results.map((r) => r.body).join(' / '));
    const other = results[1 - admitted]!;
    assert.equal(other.statusCode, 409, other.body);
    assert.equal(other.json().code, 'IDEMPOTENCY_CONFLICT');
    const jobs = await jobsOf(ctx, scopeOf(t));
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0]!.id, results[admitted]!.json().data.jobId);
    assert.equal(JSON.parse(jobs[0]!.input_json).prompt, `batched image ${admitted === 0 ? 'a' : 'b'}`);
    await drain(ctx);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('a run refused inside a batch (waiting-jobs capacity) writes nothing for itself; the runs around it are admitted', async () => {
    const ctx = get();
    const t = await tenant(ctx, { waitingJobs: 5 });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => run(ctx, t, 'image.generate', IMAGE(i))));
    const admitted = results.filter((r) => r.statusCode === 202);
    const refused = results.filter((r) => r.statusCode === 429);
    assert.equal(admitted.length, 5);
    assert.equal(refused.length, 3);
    for (const r of refused) {
      assert.equal(r.json().code, 'QUEUE_FULL');
      assert.equal(r.json().details.limit, 'WAITING_JOBS');
    }
    assert.equal((await jobsOf(ctx, scopeOf(t))).length, 5);
    const stored = await ctx.deps.db.selectFrom('idempotency_keys').select('idem_key').where('workspace_id', '=', scopeOf(t)).execute();
    assert.equal(stored.length, 5, 'refused runs leave no stored response');
    const maximum = admitted[0]!.json().data.maximumCostMillicents;
    assert.equal((await balance(ctx, t)).reservedMillicents, 5 * maximum);
    await drain(ctx);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('a stored key still in flight is 409 IDEMPOTENCY_IN_PROGRESS; an expired one is replaced and the run admitted anew', async () => {
    const ctx = get();
    const t = await tenant(ctx);
    const now = ctx.clock.now();
    const hash = requestHash('POST /v1/runs', { operationId: 'image.generate', input: IMAGE('stored') });
    const base = { key_id: t.key.id, workspace_id: scopeOf(t), request_hash: hash, created_at_ms: now };
    await ctx.deps.db
      .insertInto('idempotency_keys')
      .values([
        { ...base, idem_key: 'in-flight', state: 'in_flight', status_code: null, response_json: null, expires_at_ms: now + IDEMPOTENCY_TTL_MS },
        { ...base, idem_key: 'expired', state: 'done', status_code: 202, response_json: '{"kind":"job","jobId":"gone"}', created_at_ms: now - IDEMPOTENCY_TTL_MS - 1, expires_at_ms: now - 1 },
      ])
      .execute();
    const [inFlight, expired] = await Promise.all([
      run(ctx, t, 'image.generate', IMAGE('stored'), 'in-flight'),
      run(ctx, t, 'image.generate', IMAGE('stored'), 'expired'),
    ]);
    assert.equal(inFlight!.statusCode, 409, inFlight!.body);
    assert.equal(inFlight!.json().code, 'IDEMPOTENCY_IN_PROGRESS');
    assert.equal(expired!.statusCode, 202, expired!.body);
    assert.notEqual(expired!.json().data.jobId, 'gone');
    assert.equal(expired!.headers['idempotent-replayed'], undefined);
    await drain(ctx);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('concurrent admissions and finishes of one workspace run as batches on PostgreSQL, none falling back, and every job settles once', async () => {
    const ctx = get();
    const t = await tenant(ctx, { runningJobs: 16 });
    const before = await batchCounts(ctx);
    const worker = new JobWorker(ctx.deps, { concurrency: 16, pollMs: 5 });
    worker.start();
    try {
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => run(ctx, t, 'image.generate', IMAGE(i))));
      for (const r of results) assert.equal(r.statusCode, 202, r.body);
      await waitUntil(() => jobsOf(ctx, scopeOf(t)), (jobs) => jobs.every((j) => j.status === 'completed'), 'every job to complete', 60_000, 20);
    } finally {
      await worker.stop();
    }
    const jobs = await jobsOf(ctx, scopeOf(t));
    const usage = await ctx.deps.db.selectFrom('credit_transactions').select(['job_id', 'amount_mc']).where('workspace_id', '=', scopeOf(t)).where('type', '=', 'usage').execute();
    assert.equal(usage.length, 40, 'one usage entry per job');
    assert.equal(new Set(usage.map((u) => u.job_id)).size, 40);
    for (const j of jobs) assert.equal(Number(usage.find((u) => u.job_id === j.id)!.amount_mc), -Number(j.cost_mc));
    const events = await ctx.deps.db.selectFrom('events').select('type').where('workspace_id', '=', scopeOf(t)).where('type', '=', 'job.completed').execute();
    assert.equal(events.length, 40);
    assert.equal((await balance(ctx, t)).reservedMillicents, 0);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
    const after = await batchCounts(ctx);
    const delta = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
    if (ctx.dbName === 'sqlite') {
      assert.equal(delta('admission:batched') + delta('finish:batched'), 0, 'SQLite admits and finishes one by one');
    } else {
      assert.ok(delta('admission:batched') > 0 && delta('finish:batched') > 0, JSON.stringify(after));
      assert.equal(delta('admission:fallback') + delta('finish:fallback'), 0, JSON.stringify(after));
    }
  });
}, testKeySuite());

describeEachDatabase('batched finishes', (get) => {
  test('finishes arriving together: each job settles once up to its hold, a finish whose lease was lost changes nothing, and versions and events are recorded', async () => {
    const ctx = get();
    const t = await tenant(ctx, { runningJobs: 16 });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => run(ctx, t, 'image.generate', IMAGE(`f${i}`))));
    for (const r of results) assert.equal(r.statusCode, 202, r.body);
    const maximum = results[0]!.json().data.maximumCostMillicents as number;
    const claimed = await claimJobs(ctx.deps, 'test-worker', 6);
    assert.equal(claimed.length, 6);
    const [stale, failed, overspent, ...completed] = claimed;
    const finishes = await Promise.all([
      finishJob(ctx.deps, stale!.id, { workspaceId: scopeOf(t), status: 'completed', from: ['processing'], leaseToken: Number(stale!.lease_token) + 1, consumedMillicents: 100, output: { ok: 1 } }),
      finishJob(ctx.deps, failed!.id, { workspaceId: scopeOf(t), status: 'failed', from: ['processing'], leaseToken: Number(failed!.lease_token), consumedMillicents: 250.7, errorCode: 'PROVIDER_ERROR' }),
      finishJob(ctx.deps, overspent!.id, { workspaceId: scopeOf(t), status: 'completed', from: ['processing'], leaseToken: Number(overspent!.lease_token), consumedMillicents: maximum * 10, output: { ok: 2 } }),
      ...completed.map((j, i) =>
        finishJob(ctx.deps, j.id, { workspaceId: scopeOf(t), status: 'completed', from: ['processing'], leaseToken: Number(j.lease_token), consumedMillicents: 1000 + i, output: { n: i } }),
      ),
    ]);
    assert.equal(finishes[0], undefined, 'a finish under a lost lease changes nothing');
    assert.equal(finishes[1]!.status, 'failed');
    assert.equal(finishes[1]!.error_code, 'PROVIDER_ERROR');
    assert.equal(Number(finishes[1]!.cost_mc), 250, 'failed jobs pay whole millicents consumed');
    assert.equal(Number(finishes[2]!.cost_mc), maximum, 'never more than the hold');
    completed.forEach((j, i) => {
      const row = finishes[3 + i]!;
      assert.equal(row.status, 'completed');
      assert.equal(Number(row.cost_mc), 1000 + i);
      assert.equal(Number(row.progress), 100);
      assert.deepEqual(JSON.parse(row.output_json!), { n: i });
    });
    const staleRow = (await ctx.deps.db.selectFrom('jobs').selectAll().where('id', '=', stale!.id).executeTakeFirstOrThrow());
    assert.equal(staleRow.status, 'processing');
    const open = await ctx.deps.db.selectFrom('credit_holds').select('job_id').where('workspace_id', '=', scopeOf(t)).where('released_at_ms', 'is', null).execute();
    assert.deepEqual(open.map((h) => h.job_id), [stale!.id], 'only the stale job still holds credits');
    for (const row of finishes.slice(1)) {
      const versions = await ctx.deps.db.selectFrom('job_versions').select(['version', 'snapshot_json']).where('job_id', '=', row!.id).orderBy('version').execute();
      const last = versions[versions.length - 1]!;
      assert.equal(last.version, Number(row!.version));
      assert.equal(JSON.parse(last.snapshot_json).status, row!.status);
      assert.equal(JSON.parse(last.snapshot_json).costMillicents, Number(row!.cost_mc));
    }
    const events = await ctx.deps.db.selectFrom('events').select(['type', 'data_json']).where('workspace_id', '=', scopeOf(t)).execute();
    assert.equal(events.filter((e) => e.type === 'job.completed').length, 4);
    assert.equal(events.filter((e) => e.type === 'job.failed').length, 1);
    const usage = await ctx.deps.db.selectFrom('credit_transactions').select(['job_id', 'amount_mc']).where('workspace_id', '=', scopeOf(t)).where('type', '=', 'usage').execute();
    assert.equal(usage.length, 5);
    assert.equal(usage.reduce((s, u) => s + Number(u.amount_mc), 0), -(250 + maximum + 1000 + 1001 + 1002));
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
    // The stale attempt's job is still the current holder's to finish.
    const last = await finishJob(ctx.deps, stale!.id, { workspaceId: scopeOf(t), status: 'completed', from: ['processing'], leaseToken: Number(stale!.lease_token), consumedMillicents: 5, output: {} });
    assert.equal(last!.status, 'completed');
    assert.equal((await balance(ctx, t)).reservedMillicents, 0);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('a finish that carries its last files records their media rows and media.created events with it', async () => {
    const ctx = get();
    const t = await tenant(ctx);
    const res = await run(ctx, t, 'image.generate', IMAGE('with files'));
    assert.equal(res.statusCode, 202, res.body);
    await drain(ctx);
    const media = await ctx.deps.db.selectFrom('media').select(['id', 'job_id']).where('workspace_id', '=', scopeOf(t)).execute();
    assert.ok(media.length >= 1);
    assert.ok(media.every((m) => m.job_id === res.json().data.jobId));
    const created = await ctx.deps.db.selectFrom('events').select('data_json').where('workspace_id', '=', scopeOf(t)).where('type', '=', 'media.created').execute();
    assert.deepEqual(created.map((e) => JSON.parse(e.data_json).media.id).sort(), media.map((m) => m.id).sort());
    const job = await call(ctx, 'GET', `/v1/jobs/${res.json().data.jobId}`, { secret: t.secret, workspaceId: t.workspace.id });
    assert.equal(job.json().data.status, 'completed');
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });
}, testKeySuite());

describeEachDatabase('guarded batch writes (figures read before the lock, re-checked under it)', (get) => {
  test('an admission write whose figures no longer hold (spendable credits lower than read) fails as a guard failure and writes nothing', async (t) => {
    const ctx = get();
    if (ctx.dbName === 'sqlite') return t.skip('PostgreSQL batches only');
    const tn = await tenant(ctx);
    const now = ctx.clock.now();
    const jobId = '01900000-0000-7000-8000-00000000a001';
    const row = { id: jobId, workspace_id: scopeOf(tn), key_id: tn.key.id, operation_id: 'image.generate', tool_slug: 'image', status: 'pending', execution_origin: 'api', funding: 'credits', input_json: '{}', output_json: null, output_sha256: null, progress: 0, cost_mc: 0, max_cost_mc: 10, error_code: null, version: 1, attempt: 1, steps_total: 1, steps_done: 0, checkpoint_json: null, created_at_ms: now, started_at_ms: null, completed_at_ms: null, updated_at_ms: now, run_after_ms: now, lease_token: 0, lease_owner: null, lease_expires_at_ms: null, recoveries: 0 };
    const writes = { jobs: [row as never], holds: [], versions: [], idempotency: [], notify: [] };
    const at = { workspaceId: scopeOf(tn), now };
    const stale = { spendableMillicents: 10_000_000 + 1, waitingJobs: 0, providers: [], ownProviders: [] };
    await assert.rejects(
      batchTransaction(ctx.deps, (tx) => tx.run([lockWorkspaceQuery(ctx.deps.db, scopeOf(tn)), writeAdmissionsQuery(ctx.deps.db, writes, at, stale)], { commit: true })),
      (err: unknown) => isGuardFailure(err),
    );
    assert.equal((await jobsOf(ctx, scopeOf(tn))).length, 0);
    // The same write with the figures as they are goes through.
    const current = { ...stale, spendableMillicents: 10_000_000 };
    await batchTransaction(ctx.deps, (tx) => tx.run([lockWorkspaceQuery(ctx.deps.db, scopeOf(tn)), writeAdmissionsQuery(ctx.deps.db, writes, at, current)], { commit: true }));
    assert.equal((await jobsOf(ctx, scopeOf(tn))).length, 1);
  });

  test('a batched finish sets exactly the columns finishFields gives (the one-by-one path\'s function) and keeps every other', async (t) => {
    const ctx = get();
    if (ctx.dbName === 'sqlite') return t.skip('PostgreSQL batches only');
    const tn = await tenant(ctx);
    const res = await run(ctx, tn, 'image.generate', IMAGE('columns'));
    assert.equal(res.statusCode, 202, res.body);
    const job = (await claimJobs(ctx.deps, 'columns-test', 100)).find((j) => j.id === res.json().data.jobId);
    assert.ok(job, 'this test\'s job was claimed');
    const before = await ctx.deps.db.selectFrom('jobs').selectAll().where('id', '=', job!.id).executeTakeFirstOrThrow();
    ctx.clock.advance(1000);
    const now = ctx.clock.now();
    // A failure without output or checkpoint: output, checkpoint, steps and progress keep their values.
    const fields = finishFields({ status: 'failed', errorCode: 'BOOM' }, now);
    const patch = { id: job!.id, lease_token: Number(job!.lease_token), expected_version: Number(job!.version), fields, charge: 0 };
    const hold = await ctx.deps.db.selectFrom('credit_holds').select('id').where('job_id', '=', job!.id).executeTakeFirstOrThrow();
    const writes = { patches: [patch], debits: [], releasedHolds: [hold.id], ledger: [], versions: [], media: [], events: [], deliveries: [], notify: [] };
    await batchTransaction(ctx.deps, (tx) => tx.run([lockWorkspaceQuery(ctx.deps.db, scopeOf(tn)), writeFinishMoneyQuery(ctx.deps.db, scopeOf(tn), writes, now)], { commit: true }));
    const after = await ctx.deps.db.selectFrom('jobs').selectAll().where('id', '=', job!.id).executeTakeFirstOrThrow();
    const norm = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' && /^-?\d+$/.test(v) && k.endsWith('_ms') ? Number(v) : v]));
    assert.deepEqual(norm(after), norm({ ...before, ...fields, updated_at_ms: now, version: Number(before.version) + 1, cost_mc: before.cost_mc }));
    assert.deepEqual([after.status, after.error_code, after.lease_owner, Number(after.completed_at_ms)], ['failed', 'BOOM', null, now]);
    await drain(ctx);
    await assertLedgerInvariants(ctx.deps, scopeOf(tn));
  });

  test('a finish write for a job row that changed since it was read (version) fails as a guard failure: no status, ledger or hold change', async (t) => {
    const ctx = get();
    if (ctx.dbName === 'sqlite') return t.skip('PostgreSQL batches only');
    const tn = await tenant(ctx);
    const res = await run(ctx, tn, 'image.generate', IMAGE('guard'));
    assert.equal(res.statusCode, 202, res.body);
    const [job] = await claimJobs(ctx.deps, 'guard-test', 1);
    const now = ctx.clock.now();
    const patch = { id: job!.id, lease_token: Number(job!.lease_token), expected_version: Number(job!.version) - 1, fields: finishFields({ status: 'completed', output: {} }, now), charge: 5 };
    const writes = { patches: [patch], debits: [], releasedHolds: [], ledger: [], versions: [], media: [], events: [], deliveries: [], notify: [] };
    await assert.rejects(
      batchTransaction(ctx.deps, (tx) => tx.run([lockWorkspaceQuery(ctx.deps.db, scopeOf(tn)), writeFinishMoneyQuery(ctx.deps.db, scopeOf(tn), writes, now)], { commit: true })),
      (err: unknown) => isGuardFailure(err),
    );
    const after = await ctx.deps.db.selectFrom('jobs').selectAll().where('id', '=', job!.id).executeTakeFirstOrThrow();
    assert.equal(after.status, 'processing');
    assert.equal(Number(after.cost_mc), 0);
    await drain(ctx);
    await assertLedgerInvariants(ctx.deps, scopeOf(tn));
  });
}, testKeySuite());
