/**
 * API processes killed mid-admission on PostgreSQL (issue 32, item 6). Two BUILT API processes and
 * one worker process share a PostgreSQL database; four clients start queued runs over real
 * sockets without pause, each retrying its Idempotency-Key, unchanged, on whichever API process is
 * up until the run is acknowledged (test/support/fault-load.ts). Twenty times, one API process is
 * killed with SIGKILL while admissions are in flight (no shutdown code runs: pipelined admissions
 * are cut wherever they are, before, during or after their commit) and a new one takes its place.
 *
 * What must hold afterwards: every acknowledged run (202, first or replayed) has its job and no
 * job exists that was not acknowledged; one job per Idempotency-Key (a retry replays the first
 * admission, never admits a second); every job has exactly one hold and every hold a job, released
 * once the job finished; every job's usage entries sum to its cost; the ledger invariants hold;
 * apart from cut connections, every answer was a documented one and none came later than its
 * deadline. Uses TEST_DATABASE_URL (a fresh database there) or, without it, a private cluster;
 * skips with the reason when neither is possible (CI=true: fails).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Deps } from '../../src/deps.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { admissionProblems, RunLoad } from '../support/fault-load.js';
import { privatePostgresMissing, privatePostgresSkip, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';
import { distMissing, DIST_MAIN, PROCESS_SECRET_KEY, seedTenantOverHttp, startServer, type ServerProcess } from '../support/processes.js';
import { waitUntil } from '../support/wait.js';

const KILLS = 20;
const WRITERS = 4;
const DEADLINE_MS = 10_000;
const RUN = (i: number) => ({ operationId: 'music.generate', input: { prompt: `kill ${i} [sim:delay=0]`, durationSeconds: 10 } });

const skip = distMissing
  ? `${DIST_MAIN} is missing: run \`npm run build\` first (npm test does)`
  : process.env.TEST_DATABASE_URL
    ? false
    : privatePostgresMissing
      ? privatePostgresSkip() && `needs TEST_DATABASE_URL or a private PostgreSQL cluster: ${privatePostgresMissing}`
      : false;

describe('API processes killed mid-admission [postgres]', { skip }, () => {
  let database: TestDatabase | undefined;
  let cluster: PrivatePostgres | undefined;
  let handle: DatabaseHandle;
  let url: string;
  let dataDir: string;
  const processes: ServerProcess[] = [];

  before(async () => {
    if (process.env.TEST_DATABASE_URL) {
      database = await createTestDatabase('postgres');
      handle = database.handle;
      url = database.url!;
    } else {
      cluster = await startPrivatePostgres();
      url = cluster.url;
      handle = await openDatabase(url, { poolMax: 4 });
    }
    dataDir = mkdtempSync(join(tmpdir(), 'was-api-kill-'));
  });

  after(async () => {
    for (const p of processes) await p.crash();
    if (database) {
      await database.handle.close();
      await database.dispose();
    } else {
      await handle?.close();
      await cluster?.dispose();
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test(`${KILLS} kill -9 of an API process under load: no lost, duplicate or half-made admission`, async (ctx) => {
    const env = { DATABASE_URL: url, DATA_DIR: dataDir, SECRET_KEY: PROCESS_SECRET_KEY, LOG_LEVEL: 'warn' };
    const start = async (role: 'api' | 'worker') => {
      // "service started" is an info line: keep it, drop the per-request lines of a busy process.
      const p = await startServer({ ...env, ROLE: role, LOG_LEVEL: 'info' });
      processes.push(p);
      return p;
    };
    const apis = [await start('api'), await start('api')];
    await start('worker');
    // A test key (simulated work); database reads go to its test twin (t.scope).
    const t = await seedTenantOverHttp(apis[0]!.base, 1_000_000_000, { pointsPerMinute: 10_000_000, pointsPerMonth: 100_000_000, waitingJobs: 100_000, runningJobs: 64, streams: 10 }, { mode: 'test' });

    const alive = (p: ServerProcess) => p.child.exitCode === null && p.child.signalCode === null;
    const load = new RunLoad({ bases: () => apis.filter(alive).map((a) => a.base), headers: t.headers, body: RUN, deadlineMs: DEADLINE_MS, connectionErrorsExpected: true });
    load.start(WRITERS);
    const started = Date.now();
    for (let kill = 0; kill < KILLS; kill++) {
      load.resume();
      const before = load.acked.size;
      await waitUntil(() => load.acked.size, (n) => n >= before + 2 * WRITERS, `admissions flowing before kill ${kill + 1}`, 30_000, 5);
      const victim = kill % 2;
      await apis[victim]!.crash();
      // While the replacement starts, runs cut by the kill are sent again to the surviving process;
      // new ones wait (a start on a busy machine takes seconds, and the kills, not the runs, are the test).
      load.pause();
      apis[victim] = await start('api');
    }
    await load.stop();
    const killing = Date.now() - started;

    assert.deepEqual(load.problems, [], 'every answer documented, none late, one job per key');
    assert.ok(load.connectionErrors >= KILLS / 2, `the kills cut requests in flight (${load.connectionErrors} cut)`);
    const jobIds = [...load.acked.values()];
    await waitUntil(
      async () => (await handle.db.selectFrom('jobs').select('id').where('workspace_id', '=', t.scope).where('status', '!=', 'completed').execute()).length,
      (n) => n === 0,
      'the worker to complete every job',
      60_000,
      250,
    );
    assert.deepEqual(await admissionProblems(handle.db, t.scope, load.acked), []);
    await assertLedgerInvariants({ db: handle.db, clock: systemClock } as unknown as Deps, t.scope);
    ctx.diagnostic(`${KILLS} kills in ${killing} ms; ${jobIds.length} runs acknowledged, ${load.connectionErrors} requests cut or refused by a killed process and sent again, ${load.count(503)} answered 503`);
    for (const p of processes.filter(alive)) assert.equal(await p.stop(), 0, 'graceful exit');
  });
});
