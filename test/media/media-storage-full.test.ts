/**
 * A full disk, in process (issue 32, item 4; docs/operations.md "A full disk"): the media store
 * failing with ENOSPC or EDQUOT in the middle of a write, and the embedded database refusing to
 * grow (SQLITE_FULL, from a `max_page_count` at its current size). The rules checked:
 *
 * - an upload that cannot be stored is 507 STORAGE_FULL and leaves no media row, no event, no
 *   blob (not even the part written before the disk filled) and no staged file;
 * - a job whose files cannot be stored fails with errorCode STORAGE_FULL, charged only for the
 *   steps recorded before (their files stay media items), its hold released, no blob without its
 *   row; a retry once there is space runs the rest and completes, each step charged once;
 * - when SQLite itself is full, every answer is the 507 or a success (never a 500), the database
 *   passes `PRAGMA integrity_check`, no hold is without its job or job without its hold, a job that
 *   could not record its finish is left to lease recovery, and all of it works again once the
 *   database may grow.
 *
 * The built server on a real full file system (a small tmpfs) is test/process/full-disk.test.ts.
 * Tenants that run operations use test keys (simulated work, the test balance; their rows and
 * blobs are under the test twin's id, scopeOf); the uploads alone stay live.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { inTransaction } from '../../src/db/group-commit.js';
import { call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { scopeOf, seedTenant, type Tenant } from '../support/seed.js';
import { drain, getJob, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { admissionProblems } from '../support/fault-load.js';
import { assertError } from '../support/assertions.js';
import { footprint, png, upload } from '../support/media.js';
import { sumOpenHolds } from '../../src/modules/billing/store.js';
import { stepCost } from '../../src/providers/simulated.js';
import type { BlobStore } from '../../src/modules/media/blob-store.js';
import { fullStorageOf } from '../../src/lib/storage-full.js';
import { claimJobs } from '../../src/worker/job-claim.js';
import { executeJob } from '../../src/modules/jobs/executor.js';
import { testDatabaseNames } from '../support/databases.js';

function noSpace(code: 'ENOSPC' | 'EDQUOT' = 'ENOSPC'): NodeJS.ErrnoException {
  const message = code === 'ENOSPC' ? 'no space left on device' : 'disk quota exceeded';
  return Object.assign(new Error(`${code}: ${message}, write`), { code, errno: code === 'ENOSPC' ? -28 : -122, syscall: 'write' });
}

/**
 * Makes the local blob store's writes fail from the `from`-th on (1-based) the way a disk that
 * fills up mid-write does: half of the bytes land at the blob's place, then ENOSPC (or EDQUOT).
 * Returns the undo.
 */
function fillUpAt(ctx: TestContext, from: number, code: 'ENOSPC' | 'EDQUOT' = 'ENOSPC'): () => void {
  const blobs = ctx.deps.blobs as BlobStore & { root: string };
  assert.equal(blobs.kind, 'local');
  const { putBytes, putFile } = blobs;
  let writes = 0;
  const halfThenFull = async (key: string, bytes: Buffer) => {
    const path = join(blobs.root, key);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, bytes.subarray(0, Math.ceil(bytes.length / 2)));
    throw noSpace(code);
  };
  blobs.putBytes = async (key, bytes, meta) => (++writes >= from ? halfThenFull(key, bytes) : putBytes.call(blobs, key, bytes, meta));
  blobs.putFile = async (key, staged, meta) => {
    if (++writes < from) return putFile.call(blobs, key, staged, meta);
    const { readFile } = await import('node:fs/promises');
    return halfThenFull(key, await readFile(staged));
  };
  return () => {
    delete (blobs as Partial<BlobStore>).putBytes;
    delete (blobs as Partial<BlobStore>).putFile;
  };
}

/** Every blob of the workspace has its media row, and every row its blob. */
async function assertBlobsMatchRows(ctx: TestContext, workspaceId: string): Promise<void> {
  const rows = await ctx.deps.db.selectFrom('media').select(['storage_key']).where('workspace_id', '=', workspaceId).execute();
  const keys = await ctx.deps.blobs.listKeys(`${workspaceId}/`);
  assert.deepEqual(keys, rows.map((r) => r.storage_key).sort(), 'the blobs are exactly the media rows');
  assert.deepEqual(await ctx.deps.blobs.stagedFiles(), [], 'no staged file left');
}

async function integrityCheck(ctx: TestContext): Promise<string> {
  const { rows } = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(ctx.deps.db);
  return rows.map((r) => r.integrity_check).join('; ');
}

