/**
 * Crash recovery of the BUILT server (issue 3 Checks: "kill -9 a worker process mid-job, restart,
 * the job finishes or fails cleanly and the ledger invariants hold").
 *
 * A multi-step simulated job (a test key's) runs in a worker process; after at least two checkpoints the worker
 * is killed with SIGKILL (no shutdown code runs, its lease stays). A new worker process recovers
 * the job once the short lease (JOB_LEASE_MS) expired, resumes it after its last checkpoint and
 * completes it. Checked: the job completed; it never went back to steps it had checkpointed; one
 * usage transaction charges each step exactly once; no hold is left open; ledger invariants.
 * A job whose worker dies again and again fails with WORKER_LOST after 3 recoveries, charged for
 * the steps it checkpointed and nothing else.
 *
 * SQLite allows one server process per database file (a lock beside it), so there the one
 * ROLE=all process is killed and restarted. On PostgreSQL (TEST_DATABASE_URL) an API process
 * stays up while the worker process (ROLE=worker) is killed and a new one started.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Deps } from '../../src/deps.js';
import { systemClock } from '../../src/lib/clock.js';
import { sumOpenHolds } from '../../src/modules/billing/store.js';
import { createTestDatabase, testDatabaseNames, type TestDatabase } from '../support/databases.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { httpJson, type HttpTenant, PROCESS_SECRET_KEY, readJob, seedTenantOverHttp, type ServerProcess, startServer } from '../support/processes.js';
import { waitUntil } from '../support/wait.js';
import { needsDist } from '../support/requirements.js';

const STEPS = 5;
const COST = 2_500; // below the hold (music.generate of 10 s holds 5000), so a step charged twice would show
const STEP_COST = COST / STEPS;
const LEASE_MS = 4_000;
const RAISED_LIMITS = { pointsPerMinute: 1_000_000, waitingJobs: 1_000 };

const databases = testDatabaseNames().filter((n) => n !== 'pglite'); // PGlite lives inside one process

for (const name of databases) {
  describe(`worker crash mid-job [${name}]`, { skip: needsDist() }, () => {
    let database: TestDatabase;
    let dataDir: string;
    const processes: ServerProcess[] = [];

    before(async () => {
      database = await createTestDatabase(name);
      dataDir = mkdtempSync(join(tmpdir(), 'was-crash-'));
    });

    after(async () => {
      for (const p of processes) await p.crash();
      await database.handle.close();
      await database.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    });

    async function start(role: 'all' | 'api' | 'worker'): Promise<ServerProcess> {
      const p = await startServer({ ROLE: role, DATABASE_URL: database.url!, DATA_DIR: dataDir, SECRET_KEY: PROCESS_SECRET_KEY, JOB_LEASE_MS: String(LEASE_MS) });
      processes.push(p);
      return p;
    }

    test('kill -9 after two checkpoints: the job resumes from its checkpoint, each step is charged once, the ledger holds', async () => {
      const split = name !== 'sqlite';
      const api = await start(split ? 'api' : 'all');
      const worker = split ? await start('worker') : api;
      const t = await seedTenantOverHttp(api.base, 100_000, RAISED_LIMITS, { mode: 'test' });

      const prompt = `a calm tune [sim:steps=${STEPS}][sim:delay=${STEPS * 1_500}][sim:cost=${COST}]`;
      const admitted = await httpJson(api.base, 'POST', '/v1/runs', {
        headers: { ...t.headers, 'idempotency-key': 'crash-test-run' },
        body: { operationId: 'music.generate', input: { prompt, durationSeconds: 10 } },
      });
      assert.equal(admitted.status, 202, JSON.stringify(admitted.body));
      const jobId: string = admitted.body.data.jobId;

      const before = await waitUntil(
        () => readJob(api.base, t, jobId),
        (j) => j.status === 'processing' && j.progress.percentage >= 40,
        'two checkpoints',
      );
      await worker.crash();
      const atCrash = await readJobRow(database, jobId);
      assert.equal(atCrash.status, 'processing', 'the killed worker could not finish the job');
      const checkpointed = stepsDoneOf(atCrash);
      assert.ok(checkpointed >= 2 && checkpointed < STEPS, `crashed after ${checkpointed} checkpointed steps (progress ${before.progress.percentage})`);

      const base = split ? api.base : (await start('all')).base;
      if (split) await start('worker');
      const done = await waitUntil(
        () => readJob(base, t, jobId),
        (j) => ['completed', 'failed', 'cancelled'].includes(j.status),
        'the recovered job to finish',
        120_000,
        250,
      );
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(done.errorCode, null);
      assert.equal(done.costMillicents, COST, `${STEPS} steps of ${STEP_COST} each, none charged twice`);

      const row = await readJobRow(database, jobId);
      assert.equal(Number(row.recoveries), 1, 'recovered once, after its lease expired');
      assert.equal(Number(row.steps_done), STEPS);

      // Never back to a step it had checkpointed: after the recovery every progress is at least
      // what the crashed attempt had reached (a restart from scratch would report 20 % again).
      const versions = await database.handle.db
        .selectFrom('job_versions')
        .select(['version', 'snapshot_json'])
        .where('job_id', '=', jobId)
        .orderBy('version')
        .execute();
      const snapshots = versions.map((v) => JSON.parse(v.snapshot_json) as { status: string; progress: { percentage: number } });
      const recoveredAt = snapshots.findIndex((s, i) => i > 0 && s.status === 'pending' && snapshots[i - 1]!.status === 'processing');
      assert.ok(recoveredAt > 0, `a recovery back to pending is recorded: ${snapshots.map((s) => s.status).join(',')}`);
      const reached = Math.max(...snapshots.slice(0, recoveredAt).map((s) => s.progress.percentage));
      const afterwards = snapshots.slice(recoveredAt).map((s) => s.progress.percentage);
      assert.ok(afterwards.every((p) => p >= reached), `progress after recovery ${afterwards.join(',')} never drops below ${reached}`);

      const usage = await database.handle.db
        .selectFrom('credit_transactions')
        .select(['type', 'amount_mc'])
        .where('job_id', '=', jobId)
        .execute();
      assert.deepEqual(usage.map((u) => [u.type, Number(u.amount_mc)]), [['usage', -COST]], 'one usage transaction for the whole job');

      for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) assert.equal(await p.stop(), 0, 'graceful exit');
      assert.equal(await sumOpenHolds(database.handle.db, t.scope), 0, 'no hold left open');
      await assertLedgerInvariants({ db: database.handle.db, clock: systemClock } as unknown as Deps, t.scope);
    });

    test('a job whose worker keeps dying fails with WORKER_LOST after 3 recoveries, charged once for each checkpointed step', async () => {
      const split = name !== 'sqlite';
      const api = await start(split ? 'api' : 'all');
      let worker = split ? await start('worker') : api;
      const t = await seedTenantOverHttp(api.base, 100_000, RAISED_LIMITS, { mode: 'test' });
      const steps = 20;
      const prompt = `an endless tune [sim:steps=${steps}][sim:delay=${steps * 1_000}][sim:cost=${steps * 100}]`;
      const admitted = await httpJson(api.base, 'POST', '/v1/runs', {
        headers: { ...t.headers, 'idempotency-key': 'crash-test-worker-lost' },
        body: { operationId: 'music.generate', input: { prompt, durationSeconds: 10 } },
      });
      assert.equal(admitted.status, 202, JSON.stringify(admitted.body));
      const jobId: string = admitted.body.data.jobId;

      let checkpointed = 0;
      for (let kill = 1; kill <= 4; kill++) {
        // Each worker gets at least one step further than the last before it dies.
        const row = await waitUntil(
          () => readJobRow(database, jobId),
          (r) => r.status === 'processing' && Number(r.recoveries) === kill - 1 && stepsDoneOf(r) > checkpointed,
          `a new checkpoint before kill ${kill}`,
          90_000,
          100,
        );
        assert.ok(row);
        await worker.crash();
        checkpointed = stepsDoneOf(await readJobRow(database, jobId));
        worker = await start(split ? 'worker' : 'all');
      }
      const failed = await waitUntil(() => readJobRow(database, jobId), (r) => r.status !== 'processing' && r.status !== 'pending', 'the job to fail', 90_000, 100);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error_code, 'WORKER_LOST');
      const done = stepsDoneOf(failed);
      assert.ok(done >= 4 && done < steps, `${done} steps checkpointed`);
      const snapshot = await readJob(split ? api.base : worker.base, t, jobId);
      assert.equal(snapshot.status, 'failed');
      assert.equal(snapshot.errorCode, 'WORKER_LOST');
      assert.equal(snapshot.costMillicents, done * 100, 'each checkpointed step charged once, nothing for the lost work');
      const usage = await database.handle.db.selectFrom('credit_transactions').select(['type', 'amount_mc']).where('job_id', '=', jobId).execute();
      assert.deepEqual(usage.map((u) => [u.type, Number(u.amount_mc)]), [['usage', -done * 100]]);

      for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) assert.equal(await p.stop(), 0, 'graceful exit');
      assert.equal(await sumOpenHolds(database.handle.db, t.scope), 0, 'no hold left open');
      await assertLedgerInvariants({ db: database.handle.db, clock: systemClock } as unknown as Deps, t.scope);
    });
  });
}

function stepsDoneOf(row: { checkpoint_json: string | null }): number {
  return row.checkpoint_json ? Number((JSON.parse(row.checkpoint_json) as { stepsDone?: number }).stepsDone ?? 0) : 0;
}

async function readJobRow(database: TestDatabase, jobId: string) {
  return database.handle.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
}
