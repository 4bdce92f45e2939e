/**
 * Admissions, completions and cancels of one workspace at the same time, with a running worker.
 * On PostgreSQL admissions and finishes of a workspace share transactions (group commit) and
 * every transaction that locks the workspace and job rows takes the workspace first; a lock
 * cycle would surface here as a failed request or a job stuck in processing.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, call, describeEachDatabase, testKeySuite } from '../support/harness.js';
import { scopeOf, seedTenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { balance, run } from '../support/jobs.js';
import { JobWorker } from '../../src/worker/job-worker.js';
import { waitUntil } from '../support/wait.js';
import { checkRefusals } from '../support/openapi-responses.js';

describeEachDatabase('jobs of one workspace racing', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('admissions, completions and cancels interleave: every request answers, every job ends in exactly one terminal state, the ledger holds', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 10_000_000, mode: 'test' });
    const limits = { pointsPerMinute: 1_000_000, pointsPerMonth: 10_000_000, runningJobs: 8, waitingJobs: 1000 };
    assert.equal((await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits })).statusCode, 200);
    const worker = new JobWorker(ctx.deps, { concurrency: 8, pollMs: 5 });
    worker.start();
    const ids: string[] = [];
    try {
      for (let wave = 0; wave < 3; wave++) {
        const runs = await Promise.all(
          Array.from({ length: 12 }, (_, i) => run(ctx, t, 'image.generate', { prompt: `wave ${wave} image ${i} [sim:delay=${(i % 3) * 4}][sim:steps=2]` })),
        );
        for (const r of runs) assert.equal(r.statusCode, 202, r.body);
        const wave_ = runs.map((r) => r.json().data.jobId as string);
        ids.push(...wave_);
        const cancels = await Promise.all(
          wave_.filter((_, i) => i % 2 === 0).map((id) => call(ctx, 'POST', `/v1/jobs/${id}/cancel`, { secret: t.secret, workspaceId: t.workspace.id })),
        );
        for (const c of cancels) assert.ok(c.statusCode === 200 || (c.statusCode === 409 && c.json().code === 'JOB_NOT_CANCELLABLE'), `${c.statusCode} ${c.body}`);
      }
      const openJobs = async () =>
        Number(
          (
            await ctx.deps.db
              .selectFrom('jobs')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('workspace_id', '=', scopeOf(t))
              .where('status', 'in', ['pending', 'processing'])
              .executeTakeFirstOrThrow()
          ).n,
        );
      await waitUntil(openJobs, (n) => n === 0, 'every job of the workspace to end', 60_000, 20);
    } finally {
      await worker.stop();
    }
    const versions = await ctx.deps.db.selectFrom('job_versions').select(['job_id', 'snapshot_json']).where('job_id', 'in', ids).execute();
    for (const id of ids) {
      const terminal = versions.filter((v) => v.job_id === id && ['completed', 'failed', 'cancelled'].includes(JSON.parse(v.snapshot_json).status));
      assert.equal(terminal.length, 1, `job ${id}: one terminal version`);
    }
    const cancelled = versions.filter((v) => JSON.parse(v.snapshot_json).status === 'cancelled').length;
    assert.ok(cancelled >= 1, 'some cancels won');
    assert.equal((await balance(ctx, t)).reservedMillicents, 0);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });
}, testKeySuite());