async function retry(ctx: TestContext, t: Tenant, jobId: string) {
  return call(ctx, 'POST', `/v1/jobs/${jobId}/retry`, { secret: t.secret, workspaceId: t.workspace.id, headers: { 'idempotency-key': randomUUID() } });
}

test('ENOSPC and EDQUOT mean the files are full; SQLITE_FULL and PostgreSQL 53100 the database; causes are followed; nothing else is "full"', () => {
  assert.equal(fullStorageOf(noSpace('ENOSPC')), 'files');
  assert.equal(fullStorageOf(noSpace('EDQUOT')), 'files');
  assert.equal(fullStorageOf(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })), 'database');
  assert.equal(fullStorageOf(Object.assign(new Error('could not extend file'), { code: '53100' })), 'database');
  assert.equal(fullStorageOf(new Error('wrapped', { cause: noSpace() })), 'files');
  assert.equal(fullStorageOf(new AggregateError([new Error('other'), noSpace()])), 'files');
  for (const other of [new Error('plain'), Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }), Object.assign(new Error('gone'), { code: 'ENOENT' }), Object.assign(new Error('down'), { code: '57P01' }), undefined, 'ENOSPC']) {
    assert.equal(fullStorageOf(other), undefined, String(other));
  }
});

describeEachDatabase('a full disk', (get) => {
  for (const code of ['ENOSPC', 'EDQUOT'] as const) {
    test(`an upload that meets ${code} is 507 STORAGE_FULL and leaves no row, event, blob or staged file; it works once there is space`, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const bytes = await png(40, 30);
      const undo = fillUpAt(ctx, 1, code);
      const res = await upload(ctx, t, bytes);
      undo();
      const body = assertError(res, 507, 'STORAGE_FULL');
      assert.equal(body.details.storage, 'files');
      assert.match(body.message, /storage is full/);
      assert.deepEqual(await footprint(ctx, t.workspace.id), { rows: 0, events: 0, usedBytes: 0, blobs: 0, staged: 0 });

      const again = await upload(ctx, t, bytes);
      assert.equal(again.statusCode, 200, again.body);
      assert.deepEqual(await footprint(ctx, t.workspace.id), { rows: 1, events: 1, usedBytes: bytes.length, blobs: 1, staged: 0 });
    });
  }

  test('a job whose result file meets ENOSPC fails with STORAGE_FULL, uncharged, its hold released, no blob left; its retry completes', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const admitted = await run(ctx, t, 'video.generate', { prompt: 'a full disk [sim:steps=1][sim:cost=700]', durationSeconds: 5 });
    assert.equal(admitted.statusCode, 202, admitted.body);
    const jobId = admitted.json().data.jobId as string;
    const undo = fillUpAt(ctx, 1);
    await drain(ctx);
    undo();
    const failed = await getJob(ctx, t, jobId);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.errorCode, 'STORAGE_FULL');
    assert.equal(failed.costMillicents, 0, 'nothing of what could not be stored is charged');
    assert.equal(await sumOpenHolds(ctx.deps.db, scopeOf(t)), 0, 'the hold is released');
    assert.deepEqual(await footprint(ctx, scopeOf(t)), { rows: 0, events: 0, usedBytes: 0, blobs: 0, staged: 0 });
    await assertLedgerInvariants(ctx.deps, scopeOf(t));

    const retried = await retry(ctx, t, jobId);
    assert.equal(retried.statusCode, 202, retried.body);
    await drain(ctx);
    const done = await getJob(ctx, t, jobId);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.costMillicents, 700);
    const [video] = await ctx.deps.db.selectFrom('media').select(['mime_type', 'job_id']).where('workspace_id', '=', scopeOf(t)).execute();
    assert.deepEqual(video, { mime_type: 'video/mp4', job_id: jobId });
    await assertBlobsMatchRows(ctx, scopeOf(t));
    assert.equal(await sumOpenHolds(ctx.deps.db, scopeOf(t)), 0);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  for (const failingStep of [2, 3]) {
    test(`a job whose step ${failingStep} of 3 meets ENOSPC fails with STORAGE_FULL charged for the ${failingStep - 1} recorded step(s) only, keeping their files; the retry runs the rest`, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
      const total = 3_000;
      const admitted = await run(ctx, t, 'image.generate', { prompt: `three images [sim:cost=${total}]`, width: 1024, height: 1024, count: 3 });
      assert.equal(admitted.statusCode, 202, admitted.body);
      const jobId = admitted.json().data.jobId as string;
      const undo = fillUpAt(ctx, failingStep);
      await drain(ctx);
      undo();
      const failed = await getJob(ctx, t, jobId);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.errorCode, 'STORAGE_FULL');
      const recorded = failingStep - 1;
      const charged = Array.from({ length: recorded }, (_, i) => stepCost(total, 3, i + 1)).reduce((a, b) => a + b, 0);
      assert.equal(failed.costMillicents, charged, `charged for the ${recorded} recorded step(s)`);
      assert.equal(await sumOpenHolds(ctx.deps.db, scopeOf(t)), 0, 'the hold is released');
      const fp = await footprint(ctx, scopeOf(t));
      assert.equal(fp.rows, recorded, 'the recorded steps keep their files as media items; nothing of the failed step stays');
      await assertBlobsMatchRows(ctx, scopeOf(t));
      await assertLedgerInvariants(ctx.deps, scopeOf(t));

      const retried = await retry(ctx, t, jobId);
      assert.equal(retried.statusCode, 202, retried.body);
      await drain(ctx);
      const done = await getJob(ctx, t, jobId);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(done.costMillicents, total, 'each step charged once over both attempts');
      assert.equal((await footprint(ctx, scopeOf(t))).rows, 3);
      await assertBlobsMatchRows(ctx, scopeOf(t));
      assert.equal(await sumOpenHolds(ctx.deps.db, scopeOf(t)), 0);
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    });
  }
}, testKeySuite());

