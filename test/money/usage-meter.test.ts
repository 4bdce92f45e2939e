/**
 * The usage-point meter (src/modules/usage/meter.ts) against a shared database, as several API
 * processes use it: SQLite file and PostgreSQL (PGlite is one in-process connection, so it cannot
 * host a second process). Two meters on two database handles stand for two processes.
 *
 * Checked: flushed points reach the shared rows and both views converge; the documented
 * over-admission bound; a restarted meter continues from the persisted count; minute and month
 * rows roll over with unflushed points in their own windows; flushes that overlap, run at
 * shutdown or fail lose no point and count none twice.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Kysely, KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import type { Database } from '../../src/db/schema.js';
import { FakeClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { UsageMeter, type PointLimits } from '../../src/modules/usage/meter.js';
import { createTestDatabase, testDatabaseNames, type TestDatabase } from '../support/databases.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const LIMITS: PointLimits = { pointsPerMinute: 1_000_000, pointsPerMonth: 10_000_000 };

/** Fails the query with the given sequence number (counted from 0), before it reaches the database. */
class FailingPlugin implements KyselyPlugin {
  count = 0;
  failAt = -1;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.count++ === this.failAt) throw new Error('injected database failure');
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** The persisted counters of a workspace, keyed `kind@start`. */
async function persisted(db: Kysely<Database>, workspaceId: string): Promise<Record<string, number>> {
  const rows = await db.selectFrom('usage_counters').selectAll().where('workspace_id', '=', workspaceId).execute();
  return Object.fromEntries(rows.map((r) => [`${r.window_kind}@${iso(Number(r.window_start_ms))}`, Number(r.used)]));
}

async function usedBy(meter: UsageMeter, workspaceId: string, limits: PointLimits = LIMITS) {
  const { minute, month } = await meter.peek(workspaceId, limits);
  return { minute: minute.used, month: month.used };
}

/** Charges 1 point at a time, up to `attempts` times; returns how many were admitted. */
async function admitOneByOne(meter: UsageMeter, workspaceId: string, attempts: number, limits: PointLimits) {
  let admitted = 0;
  for (let i = 0; i < attempts; i++) if ((await meter.charge(workspaceId, 1, limits)).ok) admitted++;
  return admitted;
}

const names = testDatabaseNames().filter((n) => n !== 'pglite');

