/**
 * Property test of cost analytics (issue 36; docs/decisions.md, "Cost and usage analytics"):
 * after a random workload of completed, failed and cancelled runs by two keys, expiring credits,
 * operator refunds and debits and clock moves, on every database,
 *  - rule "rollup = ledger": the cost rollup holds exactly the ledger summed per UTC hour and per
 *    UTC day (every entry counted once in each, nothing missing, nothing extra);
 *  - rule "exact to the millicent": GET /v1/costs for any bucket width, any range and any
 *    grouping answers, bucket by bucket and in its totals, the lines an oracle computes straight
 *    from the ledger rows, and its total equals minus the ledger sum (purchases aside) over the
 *    same whole buckets;
 *  - rule "buckets are whole UTC buckets": from and to are rounded out to bucket boundaries;
 *  - the ledger invariants hold throughout;
 *  - rule "bad input names the field": any query string is answered 200, or 400 INVALID_REQUEST
 *    whose details name a parameter that was sent (never a 500).
 * COSTS_FUZZ_RUNS raises the number of workloads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { check } from '../support/fast-check.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { applyCommand, costCommand, startWorkload, type Workload } from '../support/costs-workload.js';
import { assertRollupMatchesLedger, bucketStart, expectedLines, ledgerRows, type Group } from '../support/costs-oracle.js';
import { seedTenant } from '../support/seed.js';

const RUNS = Number(process.env.COSTS_FUZZ_RUNS ?? 10);
const GROUPS: Group[] = ['operationId', 'keyId', 'executionOrigin'];

type Bucket = 'hour' | 'day' | 'month';
const query = fc.record({
  bucket: fc.constantFrom<Bucket>('hour', 'day', 'month'),
  // Offsets from the workload's start, in ms (any instant, not bucket-aligned).
  fromOffset: fc.integer({ min: -2 * 86_400_000, max: 10 * 86_400_000 }),
  span: fc.integer({ min: 1, max: 12 * 86_400_000 }),
  groupBy: fc.subarray(GROUPS),
});

function nextStart(bucket: Bucket, start: number): number {
  if (bucket === 'hour') return start + 3_600_000;
  if (bucket === 'day') return start + 86_400_000;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

async function checkCosts(ctx: TestContext, w: Workload, q: { bucket: Bucket; fromOffset: number; span: number; groupBy: Group[] }) {
  const from = w.startedAt + q.fromOffset;
  const to = from + q.span;
  const params = new URLSearchParams({ bucket: q.bucket, from: new Date(from).toISOString(), to: new Date(to).toISOString() });
  for (const g of q.groupBy) params.append('groupBy', g);
  const res = await call(ctx, 'GET', `/v1/costs?${params}`, { secret: w.tenant.secret, workspaceId: w.tenant.workspace.id });
  assert.equal(res.statusCode, 200, res.body);
  const data = res.json().data;
  // Whole UTC buckets: from rounded down, to rounded up.
  const wantFrom = bucketStart(q.bucket, from);
  const floorTo = bucketStart(q.bucket, to);
  const wantTo = floorTo === to ? to : nextStart(q.bucket, floorTo);
  assert.equal(data.from, new Date(wantFrom).toISOString(), 'from is the start of its UTC bucket');
  assert.equal(data.to, new Date(wantTo).toISOString(), 'to is the end of its UTC bucket');
  // Every bucket of the range, in order, each ending where the next starts.
  const starts: number[] = [];
  for (let s = wantFrom; s < wantTo; s = nextStart(q.bucket, s)) starts.push(s);
  assert.deepEqual(data.buckets.map((b: any) => b.start), starts.map((s) => new Date(s).toISOString()));
  assert.deepEqual(data.buckets.map((b: any) => b.end), starts.map((s) => new Date(nextStart(q.bucket, s)).toISOString()));

  const rows = await ledgerRows(ctx.deps, w.tenant.workspace.id);
  const groupBy = GROUPS.filter((g) => q.groupBy.includes(g));
  const got = data.buckets.flatMap((b: any) => b.lines.map((l: any) => ({ bucketStart: b.start, ...l })));
  assert.deepEqual(got, expectedLines(rows, wantFrom, wantTo, groupBy, q.bucket), 'each bucket\'s lines are the ledger\'s, to the millicent');
  assert.deepEqual(data.totals.lines, expectedLines(rows, wantFrom, wantTo, groupBy), 'the totals\' lines are the ledger\'s over the range');
  const ledgerNet = rows.filter((r) => r.type !== 'purchase' && r.createdAt >= wantFrom && r.createdAt < wantTo).reduce((t, r) => t - r.amount, 0);
  assert.equal(data.totals.costMillicents, ledgerNet, 'total cost = −(ledger sum without purchases) over the range');
  assert.equal(data.buckets.reduce((t: number, b: any) => t + b.costMillicents, 0), ledgerNet, 'the sum of the buckets = the ledger');
  for (const b of data.buckets) assert.equal(b.costMillicents, b.lines.reduce((t: number, l: any) => t + l.costMillicents, 0));
  const byType = Object.values(data.totals.byType as Record<string, number>).reduce((t, v) => t + v, 0);
  assert.equal(byType, ledgerNet, 'the totals by type add up to the total');
}

describeEachDatabase('cost analytics: exact against the ledger after random workloads', (get) => {
  test('rules "rollup = ledger" and "exact to the millicent": any workload, any bucket, range and grouping', async () => {
    const ctx = get();
    await check(
      fc.asyncProperty(fc.array(costCommand, { minLength: 4, maxLength: 18 }), fc.array(query, { minLength: 3, maxLength: 6 }), async (commands, queries) => {
        const w = await startWorkload(ctx);
        for (const c of commands) await applyCommand(ctx, w, c);
        await assertRollupMatchesLedger(ctx.deps, w.tenant.workspace.id);
        for (const q of queries) await checkCosts(ctx, w, q);
        await assertLedgerInvariants(ctx.deps, w.tenant.workspace.id);
      }),
      RUNS,
    );
    // Across every workspace the property made (and the seeds' purchases): still equal.
    await assertRollupMatchesLedger(ctx.deps);
  });

  test('rule "bad input names the field": arbitrary bucket, from, to and groupBy values get 200 or a 400 naming one of them', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000 });
    const dateLike = fc.oneof(
      fc.string({ maxLength: 45 }),
      fc.date({ min: new Date('1960-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }).map((d) => d.toISOString()),
      fc.date({ min: new Date('1990-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
      fc.constantFrom('2026-02-29', '2026-11-31', '2026-11-01T24:00:00Z', '2026-11-01T10:00:00+25:00', '2026-11-01t10:00:00z', '2026-11-01 10:00:00Z'),
    );
    const params = fc.record(
      {
        bucket: fc.oneof(fc.constantFrom('hour', 'day', 'month', 'minute', 'week', ''), fc.string({ maxLength: 8 })),
        from: dateLike,
        to: dateLike,
        groupBy: fc.array(fc.oneof(fc.constantFrom('operationId', 'keyId', 'executionOrigin'), fc.string({ maxLength: 12 })), { maxLength: 5 }),
      },
      { requiredKeys: [] },
    );
    await check(
      fc.asyncProperty(params, async (p) => {
        const q = new URLSearchParams();
        for (const [k, v] of Object.entries(p)) for (const x of Array.isArray(v) ? v : [v]) q.append(k, x as string);
        const res = await call(ctx, 'GET', `/v1/costs?${q}`, { secret: t.secret, workspaceId: t.workspace.id });
        if (res.statusCode === 200) return;
        assert.equal(res.statusCode, 400, res.body);
        const body = res.json();
        assert.equal(body.code, 'INVALID_REQUEST');
        const named = (body.details?.errors ?? []).map((e: any) => String(e.pointer).split('/')[1]);
        assert.ok(named.some((f: string) => Object.keys(p).includes(f)), `${q}: ${res.body}`);
      }),
      Number(process.env.COSTS_FUZZ_RUNS ?? 10) * 20,
    );
  });
  // Live keys (the workload holds operator adjustments, live only) on the paid providers' fakes.
}, testKeySuite({ live: { unitPrices: true } }));
