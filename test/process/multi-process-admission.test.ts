/**
 * Admission across server processes (issue 3 Checks: "200 parallel runs against credits that cover
 * exactly K maximum costs admit exactly K … repeat with two server processes on PostgreSQL").
 *
 * Two BUILT API processes share one fresh PostgreSQL database; 200 parallel POST /v1/runs are
 * split between them over real sockets. Each admission reserves under the workspace row lock,
 * so exactly K are admitted (202) and the rest are 402 INSUFFICIENT_CREDITS, whichever process
 * took them; reserved = K × maximum cost. A worker process then runs the K jobs, after which no
 * hold is open and the ledger invariants hold. Runs only when TEST_DATABASE_URL is set (SQLite
 * allows one process per database; PGlite lives inside one process).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Deps } from '../../src/deps.js';
import { systemClock } from '../../src/lib/clock.js';
import { sumOpenHolds } from '../../src/modules/billing/store.js';
import { findOperation } from '../../src/operations/registry.js';
import { createTestDatabase, testDatabaseNames, type TestDatabase } from '../support/databases.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { distMissing, DIST_MAIN, httpJson, PROCESS_SECRET_KEY, seedTenantOverHttp, startServer, type ServerProcess } from '../support/processes.js';
import { waitUntil } from '../support/wait.js';

const K = 7;
const RUNS = 200;
const MUSIC = (i: number) => ({ prompt: `tune ${i} [sim:delay=0]`, durationSeconds: 10 });
const MUSIC_MAX = findOperation('music.generate')!.price(MUSIC(0)).maximumMillicents;

const skip = !testDatabaseNames().includes('postgres')
  ? 'needs TEST_DATABASE_URL (two processes on one PostgreSQL)'
  : distMissing
    ? `${DIST_MAIN} is missing: run \`npm run build\` first (npm test does)`
    : false;

describe('admission across two server processes [postgres]', { skip }, () => {
  let database: TestDatabase;
  let dataDir: string;
  const processes: ServerProcess[] = [];

  before(async () => {
    database = await createTestDatabase('postgres');
    dataDir = mkdtempSync(join(tmpdir(), 'was-multi-'));
  });

  after(async () => {
    for (const p of processes) await p.crash();
    if (database) {
      await database.handle.close();
      await database.dispose();
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(role: 'api' | 'worker'): Promise<ServerProcess> {
    // No first test grant: the test balance is exactly what seedTenantOverHttp grants.
    const p = await startServer({ ROLE: role, DATABASE_URL: database.url!, DATA_DIR: dataDir, SECRET_KEY: PROCESS_SECRET_KEY, TEST_CREDITS_MILLICENTS: '0' });
    processes.push(p);
    return p;
  }

  test(`${RUNS} parallel runs split over two API processes against credits for exactly K maximum costs admit exactly K`, async () => {
    const [one, two] = [await start('api'), await start('api')];
    // A test key (simulated work); database reads go to its test twin (t.scope).
    const t = await seedTenantOverHttp(one!.base, K * MUSIC_MAX, { pointsPerMinute: 1_000_000, waitingJobs: 1_000 }, { mode: 'test' });

    const results = await Promise.all(
      Array.from({ length: RUNS }, (_, i) =>
        httpJson(i % 2 ? two!.base : one!.base, 'POST', '/v1/runs', {
          headers: { ...t.headers, 'idempotency-key': randomUUID() },
          body: { operationId: 'music.generate', input: MUSIC(i) },
        }),
      ),
    );
    const admitted = results.filter((r) => r.status === 202);
    const refused = results.filter((r) => r.status === 402);
    assert.equal(admitted.length, K, `statuses: ${JSON.stringify(results.map((r) => r.status))}`);
    assert.equal(refused.length, RUNS - K);
    for (const r of refused) assert.equal(r.body.code, 'INSUFFICIENT_CREDITS');
    for (const r of admitted) assert.equal(r.body.data.maximumCostMillicents, MUSIC_MAX);

    for (const p of [one!, two!]) {
      const b = await httpJson(p.base, 'GET', '/v1/balance', { headers: t.headers });
      assert.equal(b.status, 200);
      assert.deepEqual(
        [b.body.data.totalMillicents, b.body.data.reservedMillicents, b.body.data.spendableMillicents],
        [K * MUSIC_MAX, K * MUSIC_MAX, 0],
        'both processes see the same reservation',
      );
    }
    const jobs = await database.handle.db.selectFrom('jobs').select('id').where('workspace_id', '=', t.scope).execute();
    assert.equal(jobs.length, K, 'a job row per admitted run, none for refused ones');
    assert.equal(await sumOpenHolds(database.handle.db, t.scope), K * MUSIC_MAX);
    const deps = { db: database.handle.db, clock: systemClock } as unknown as Deps;
    await assertLedgerInvariants(deps, t.scope);

    await start('worker');
    await waitUntil(() => sumOpenHolds(database.handle.db, t.scope), (held) => held === 0, 'the worker to settle every admitted job');
    const statuses = await database.handle.db.selectFrom('jobs').select('status').where('workspace_id', '=', t.scope).execute();
    assert.deepEqual(statuses.map((s) => s.status), Array(K).fill('completed'));
    await assertLedgerInvariants(deps, t.scope);
    for (const p of processes) assert.equal(await p.stop(), 0, 'graceful exit');
  });
});