for (const name of names) {
  describe(`usage meter on a shared database [${name}]`, () => {
    let database: TestDatabase;
    let second: DatabaseHandle;
    const meters: UsageMeter[] = [];
    const clock = new FakeClock(at('2026-11-18T12:00:30.000Z'));

    function meter(db: Kysely<Database>, refreshBases = true): UsageMeter {
      const m = new UsageMeter(db, clock, 60_000, refreshBases);
      meters.push(m);
      return m;
    }

    before(async () => {
      database = await createTestDatabase(name);
      await migrateToLatest(database.handle.db);
      second = await openDatabase(database.url!);
    });
    after(async () => {
      for (const m of meters) await m.stop().catch(() => {});
      await second.close();
      await database.handle.close();
      await database.dispose();
    });

    test('usage meter multi-process: points charged on two meters are flushed and both views converge after flush', async () => {
      clock.set(at('2026-11-18T12:00:30.000Z'));
      const ws = newId();
      const a = meter(database.handle.db);
      const b = meter(second.db);
      for (const p of [1, 2, 4]) assert.ok((await a.charge(ws, p, LIMITS)).ok);
      for (const p of [10, 20]) assert.ok((await b.charge(ws, p, LIMITS)).ok);
      assert.deepEqual(await usedBy(a, ws), { minute: 7, month: 7 }, 'before a flush each meter sees only its own points');
      assert.deepEqual(await usedBy(b, ws), { minute: 30, month: 30 });

      await a.flush();
      await b.flush();
      assert.deepEqual(await usedBy(b, ws), { minute: 37, month: 37 }, 'b brought in what a flushed');
      await a.flush();
      assert.deepEqual(await usedBy(a, ws), { minute: 37, month: 37 }, 'a converges on its next flush');
      assert.deepEqual(await persisted(database.handle.db, ws), { 'minute@2026-11-18T12:00:00.000Z': 37, 'month@2026-11-01T00:00:00.000Z': 37 });

      // Later charges keep converging, whichever meter flushes first.
      assert.ok((await a.charge(ws, 3, LIMITS)).ok);
      assert.ok((await b.charge(ws, 5, LIMITS)).ok);
      await b.flush();
      await a.flush();
      await b.flush();
      assert.deepEqual(await usedBy(a, ws), { minute: 45, month: 45 });
      assert.deepEqual(await usedBy(b, ws), { minute: 45, month: 45 });
    });

    test('usage meter over-admission bound: limit 100, both meters admit 60 before a flush; total 120 = limit + one interval of the other, then nothing more', async () => {
      clock.set(at('2026-11-18T12:01:10.000Z'));
      const ws = newId();
      const limits = { pointsPerMinute: 100, pointsPerMonth: 1_000_000 };
      const a = meter(database.handle.db);
      const b = meter(second.db);
      assert.equal(await admitOneByOne(a, ws, 60, limits), 60);
      assert.equal(await admitOneByOne(b, ws, 60, limits), 60);
      await a.flush();
      await b.flush();
      await a.flush();
      assert.equal(await admitOneByOne(a, ws, 10, limits), 0, 'a sees 120 ≥ 100');
      assert.equal(await admitOneByOne(b, ws, 10, limits), 0, 'b sees 120 ≥ 100');
      const rows = await persisted(database.handle.db, ws);
      assert.equal(rows['minute@2026-11-18T12:01:00.000Z'], 120);
      assert.ok(rows['minute@2026-11-18T12:01:00.000Z']! <= 100 + 60);
      const refused = await a.charge(ws, 1, limits);
      assert.equal(refused.ok, false);
      assert.equal(!refused.ok && refused.limit, 'POINTS_MINUTE');
    });

    test('usage meter over-admission bound: in flush rounds the window never exceeds limit + what the other admitted in one round', async () => {
      for (const [perRound, limit] of [[25, 100], [7, 50], [60, 100], [1, 10]] as const) {
        clock.advance(60_000);
        const ws = newId();
        const limits = { pointsPerMinute: limit, pointsPerMonth: 1_000_000 };
        const a = meter(database.handle.db);
        const b = meter(second.db);
        for (let round = 0; round < 12; round++) {
          await admitOneByOne(a, ws, perRound, limits);
          await admitOneByOne(b, ws, perRound, limits);
          // One flush interval: each meter writes, then reads the other's points.
          await a.flush();
          await b.flush();
          await a.flush();
          const total = Object.entries(await persisted(database.handle.db, ws)).find(([k]) => k.startsWith('minute@'))?.[1] ?? 0;
          assert.ok(total <= limit + perRound, `round ${round}: ${total} > ${limit} + ${perRound}`);
          assert.deepEqual(await usedBy(a, ws, limits), await usedBy(b, ws, limits), 'views converge after each round');
        }
        assert.equal(await admitOneByOne(a, ws, 3, limits), 0);
        assert.equal(await admitOneByOne(b, ws, 3, limits), 0);
      }
    });

    test('usage meter restart: a new meter instance continues from the persisted minute and month counts', async () => {
      clock.set(at('2026-11-18T12:10:05.000Z'));
      const ws = newId();
      const limits = { pointsPerMinute: 50, pointsPerMonth: 80 };
      const first = meter(database.handle.db, false);
      assert.equal(await admitOneByOne(first, ws, 30, limits), 30);
      await first.stop();

      const restarted = meter(database.handle.db, false);
      assert.deepEqual(await usedBy(restarted, ws, limits), { minute: 30, month: 30 });
      assert.equal(await admitOneByOne(restarted, ws, 30, limits), 20, 'only the rest of the minute is admitted');
      await restarted.stop();

      clock.set(at('2026-11-18T12:11:00.000Z'));
      const again = meter(second.db, false);
      assert.deepEqual(await usedBy(again, ws, limits), { minute: 0, month: 50 }, 'a new minute, the same month');
      assert.equal(await admitOneByOne(again, ws, 50, limits), 30, 'the month stops at 80');
      const refused = await again.charge(ws, 1, limits);
      assert.equal(!refused.ok && refused.limit, 'POINTS_MONTH');
      assert.equal(!refused.ok && iso(refused.resetsAt), '2026-12-01T00:00:00.000Z');
      await again.stop();
      assert.deepEqual(await persisted(database.handle.db, ws), {
        'minute@2026-11-18T12:10:00.000Z': 50,
        'minute@2026-11-18T12:11:00.000Z': 30,
        'month@2026-11-01T00:00:00.000Z': 80,
      });
    });

    test('usage meter shutdown: stop() during a running flush still persists the points admitted meanwhile', async () => {
      clock.set(at('2026-11-18T12:20:05.000Z'));
      const ws = newId();
      const m = meter(database.handle.db, false);
      await m.charge(ws, 10, LIMITS);
      const running = m.flush();
      await m.charge(ws, 5, LIMITS);
      await m.stop();
      await running;
      assert.deepEqual(await persisted(database.handle.db, ws), { 'minute@2026-11-18T12:20:00.000Z': 15, 'month@2026-11-01T00:00:00.000Z': 15 });
      const restarted = meter(second.db, false);
      assert.deepEqual(await usedBy(restarted, ws), { minute: 15, month: 15 });
    });

    test('usage meter flush: a flush() called while another runs resolves only after the later points are written', async () => {
      clock.set(at('2026-11-18T12:21:05.000Z'));
      const ws = newId();
      const m = meter(database.handle.db);
      await m.charge(ws, 1, LIMITS);
      const first = m.flush();
      await m.charge(ws, 2, LIMITS);
      const secondFlush = m.flush();
      await m.charge(ws, 4, LIMITS);
      const third = m.flush();
      await Promise.all([first, secondFlush, third]);
      assert.deepEqual(await persisted(database.handle.db, ws), { 'minute@2026-11-18T12:21:00.000Z': 7, 'month@2026-11-01T00:00:00.000Z': 7 });
      assert.deepEqual(await usedBy(m, ws), { minute: 7, month: 7 }, 'nothing counted twice in the view');
    });

    test('usage meter rollover: unflushed points at a minute boundary are counted in their own minute, none lost', async () => {
      clock.set(at('2026-11-18T12:30:50.000Z'));
      const ws = newId();
      for (const refresh of [false, true]) {
        const w = `${ws.slice(0, -1)}${refresh ? '1' : '0'}`;
        clock.set(at('2026-11-18T12:30:50.000Z'));
        const m = meter(database.handle.db, refresh);
        await m.charge(w, 5, LIMITS);
        clock.set(at('2026-11-18T12:31:05.000Z'));
        await m.charge(w, 3, LIMITS);
        assert.deepEqual(await usedBy(m, w), { minute: 3, month: 8 });
        await m.flush();
        assert.deepEqual(await persisted(database.handle.db, w), {
          'minute@2026-11-18T12:30:00.000Z': 5,
          'minute@2026-11-18T12:31:00.000Z': 3,
          'month@2026-11-01T00:00:00.000Z': 8,
        });
        assert.deepEqual(await usedBy(m, w), { minute: 3, month: 8 });
      }
    });

    test('usage meter rollover: unflushed points at a month boundary (Nov 30 → Dec 1) are counted in their own month and minute', async () => {
      const ws = newId();
      clock.set(at('2026-11-30T23:59:40.000Z'));
      const m = meter(database.handle.db, true);
      await m.charge(ws, 5, LIMITS);
      clock.set(at('2026-12-01T00:00:10.000Z'));
      const r = await m.charge(ws, 3, LIMITS);
      assert.ok(r.ok);
      assert.equal(iso(r.month.resetsAt), '2027-01-01T00:00:00.000Z');
      assert.equal(iso(r.minute.resetsAt), '2026-12-01T00:01:00.000Z');
      assert.deepEqual(await usedBy(m, ws), { minute: 3, month: 3 });
      await m.flush();
      assert.deepEqual(await persisted(database.handle.db, ws), {
        'minute@2026-11-30T23:59:00.000Z': 5,
        'minute@2026-12-01T00:00:00.000Z': 3,
        'month@2026-11-01T00:00:00.000Z': 5,
        'month@2026-12-01T00:00:00.000Z': 3,
      });
      const other = meter(second.db, true);
      assert.deepEqual(await usedBy(other, ws), { minute: 3, month: 3 });
    });

    test('usage meter rollover: a flush after the boundary but before any new charge writes the old window', async () => {
      const ws = newId();
      clock.set(at('2026-12-31T23:59:59.999Z'));
      const m = meter(database.handle.db, true);
      await m.charge(ws, 4, LIMITS);
      clock.set(at('2027-01-01T00:00:00.000Z'));
      await m.flush();
      assert.deepEqual(await persisted(database.handle.db, ws), { 'minute@2026-12-31T23:59:00.000Z': 4, 'month@2026-12-01T00:00:00.000Z': 4 });
      assert.deepEqual(await usedBy(m, ws), { minute: 0, month: 0 }, 'the new year starts empty');
      await m.charge(ws, 2, LIMITS);
      await m.flush();
      assert.deepEqual(await persisted(database.handle.db, ws), {
        'minute@2026-12-31T23:59:00.000Z': 4,
        'month@2026-12-01T00:00:00.000Z': 4,
        'minute@2027-01-01T00:00:00.000Z': 2,
        'month@2027-01-01T00:00:00.000Z': 2,
      });
    });

    test('usage meter rollover: points admitted after the boundary while a flush is running go to the new window', async () => {
      const ws = newId();
      clock.set(at('2027-01-01T00:05:59.000Z'));
      const m = meter(database.handle.db, true);
      await m.charge(ws, 5, LIMITS);
      const running = m.flush();
      clock.set(at('2027-01-01T00:06:01.000Z'));
      await m.charge(ws, 3, LIMITS);
      await running;
      await m.flush();
      assert.deepEqual(await persisted(database.handle.db, ws), {
        'minute@2027-01-01T00:05:00.000Z': 5,
        'minute@2027-01-01T00:06:00.000Z': 3,
        'month@2027-01-01T00:00:00.000Z': 8,
      });
      assert.deepEqual(await usedBy(m, ws), { minute: 3, month: 8 });
    });

    test('usage meter failed flush: whichever write fails, no point is lost or counted twice and the view keeps every point', async () => {
      for (const refresh of [false, true]) {
        let failedRuns = 0;
        for (let k = 0; k < 50; k++) {
          const plugin = new FailingPlugin();
          const db = database.handle.db.withPlugin(plugin);
          const m = meter(db, refresh);
          const [w1, w2, w3] = [newId(), newId(), newId()];
          clock.set(at('2027-02-10T08:00:30.000Z'));
          await m.charge(w3, 2, LIMITS);
          await m.flush(); // w3 is synced; with refreshBases its rows are re-read on every flush
          await m.charge(w1, 3, LIMITS);
          clock.set(at('2027-02-10T08:01:10.000Z'));
          await m.charge(w1, 4, LIMITS); // rolls w1's minute: 3 points wait as a pending write
          await m.charge(w2, 5, LIMITS);

          plugin.failAt = plugin.count + k;
          const failed = await m.flush().then(
            () => false,
            () => true,
          );
          plugin.failAt = -1;
          if (failed) {
            failedRuns++;
            assert.deepEqual(await usedBy(m, w1), { minute: 4, month: 7 }, `k=${k}: the view keeps w1's points`);
            assert.deepEqual(await usedBy(m, w2), { minute: 5, month: 5 }, `k=${k}`);
            assert.deepEqual(await usedBy(m, w3), { minute: 0, month: 2 }, `k=${k}`);
          }
          await m.flush();
          assert.deepEqual(await persisted(database.handle.db, w1), {
            'minute@2027-02-10T08:00:00.000Z': 3,
            'minute@2027-02-10T08:01:00.000Z': 4,
            'month@2027-02-01T00:00:00.000Z': 7,
          }, `k=${k} refresh=${refresh}`);
          assert.deepEqual(await persisted(database.handle.db, w2), { 'minute@2027-02-10T08:01:00.000Z': 5, 'month@2027-02-01T00:00:00.000Z': 5 }, `k=${k}`);
          assert.deepEqual(await persisted(database.handle.db, w3), { 'minute@2027-02-10T08:00:00.000Z': 2, 'month@2027-02-01T00:00:00.000Z': 2 }, `k=${k}`);
          assert.deepEqual(await usedBy(m, w1), { minute: 4, month: 7 }, `k=${k}: the view after recovery`);
          assert.deepEqual(await usedBy(m, w2), { minute: 5, month: 5 });
          await m.stop();
          if (!failed) break;
        }
        assert.ok(failedRuns >= 5, `every write position was failed once (${failedRuns})`);
      }
    });

    test('usage meter failed flush: a counter that rolls over while its write fails keeps the points in the old window', async () => {
      const ws = newId();
      const plugin = new FailingPlugin();
      const m = meter(database.handle.db.withPlugin(plugin), true);
      clock.set(at('2027-03-01T09:00:59.000Z'));
      await m.charge(ws, 5, LIMITS);
      plugin.failAt = plugin.count; // the very first write of the next flush
      const running = m.flush();
      clock.set(at('2027-03-01T09:01:01.000Z'));
      await m.charge(ws, 2, LIMITS);
      await assert.rejects(running, /injected/);
      assert.deepEqual(await usedBy(m, ws), { minute: 2, month: 7 });
      await m.flush();
      assert.deepEqual(await persisted(database.handle.db, ws), {
        'minute@2027-03-01T09:00:00.000Z': 5,
        'minute@2027-03-01T09:01:00.000Z': 2,
        'month@2027-03-01T00:00:00.000Z': 7,
      });
    });

    test('usage meter pruning: minute counters older than an hour are deleted by the first flush and then every 10 minutes, never at random', async () => {
      const ws = newId();
      const m = meter(database.handle.db, false);
      clock.set(at('2027-05-01T08:00:10.000Z'));
      await m.charge(ws, 3, LIMITS);
      await m.flush(); // the meter's first flush prunes (nothing of ws is old yet)
      clock.set(at('2027-05-01T09:05:00.000Z'));
      await m.charge(ws, 1, LIMITS);
      await m.flush(); // 08:00 is now over an hour old and the last prune 65 minutes ago
      const rows = await persisted(database.handle.db, ws);
      assert.deepEqual(rows, { 'minute@2027-05-01T09:05:00.000Z': 1, 'month@2027-05-01T00:00:00.000Z': 4 }, 'the old minute row is gone, the month row stays');
      clock.set(at('2027-05-01T10:06:00.000Z'));
      await m.charge(ws, 1, LIMITS);
      await m.flush(); // due again (over 10 minutes since the last prune)
      assert.equal((await persisted(database.handle.db, ws))['minute@2027-05-01T09:05:00.000Z'], undefined);
      // Within 10 minutes of a prune nothing is deleted, however many flushes run (so a test
      // that compares tables around flushes never sees a random delete).
      await database.handle.db.insertInto('usage_counters').values({ workspace_id: ws, window_kind: 'minute', window_start_ms: at('2027-05-01T08:30:00.000Z'), used: 9 }).execute();
      clock.set(at('2027-05-01T10:15:00.000Z'));
      for (let i = 0; i < 200; i++) await m.flush();
      assert.equal((await persisted(database.handle.db, ws))['minute@2027-05-01T08:30:00.000Z'], 9);
      clock.set(at('2027-05-01T10:16:00.000Z'));
      await m.flush();
      assert.equal((await persisted(database.handle.db, ws))['minute@2027-05-01T08:30:00.000Z'], undefined, 'pruned when due');
    });

    test('usage meter eviction: an idle workspace is dropped only once written, and reloads its count from the database', async () => {
      const ws = newId();
      clock.set(at('2027-04-01T10:00:00.000Z'));
      const m = meter(database.handle.db, false);
      await m.charge(ws, 6, LIMITS);
      clock.set(at('2027-04-01T10:05:00.000Z'));
      await m.flush(); // writes the 6 points; the entry is idle but still had points to write
      await m.flush(); // now it is dropped
      const other = meter(second.db, false);
      await other.charge(ws, 4, LIMITS);
      await other.flush();
      assert.deepEqual(await usedBy(m, ws), { minute: 4, month: 10 }, 'reloaded with the other meter\'s points');
    });
  });
}