describeEachDatabase(
  'the embedded database full (SQLITE_FULL)',
  (get) => {
    async function pragma(ctx: TestContext, text: string): Promise<number> {
      const { rows } = await sql.raw<Record<string, number>>(`pragma ${text}`).execute(ctx.deps.db);
      return Number(Object.values(rows[0] ?? {})[0]);
    }

    test('a unit whose failure ended the whole transaction (as SQLite does on SQLITE_FULL) fails its batch with its own error: nothing of the batch is written, no later unit runs outside a transaction', async () => {
      const ctx = get();
      await sql`create table if not exists full_probe (v text not null)`.execute(ctx.deps.db);
      const full = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      const insert = (trx: Transaction<Database>, v: string) => sql`insert into full_probe (v) values (${v})`.execute(trx);
      const outcomes = await Promise.allSettled([
        inTransaction(ctx.deps, (trx) => insert(trx, 'before')),
        inTransaction(ctx.deps, async (trx) => {
          await insert(trx, 'failing');
          await sql`rollback`.execute(trx); // what SQLite does by itself on some SQLITE_FULL
          throw full();
        }),
        inTransaction(ctx.deps, (trx) => insert(trx, 'after')),
      ]);
      assert.deepEqual(
        outcomes.map((o) => (o.status === 'rejected' ? fullStorageOf(o.reason) : o.status)),
        ['database', 'database', 'database'],
        outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : o.status)).join('; '),
      );
      const { rows } = await sql<{ v: string }>`select v from full_probe`.execute(ctx.deps.db);
      assert.deepEqual(rows, [], 'nothing of the batch was written');
      await inTransaction(ctx.deps, (trx) => insert(trx, 'next'));
      assert.deepEqual((await sql<{ v: string }>`select v from full_probe`.execute(ctx.deps.db)).rows, [{ v: 'next' }], 'the next transaction works');
      assert.equal(await integrityCheck(ctx), 'ok');
    });

    test('SQLITE_FULL is answered 507 STORAGE_FULL, never 500; integrity_check ok, holds and jobs consistent, and all works again once the database may grow', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 100_000_000, mode: 'test' });
      // Jobs admitted and claimed before the database filled up, run while it is full; and some
      // admitted but not claimed.
      const acked = new Map<string, string>();
      for (let i = 0; i < 8; i++) {
        const key = randomUUID();
        const res = await run(ctx, t, 'image.generate', { prompt: `before ${i}`, width: 256, height: 256 }, key);
        assert.equal(res.statusCode, 202, res.body);
        acked.set(key, res.json().data.jobId as string);
      }
      const claimed = await claimJobs(ctx.deps, 'full-disk-test', 4);
      assert.equal(claimed.length, 4);
      const pages = await pragma(ctx, 'page_count');
      const limited = await pragma(ctx, `max_page_count = ${pages}`);
      assert.equal(limited, pages, 'the database may not grow');

      // Runs until the database refuses to grow (every answer a 202 or the 507).
      let full: any;
      for (let round = 0; round < 100 && !full; round++) {
        const keys = Array.from({ length: 16 }, () => randomUUID());
        const answers = await Promise.all(keys.map((key, i) => run(ctx, t, 'image.generate', { prompt: `round ${round} image ${i}`, width: 256, height: 256 }, key)));
        answers.forEach((res, i) => {
          if (res.statusCode === 202) acked.set(keys[i]!, res.json().data.jobId as string);
          else {
            const refused = assertError(res, 507, 'STORAGE_FULL');
            full ??= refused;
          }
        });
      }
      assert.ok(full, 'the database became full');
      assert.equal(full.details.storage, 'database');

      // A synchronous run: 507 (nothing admitted), or, if admission fitted, its answer is its
      // finished job; never a job still processing, never a 500.
      const syncKey = randomUUID();
      const sync = await run(ctx, t, 'chat.generate', { messages: [{ role: 'user', content: 'while the database is full' }] }, syncKey);
      if (sync.statusCode === 200) {
        assert.ok(['completed', 'failed'].includes(sync.json().data.status), sync.body);
        acked.set(syncKey, sync.json().data.jobId as string);
      } else assert.equal(assertError(sync, 507, 'STORAGE_FULL').details.storage, 'database');

      // An upload: the blob is written, its row is not; the blob is removed again.
      const up = await upload(ctx, t, await png(20, 20));
      if (up.statusCode !== 200) assert.equal(assertError(up, 507, 'STORAGE_FULL').details.storage, 'database');
      await assertBlobsMatchRows(ctx, scopeOf(t));

      // The worker runs the jobs while the database cannot grow: a job whose result cannot be
      // recorded fails with STORAGE_FULL if that failure can be, else stays as it was (processing,
      // its hold open, recovered once its lease expires); either way the files written for the
      // finish are removed. Claiming more fails as a whole.
      const outcomes = await Promise.all(claimed.map((job) => executeJob(ctx.deps, job, new AbortController().signal)));
      for (const o of outcomes) assert.ok(o.status === 'completed' || o.status === 'lost' || (o.status === 'failed' && o.row?.error_code === 'STORAGE_FULL'), `${o.status} ${o.row?.error_code}`);
      assert.ok(outcomes.some((o) => o.status !== 'completed'), `some result could not be recorded: ${outcomes.map((o) => o.status).join(', ')}`);
      await drainWhileFull(ctx);
      assert.equal(await integrityCheck(ctx), 'ok');
      assert.deepEqual(await admissionProblems(ctx.deps.db, scopeOf(t), acked), []);
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
      await assertBlobsMatchRows(ctx, scopeOf(t));

      // Space again: a new run is admitted, leases of unfinished attempts expire and every job ends.
      await pragma(ctx, 'max_page_count = 1073741823');
      const key = randomUUID();
      const next = await run(ctx, t, 'image.generate', { prompt: 'after the disk was freed', width: 256, height: 256 }, key);
      assert.equal(next.statusCode, 202, next.body);
      acked.set(key, next.json().data.jobId as string);
      ctx.clock.advance(ctx.config.jobLeaseMs + 1);
      await drain(ctx);
      const jobs = await ctx.deps.db.selectFrom('jobs').select(['id', 'status', 'error_code']).where('workspace_id', '=', scopeOf(t)).execute();
      assert.equal(jobs.length, acked.size);
      for (const j of jobs) assert.ok(j.status === 'completed' || (j.status === 'failed' && j.error_code === 'STORAGE_FULL'), `job ${j.id}: ${j.status} ${j.error_code}`);
      assert.equal(jobs.find((j) => j.id === acked.get(key))?.status, 'completed');
      assert.equal(await integrityCheck(ctx), 'ok');
      assert.deepEqual(await admissionProblems(ctx.deps.db, scopeOf(t), acked), []);
      assert.equal(await sumOpenHolds(ctx.deps.db, scopeOf(t)), 0);
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
      await assertBlobsMatchRows(ctx, scopeOf(t));
      const after = await upload(ctx, t, await png(21, 21));
      assert.equal(after.statusCode, 200, after.body);
    });
  },
  testKeySuite(),
  testDatabaseNames().filter((n) => n === 'sqlite'),
);

/** Runs the worker once; claiming may itself fail while the database cannot grow (the real worker logs that round and polls again). */
async function drainWhileFull(ctx: TestContext): Promise<void> {
  await drain(ctx).catch((err: unknown) => assert.equal(fullStorageOf(err), 'database', String(err)));
}
