/**
 * A full disk (issue 32, item 4; docs/operations.md "A full disk"). The BUILT server runs with its
 * DATA_DIR on a small tmpfs of the test's own (test/support/small-disk.ts), which the test fills to
 * the last byte with a filler file and frees again by deleting it. On SQLite the embedded database
 * lives in that DATA_DIR, so it runs out of space too; on PostgreSQL (TEST_DATABASE_URL) only the
 * media files do.
 *
 * What must hold:
 * - an upload on the full disk is 507 STORAGE_FULL, and leaves no media item, no blob and no staged
 *   file (the media table and the blob directory are read);
 * - a job whose produced file cannot be written fails with errorCode STORAGE_FULL, its hold
 *   released, nothing of its file left behind;
 * - (SQLite) runs until the database itself cannot grow: every answer is 202 or 507 STORAGE_FULL
 *   (details.storage "database"), never a 500; `PRAGMA integrity_check` is ok meanwhile and after;
 * - once the filler is deleted, everything works again without a restart: an upload succeeds, a
 *   job succeeds, every admitted job ends (completed, or failed with STORAGE_FULL), and then no
 *   hold is without its job or open for a finished one, usage entries sum to each job's cost, the
 *   ledger invariants hold (test/support/ledger.ts), every blob has its media row, every pooled
 *   file holds the bytes its name (their SHA-256) says, and the server stops cleanly.
 * Needs root to mount the tmpfs: skips with the reason printed elsewhere; with CI=true it fails.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Deps } from '../../src/deps.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestDatabase, testDatabaseNames, type TestDatabase } from '../support/databases.js';
import { admissionProblems } from '../support/fault-load.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { png } from '../support/media.js';
import { httpJson, type HttpResult, type HttpTenant, PROCESS_SECRET_KEY, readJob, seedTenantOverHttp, type ServerProcess, startServer } from '../support/processes.js';
import { needsDist } from '../support/requirements.js';
import { mountSmallDisk, needsSmallDisk, type SmallDisk } from '../support/small-disk.js';
import { waitUntil } from '../support/wait.js';

const DISK_MIB = 48;
const LEASE_MS = 3_000;
const RAISED_LIMITS = { pointsPerMinute: 1_000_000, pointsPerMonth: 100_000_000, waitingJobs: 10_000, runningJobs: 1_000 };
const TERMINAL = ['completed', 'failed', 'cancelled'];

const skip = needsDist() || needsSmallDisk();
const databases = testDatabaseNames().filter((n) => n !== 'pglite'); // PGlite lives inside one process

async function uploadOverHttp(base: string, t: HttpTenant, bytes: Buffer, name: string): Promise<HttpResult> {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'image/png' }), name);
  const res = await fetch(`${base}/v1/media/upload`, { method: 'POST', headers: t.headers, body: form });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function assertStorageFull(r: HttpResult, storage?: 'files' | 'database'): void {
  assert.equal(r.status, 507, JSON.stringify(r.body));
  assert.equal(r.body.success, false);
  assert.equal(r.body.code, 'STORAGE_FULL');
  assert.match(r.body.message, /storage is full/);
  if (storage) assert.equal(r.body.details.storage, storage, JSON.stringify(r.body));
}

for (const name of databases) {
  describe(`a full disk under the built server [${name}]`, { skip }, () => {
    let disk: SmallDisk;
    let dataDir: string;
    let external: TestDatabase | undefined;
    let server: ServerProcess | undefined;
    let db: DatabaseHandle | undefined;

    before(async () => {
      disk = mountSmallDisk(DISK_MIB);
      dataDir = join(disk.dir, 'data');
      if (name !== 'sqlite') external = await createTestDatabase(name);
    });

    after(async () => {
      await server?.crash();
      if (!external) await db?.close();
      if (external) {
        await external.handle.close();
        await external.dispose();
      }
      // Undefined when the mount itself failed in before().
      (disk as SmallDisk | undefined)?.unmount();
    });

    /** The embedded database file checked by a connection of its own (read-only, beside the server). */
    function integrityCheck(): string {
      const file = join(dataDir, 'service.db');
      const check = new Database(file, { readonly: true, fileMustExist: true });
      try {
        return (check.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join('; ');
      } finally {
        check.close();
      }
    }

    async function mediaRows(workspaceId: string): Promise<string[]> {
      const rows = await db!.db.selectFrom('media').select('storage_key').where('workspace_id', '=', workspaceId).execute();
      return rows.map((r) => r.storage_key).sort();
    }

    /** Blobs on disk of the workspace, files in staging, and pooled files whose bytes do not match their name. */
    function blobDirectory(workspaceId: string) {
      const media = join(dataDir, 'media');
      const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
      const pool = join(media, '.pool');
      return {
        blobs: list(join(media, workspaceId)).map((f) => `${workspaceId}/${f}`).sort(),
        staged: list(join(media, '.staging')),
        badPoolFiles: list(pool).filter((f) => createHash('sha256').update(readFileSync(join(pool, f))).digest('hex') !== f),
      };
    }

    async function assertNothingPartial(workspaceId: string): Promise<void> {
      const dir = blobDirectory(workspaceId);
      assert.deepEqual(dir.blobs, await mediaRows(workspaceId), 'the blobs on disk are exactly the media rows');
      assert.deepEqual(dir.staged, [], 'no staged upload left');
      assert.deepEqual(dir.badPoolFiles, [], 'every pooled file is whole');
    }

    async function runJob(t: HttpTenant, key: string, input: Record<string, unknown>, operationId = 'video.generate'): Promise<HttpResult> {
      return httpJson(server!.base, 'POST', '/v1/runs', { headers: { ...t.headers, 'idempotency-key': key }, body: { operationId, input } });
    }

    test('uploads and produced files fail with STORAGE_FULL leaving nothing partial, the database stays intact, and all works again once space is freed', async () => {
      server = await startServer({
        DATA_DIR: dataDir,
        SECRET_KEY: PROCESS_SECRET_KEY,
        JOB_LEASE_MS: String(LEASE_MS),
        ...(external ? { DATABASE_URL: external.url! } : {}),
      });
      db = external ? external.handle : await openDatabase(`sqlite:${join(dataDir, 'service.db')}`);
      // A test key (simulated work); database and storage reads go to its test twin (t.scope).
      const t = await seedTenantOverHttp(server.base, 1_000_000_000, RAISED_LIMITS, { mode: 'test' });
      const acked = new Map<string, string>();

      // Before: an upload and a job with a file.
      const first = await uploadOverHttp(server.base, t, await png(24, 24), 'before.png');
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const warmKey = randomUUID();
      const warm = await runJob(t, warmKey, { prompt: 'before the disk fills [sim:steps=1]', durationSeconds: 1 });
      assert.equal(warm.status, 202, JSON.stringify(warm.body));
      acked.set(warmKey, warm.body.data.jobId);
      assert.equal((await waitUntil(() => readJob(server!.base, t, warm.body.data.jobId), (j) => TERMINAL.includes(j.status), 'the first job')).status, 'completed');

      // A job admitted now writes its file (a video of a length not made before, so new bytes) after the disk filled.
      const lateKey = randomUUID();
      const late = await runJob(t, lateKey, { prompt: 'written onto a full disk [sim:steps=1][sim:delay=2500]', durationSeconds: 2 });
      assert.equal(late.status, 202, JSON.stringify(late.body));
      const lateId: string = late.body.data.jobId;
      acked.set(lateKey, lateId);
      await waitUntil(() => readJob(server!.base, t, lateId), (j) => j.status === 'processing', 'the job to start');
      const rowsBefore = await mediaRows(t.scope);

      const filled = disk.fill();
      assert.ok(filled > 0 && disk.available() === 0, `the disk is full (${filled} bytes of filler)`);

      // The job: its file cannot be written; it fails with STORAGE_FULL and its hold is released.
      const failed = await waitUntil(() => readJob(server!.base, t, lateId), (j) => TERMINAL.includes(j.status), 'the job on the full disk to end', 30_000);
      assert.equal(failed.status, 'failed', JSON.stringify(failed));
      assert.equal(failed.errorCode, 'STORAGE_FULL');
      assert.equal(failed.costMillicents, 0, 'nothing charged for a result that could not be stored');
      const hold = await db.db.selectFrom('credit_holds').select('released_at_ms').where('job_id', '=', lateId).executeTakeFirstOrThrow();
      assert.notEqual(hold.released_at_ms, null, 'its hold is released');
      assert.deepEqual(await mediaRows(t.scope), rowsBefore, 'no media item of the failed job');
      await assertNothingPartial(t.scope);
      await assertLedgerInvariants({ db: db.db, clock: systemClock } as unknown as Deps, t.scope);

      // An upload of 4 MiB: 507 STORAGE_FULL, delivered while the body is still arriving, and
      // nothing of it anywhere.
      const refused = await uploadOverHttp(server.base, t, randomBytes(4 * 1024 * 1024), 'full.png');
      assertStorageFull(refused);
      assert.deepEqual(await mediaRows(t.scope), rowsBefore, 'no media item was added');
      await assertNothingPartial(t.scope);

      if (name === 'sqlite') assert.equal(integrityCheck(), 'ok');

      if (name === 'sqlite') {
        // The database itself full: runs until SQLite cannot grow its WAL or file. Every answer is a
        // 202 or the 507, never a 500.
        let databaseFull: HttpResult | undefined;
        for (let i = 0; i < 2_000 && !databaseFull; i++) {
          const key = randomUUID();
          const r = await runJob(t, key, { prompt: `filling the database ${i} ${'x'.repeat(1500)}`, width: 1024, height: 1024 }, 'image.generate');
          if (r.status === 202) acked.set(key, r.body.data.jobId);
          else {
            assertStorageFull(r, 'database');
            databaseFull = r;
          }
        }
        assert.ok(databaseFull, 'the embedded database ran out of space');
        const alsoRefused = await uploadOverHttp(server.base, t, await png(30, 30), 'db-full.png');
        assertStorageFull(alsoRefused);
        assert.equal(integrityCheck(), 'ok', 'the database is intact while full');
        // (The blob directory is checked once every job has ended: jobs of the runs above are
        // writing, and failing to write, files meanwhile.)
      }

      // Space again: no restart needed.
      disk.free();
      assert.ok(disk.available() > 0);
      const afterUpload = await uploadOverHttp(server.base, t, await png(300, 300), 'after.png');
      assert.equal(afterUpload.status, 200, JSON.stringify(afterUpload.body));
      const againKey = randomUUID();
      const again = await runJob(t, againKey, { prompt: 'after the disk was freed [sim:steps=1]', durationSeconds: 3 });
      assert.equal(again.status, 202, JSON.stringify(again.body));
      acked.set(againKey, again.body.data.jobId);
      const done = await waitUntil(() => readJob(server!.base, t, again.body.data.jobId), (j) => TERMINAL.includes(j.status), 'the job after the disk was freed', 60_000);
      assert.equal(done.status, 'completed', JSON.stringify(done));

      // Every admitted job ends (a finish the full database could not record is recovered after its lease).
      const jobIds = [...acked.values()];
      await waitUntil(
        async () => db!.db.selectFrom('jobs').select(['id', 'status', 'error_code']).where('workspace_id', '=', t.scope).execute(),
        (rows) => rows.length === jobIds.length && rows.every((r) => TERMINAL.includes(r.status)),
        'every admitted job to end',
        120_000,
        250,
      );
      const jobs = await db.db.selectFrom('jobs').select(['id', 'status', 'error_code']).where('workspace_id', '=', t.scope).execute();
      for (const j of jobs) assert.ok(j.status === 'completed' || (j.status === 'failed' && j.error_code === 'STORAGE_FULL'), `job ${j.id}: ${j.status} ${j.error_code}`);
      assert.deepEqual(await admissionProblems(db.db, t.scope, acked), []);
      await assertLedgerInvariants({ db: db.db, clock: systemClock } as unknown as Deps, t.scope);
      await assertNothingPartial(t.scope);

      assert.equal(await server.stop(), 0, 'the server stops cleanly');
      server = undefined;
      if (name === 'sqlite') {
        await db.close();
        db = undefined;
        assert.equal(integrityCheck(), 'ok', 'the database is intact after the server stopped');
      }
    });
  });
}
