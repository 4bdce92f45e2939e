/**
 * Cost analytics (issue 36; docs/decisions.md, "Cost and usage analytics"): attribution of ledger
 * entries (keyId, operationId), GET /v1/costs (buckets, groups, lines of their own for refunds,
 * debits and expirations, totals), its refusals naming the field, tenant isolation and scope, usage
 * points, and the CSV exports of the costs and of the ledger. Each test names the rule it checks.
 * Tenants that run operations use test keys (simulated work, the test balance and ledger) where
 * the test is about the caller's own reads; the tests whose reports hold operator adjustments or
 * are read by the operator stay live (see the second block).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adjustCredits } from '../../src/modules/billing/adjustments.js';
import { grantCredits, sweepExpirations } from '../../src/modules/billing/service.js';
import * as billing from '../../src/modules/billing/store.js';
import { csvField } from '../../src/modules/costs/csv.js';
import { newId } from '../../src/lib/ids.js';
import { call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { assertError, assertOk } from '../support/assertions.js';
import { drain, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { assertRollupMatchesLedger, ledgerRows, parseCsv } from '../support/costs-oracle.js';
import { callTool, connectClient } from '../support/mcp-client.js';
import { chatCosting, musicCosting } from '../support/sim-inputs.js';
import { liveChatCosting, liveMusicCosting } from '../support/live-costing.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;

function costsUrl(params: Record<string, string | string[]>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const x of Array.isArray(v) ? v : [v]) q.append(k, x);
  return `/v1/costs?${q}`;
}

async function costs(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, params: Record<string, string | string[]>, headers?: Record<string, string>) {
  return call(ctx, 'GET', costsUrl(params), { secret: t.secret, workspaceId: t.workspace.id, ...(headers ? { headers } : {}) });
}

async function runChat(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, cost: number) {
  const res = await run(ctx, t, 'chat.generate', chatCosting(cost));
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.jobId as string;
}

async function runMusic(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, cost: number) {
  const res = await run(ctx, t, 'music.generate', musicCosting(cost));
  assert.equal(res.statusCode, 202, res.body);
  await drain(ctx);
  return res.json().data.jobId as string;
}

/** Live runs of an exact cost on the paid providers' fakes (support/live-costing.ts). */
async function liveChat(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, cost: number) {
  const res = await run(ctx, t, 'chat.generate', liveChatCosting(ctx, cost));
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.jobId as string;
}

async function liveMusic(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, cost: number) {
  const res = await run(ctx, t, 'music.generate', liveMusicCosting(ctx, cost));
  assert.equal(res.statusCode, 202, res.body);
  await drain(ctx);
  return res.json().data.jobId as string;
}

const iso = (ms: number) => new Date(ms).toISOString();

describeEachDatabase('cost analytics', (get) => {
  test('rule "defaults": without from and to, the last 31 days (bucket=day, default), ending with today; 24 hours; 12 months', async () => {
    const ctx = get();
    ctx.clock.set(Date.UTC(2026, 10, 25, 13, 15));
    const t = await seedTenant(ctx.deps, { credits: 10_000 });
    const d = assertOk(await costs(ctx, t, {})).data;
    assert.equal(d.bucket, 'day');
    assert.equal(d.to, iso(Date.UTC(2026, 10, 26)));
    assert.equal(d.from, iso(Date.UTC(2026, 10, 26) - 31 * DAY));
    assert.equal(d.buckets.length, 31);
    const h = assertOk(await costs(ctx, t, { bucket: 'hour' })).data;
    assert.equal(h.buckets.length, 24);
    assert.equal(h.to, iso(Date.UTC(2026, 10, 25, 14)));
    const m = assertOk(await costs(ctx, t, { bucket: 'month' })).data;
    assert.equal(m.buckets.length, 12);
    assert.equal(m.from, iso(Date.UTC(2025, 11, 1)));
    assert.equal(m.to, iso(Date.UTC(2026, 11, 1)));
  });

  test('rule "bad input is 400 INVALID_REQUEST naming the field": unknown bucket or group, bad dates, reversed and oversized ranges', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 10_000 });
    const cases: [Record<string, string | string[]>, string][] = [
      [{ bucket: 'week' }, '/bucket'],
      [{ groupBy: 'toolSlug' }, '/groupBy/0'],
      [{ groupBy: ['keyId', 'workspaceId'] }, '/groupBy/1'],
      [{ groupBy: ['keyId', 'keyId', 'operationId', 'executionOrigin'] }, '/groupBy'],
      [{ from: 'yesterday' }, '/from'],
      [{ from: '2026-02-30' }, '/from'],
      [{ from: '2026-11-01T25:00:00Z' }, '/from'],
      [{ to: '2026-13-01' }, '/to'],
      [{ from: '1969-12-31' }, '/from'],
      [{ from: '2026-11-10', to: '2026-11-09' }, '/to'],
      [{ from: '2026-11-10', to: '2026-11-10' }, '/to'],
      [{ bucket: 'hour', from: '2026-10-01', to: '2026-11-02' }, '/to'],
      [{ bucket: 'day', from: '2025-01-01', to: '2026-11-02' }, '/to'],
      [{ bucket: 'month', from: '2020-01-01', to: '2026-11-02' }, '/to'],
      [{ bucket: 'hour', from: '2026-01-01' }, '/from'],
      [{ format: 'xml' }, '/format'],
    ];
    for (const [params, pointer] of cases) {
      const body = assertError(await costs(ctx, t, params), 400, 'INVALID_REQUEST');
      const pointers = (body.details?.errors ?? []).map((e: any) => e.pointer);
      assert.ok(pointers.includes(pointer), `${JSON.stringify(params)}: details name ${pointer} (got ${JSON.stringify(body.details)})`);
    }
    // The largest ranges allowed are answered.
    assertOk(await costs(ctx, t, { bucket: 'hour', from: '2026-10-01', to: '2026-11-01' }));
    assertOk(await costs(ctx, t, { bucket: 'day', from: '2025-11-01', to: '2026-11-02' }));
    assertOk(await costs(ctx, t, { bucket: 'month', from: '2023-11-01', to: '2026-11-01' }));
    // Ledger exports refuse bad ranges the same way.
    for (const [params, pointer] of [[{ from: 'x', format: 'csv' }, '/from'], [{ from: '2026-11-10', to: '2026-11-01' }, '/to']] as const) {
      const res = await call(ctx, 'GET', `/v1/transactions?${new URLSearchParams(params)}`, { secret: t.secret, workspaceId: t.workspace.id });
      const body = assertError(res, 400, 'INVALID_REQUEST');
      assert.ok(body.details.errors.some((e: any) => e.pointer === pointer), res.body);
    }
  });

  test('rule "tenant isolation": a workspace\'s costs and ledger export show only its own entries; another workspace is 403; the scope is billing:read', async () => {
    const ctx = get();
    const a = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const b = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    await runChat(ctx, a, 500);
    await runChat(ctx, b, 70);
    const onlyB = assertOk(await costs(ctx, b, { groupBy: ['keyId', 'operationId'] })).data;
    assert.equal(onlyB.totals.costMillicents, 70);
    assert.deepEqual(onlyB.totals.lines.map((l: any) => l.keyId), [b.key.id]);
    const csvB = parseCsv((await call(ctx, 'GET', '/v1/transactions?format=csv', { secret: b.secret, workspaceId: b.workspace.id })).body);
    assert.deepEqual(csvB.slice(1).map((r) => r[3]).sort(), ['-70', '100000']);
    assertError(await costs(ctx, { secret: b.secret, workspace: a.workspace }, {}), 403, 'FORBIDDEN_WORKSPACE');
    assertError(await call(ctx, 'GET', '/v1/transactions?format=csv', { secret: b.secret, workspaceId: a.workspace.id }), 403, 'FORBIDDEN_WORKSPACE');
    const noBilling = await seedKey(ctx.deps, a.user.id, [a.workspace.id], { scopes: ['usage:read', 'tools:run'] });
    assertError(await costs(ctx, { secret: noBilling.secret, workspace: a.workspace }, {}), 403, 'FORBIDDEN_SCOPE');
    assertError(await call(ctx, 'GET', '/v1/costs', {}), 401, 'UNAUTHENTICATED');
  });

  test('rule "2 usage points like the other billing reads": each GET /v1/costs (JSON or CSV) charges 2 points', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 10_000 });
    const usage = async () => assertOk(await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).data.points.monthlyUsed as number;
    const before = await usage();
    assertOk(await costs(ctx, t, {}));
    assert.equal((await costs(ctx, t, { format: 'csv' })).statusCode, 200);
    // 2 + 2, plus the 1 point of the second usage read itself.
    assert.equal(await usage(), before + 1 + 4);
  });

  test('rule "ledger export": GET /v1/transactions as CSV streams every entry of the range oldest first, in chunks, with the ledger\'s sum; from/to also filter the JSON list', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 10_000_000 });
    const start = ctx.clock.now();
    // 2,500 usage entries (more than two export chunks), one a minute.
    const allocation = (await ctx.deps.db.selectFrom('credit_allocations').select('id').where('workspace_id', '=', t.workspace.id).executeTakeFirstOrThrow()).id;
    await ctx.deps.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 2_500; i++) {
        await billing.appendLedger(trx, {
          id: newId(), workspaceId: t.workspace.id, type: 'usage', amountMillicents: -(i + 1), allocationId: null, keyId: t.key.id,
          toolSlug: 'chat', operationId: 'chat.generate', jobId: null, executionOrigin: 'api', createdAt: start + (i + 1) * 60_000,
        });
      }
      const spent = (2_500 * 2_501) / 2;
      await trx.updateTable('credit_allocations').set({ remaining_mc: 10_000_000 - spent }).where('id', '=', allocation).execute();
    });
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
    const res = await call(ctx, 'GET', '/v1/transactions', { secret: t.secret, workspaceId: t.workspace.id, headers: { accept: 'text/csv' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-disposition']), /attachment; filename="transactions.csv"/);
    const rows = parseCsv(res.body);
    assert.deepEqual(rows[0], ['id', 'createdAt', 'type', 'amountMillicents', 'toolSlug', 'operationId', 'keyId', 'jobId', 'executionOrigin']);
    assert.equal(rows.length, 1 + 2_501);
    const ledger = await ledgerRows(ctx.deps, t.workspace.id);
    assert.equal(rows.slice(1).reduce((s, r) => s + Number(r[3]), 0), ledger.reduce((s, r) => s + r.amount, 0), 'the export sums to the ledger');
    const ids = rows.slice(1).map((r) => r[0]!);
    assert.deepEqual(ids, [...ids].sort(), 'oldest first');
    assert.equal(new Set(ids).size, ids.length, 'no entry twice across chunks');
    assert.deepEqual(rows[2], [rows[2]![0], iso(start + 60_000), 'usage', '-1', 'chat', 'chat.generate', t.key.id, '', 'api']);
    // A range: [from, to) by createdAt.
    const from = iso(start + 100 * 60_000);
    const to = iso(start + 200 * 60_000);
    const ranged = parseCsv((await call(ctx, 'GET', `/v1/transactions?format=csv&from=${from}&to=${to}`, { secret: t.secret, workspaceId: t.workspace.id })).body);
    assert.deepEqual(ranged.slice(1).map((r) => Number(r[3])), Array.from({ length: 100 }, (_, i) => -(100 + i)));
    const page = assertOk(await call(ctx, 'GET', `/v1/transactions?from=${from}&to=${to}&limit=100`, { secret: t.secret, workspaceId: t.workspace.id })).data;
    assert.deepEqual(page.items.map((i: any) => i.amountMillicents), Array.from({ length: 100 }, (_, i) => -(199 - i)));
    assert.equal(page.nextCursor, null);
    await assertRollupMatchesLedger(ctx.deps, t.workspace.id);
  });

  test('rule "CSV fields": quoted when they hold a comma, quote or line break; text a spreadsheet would run as a formula is defused; numbers are plain', () => {
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField('two\r\nlines'), '"two\r\nlines"');
    assert.equal(csvField('=SUM(A1)'), "'=SUM(A1)");
    assert.equal(csvField('@cmd'), "'@cmd");
    assert.equal(csvField(-1234), '-1234');
    assert.equal(csvField('-1234'), '-1234');
    assert.equal(csvField(null), '');
  });

  test('rule "MCP tools are read-only reads of the same data": service_costs_get and service_usage_history answer as REST (groupBy as an array)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    await runChat(ctx, t, 33);
    const client = await connectClient(ctx, t.secret);
    try {
      const tools = (await client.listTools()).tools;
      for (const name of ['service_costs_get', 'service_usage_history']) {
        const tool = tools.find((x) => x.name === name);
        assert.ok(tool, `${name} is listed`);
        assert.equal(tool!.annotations?.readOnlyHint, true);
        assert.equal(tool!.annotations?.destructiveHint, false);
      }
      const res = await callTool(client, 'service_costs_get', { workspaceId: t.workspace.id, bucket: 'month', groupBy: ['operationId', 'keyId'] });
      assert.equal(res.isError, false, JSON.stringify(res.body));
      const rest = assertOk(await costs(ctx, t, { bucket: 'month', groupBy: ['operationId', 'keyId'] })).data;
      assert.deepEqual(res.structured.data, rest);
      assert.deepEqual(res.structured.data.totals.lines, [{ type: 'usage', operationId: 'chat.generate', keyId: t.key.id, costMillicents: 33, entries: 1 }]);
      // format=csv does not turn a tool result into CSV: tools answer JSON.
      const csv = await callTool(client, 'service_costs_get', { workspaceId: t.workspace.id, format: 'csv' });
      assert.equal(csv.isError, false);
      assert.equal(csv.structured.data.totals.costMillicents, 33);
      const h = await callTool(client, 'service_usage_history', { workspaceId: t.workspace.id, bucket: 'minute', groupBy: ['operation'] });
      assert.equal(h.isError, false, JSON.stringify(h.body));
      assert.ok(h.structured.data.totals.lines.some((l: any) => l.operation === 'chat.generate'));
    } finally {
      await client.close();
    }
  });
}, testKeySuite());

// Live keys with real work on the paid providers' fakes (support/live-backend.ts, at unit prices so
// that each run costs what the fake reports): these reports put job spending beside what exists in
// live mode only, operator adjustments (refund and debit lines; the test balance takes no
// adjustment) and the operator's reads of a workspace's money (the admin ledger and costs answer
// for the live workspace, top spenders leave test money out).
describeEachDatabase('cost analytics: job spending beside live-only money', (get) => {
  test('rule "attribution": a job\'s usage entry carries the keyId and operationId that spent (added fields of GET /v1/transactions); entries of no job carry null', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000 });
    const second = await seedKey(ctx.deps, t.user.id, [t.workspace.id]);
    const chatJob = await liveChat(ctx, t, 300);
    const musicJob = await liveMusic(ctx, { secret: second.secret, workspace: t.workspace }, 1_200);
    const res = await call(ctx, 'GET', '/v1/transactions', { secret: t.secret, workspaceId: t.workspace.id });
    const items = assertOk(res).data.items;
    const byJob = new Map(items.filter((i: any) => i.jobId).map((i: any) => [i.jobId, i]));
    assert.deepEqual(
      [byJob.get(chatJob), byJob.get(musicJob)].map((i: any) => [i.type, i.amountMillicents, i.keyId, i.operationId, i.toolSlug]),
      [
        ['usage', -300, t.key.id, 'chat.generate', 'chat'],
        ['usage', -1_200, second.key.id, 'music.generate', 'music'],
      ],
    );
    const purchase = items.find((i: any) => i.type === 'purchase');
    assert.equal(purchase.keyId, null);
    assert.equal(purchase.operationId, null);
    // The operator's ledger read shows the same attribution.
    const adminRes = await ctx.app.inject({ method: 'GET', url: `/admin/v1/workspaces/${t.workspace.id}/transactions`, headers: { authorization: 'Bearer test-admin-token-0123456789' } });
    const adminItem = adminRes.json().data.items.find((i: any) => i.jobId === musicJob);
    assert.equal(adminItem.keyId, second.key.id);
    assert.equal(adminItem.operationId, 'music.generate');
    await assertRollupMatchesLedger(ctx.deps, t.workspace.id);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('rules "UTC buckets", "groupBy" and "lines of their own": spending per day by operation and key; refunds, debits and expirations are separate lines; totals are the sums', async () => {
    const ctx = get();
    ctx.clock.set(Date.UTC(2026, 10, 20, 22, 30));
    const day1 = Date.UTC(2026, 10, 20);
    const t = await seedTenant(ctx.deps, { credits: 1_000_000 });
    const second = await seedKey(ctx.deps, t.user.id, [t.workspace.id]);
    await liveChat(ctx, t, 100);
    await liveMusic(ctx, t, 2_000);
    await liveMusic(ctx, { secret: second.secret, workspace: t.workspace }, 3_000);
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 5_000, expiresAt: ctx.clock.now() + 2 * HOUR });
    ctx.clock.advance(2 * HOUR); // 2026-11-21 00:30 UTC: the next day
    await sweepExpirations(ctx.deps);
    await liveChat(ctx, t, 40);
    await adjustCredits(ctx.deps, t.workspace.id, { amountMillicents: 900, reason: 'goodwill' });
    await adjustCredits(ctx.deps, t.workspace.id, { amountMillicents: -300, reason: 'correction' });

    const res = await costs(ctx, t, { bucket: 'day', from: '2026-11-20', to: '2026-11-22', groupBy: ['operationId', 'keyId'] });
    const data = assertOk(res).data;
    assert.equal(res.json().code, 'PUBLIC_COSTS_GET');
    assert.equal(data.bucket, 'day');
    assert.equal(data.from, iso(day1));
    assert.equal(data.to, iso(day1 + 2 * DAY));
    assert.deepEqual(data.groupBy, ['operationId', 'keyId']);
    assert.deepEqual(data.buckets, [
      {
        start: iso(day1),
        end: iso(day1 + DAY),
        costMillicents: 5_100,
        lines: [
          { type: 'usage', operationId: 'chat.generate', keyId: t.key.id, costMillicents: 100, entries: 1 },
          { type: 'usage', operationId: 'music.generate', keyId: [t.key.id, second.key.id].sort()[0], costMillicents: t.key.id < second.key.id ? 2_000 : 3_000, entries: 1 },
          { type: 'usage', operationId: 'music.generate', keyId: [t.key.id, second.key.id].sort()[1], costMillicents: t.key.id < second.key.id ? 3_000 : 2_000, entries: 1 },
        ],
      },
      {
        start: iso(day1 + DAY),
        end: iso(day1 + 2 * DAY),
        costMillicents: 40 - 900 + 300 + 5_000,
        lines: [
          { type: 'usage', operationId: 'chat.generate', keyId: t.key.id, costMillicents: 40, entries: 1 },
          { type: 'refund', operationId: null, keyId: null, costMillicents: -900, entries: 1 },
          { type: 'debit', operationId: null, keyId: null, costMillicents: 300, entries: 1 },
          { type: 'expiration', operationId: null, keyId: null, costMillicents: 5_000, entries: 1 },
        ],
      },
    ]);
    assert.deepEqual(data.totals.byType, { usage: 5_140, refund: -900, debit: 300, expiration: 5_000 });
    assert.equal(data.totals.costMillicents, 5_100 + 4_440);
    assert.equal(data.totals.lines.length, 6);

    // Hours: the same money, in the hours it was spent; the sum is the same.
    const hours = assertOk(await costs(ctx, t, { bucket: 'hour', from: iso(day1 + 22 * HOUR), to: iso(day1 + 25 * HOUR) })).data;
    assert.deepEqual(hours.buckets.map((b: any) => b.costMillicents), [5_100, 0, 4_440]);
    assert.deepEqual(hours.buckets[1].lines, [], 'an hour without entries is a bucket without lines');
    // Months: one bucket, the calendar month.
    const month = assertOk(await costs(ctx, t, { bucket: 'month', from: '2026-11-05', to: '2026-11-06' })).data;
    assert.equal(month.from, iso(Date.UTC(2026, 10, 1)));
    assert.equal(month.to, iso(Date.UTC(2026, 11, 1)));
    assert.equal(month.totals.costMillicents, 9_540);
    // Without groupBy: one line per type.
    const plain = assertOk(await costs(ctx, t, { bucket: 'day', from: '2026-11-20', to: '2026-11-22' })).data;
    assert.deepEqual(plain.totals.lines, [
      { type: 'usage', costMillicents: 5_140, entries: 4 },
      { type: 'refund', costMillicents: -900, entries: 1 },
      { type: 'debit', costMillicents: 300, entries: 1 },
      { type: 'expiration', costMillicents: 5_000, entries: 1 },
    ]);
    // executionOrigin: REST runs are `api`, entries of no job have none.
    const origin = assertOk(await costs(ctx, t, { bucket: 'month', groupBy: 'executionOrigin' })).data;
    assert.deepEqual(origin.totals.lines.map((l: any) => [l.type, l.executionOrigin, l.costMillicents]), [
      ['usage', 'api', 5_140],
      ['refund', null, -900],
      ['debit', null, 300],
      ['expiration', null, 5_000],
    ]);
    await assertRollupMatchesLedger(ctx.deps, t.workspace.id);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('rule "CSV round trip": /v1/costs as CSV (Accept: text/csv or format=csv) parses back to the JSON lines and totals', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000 });
    const second = await seedKey(ctx.deps, t.user.id, [t.workspace.id]);
    for (let i = 0; i < 5; i++) {
      await liveChat(ctx, i % 2 ? t : { secret: second.secret, workspace: t.workspace }, 10 + i);
      await liveMusic(ctx, t, 1_000 + i);
      ctx.clock.advance(5 * HOUR);
    }
    await adjustCredits(ctx.deps, t.workspace.id, { amountMillicents: 1_234, reason: 'refund, with "quotes"' });
    const params = { bucket: 'hour', from: iso(ctx.clock.now() - 2 * DAY), to: iso(ctx.clock.now() + HOUR), groupBy: ['keyId', 'operationId'] };
    const json = assertOk(await costs(ctx, t, params)).data;
    for (const [variant, res] of [
      ['format=csv', await costs(ctx, t, { ...params, format: 'csv' })],
      ['Accept: text/csv', await costs(ctx, t, params, { accept: 'text/csv' })],
    ] as const) {
      assert.equal(res.statusCode, 200, `${variant}: ${res.body}`);
      assert.match(String(res.headers['content-type']), /^text\/csv; charset=utf-8/);
      const rows = parseCsv(res.body);
      assert.deepEqual(rows[0], ['bucketStart', 'bucketEnd', 'type', 'operationId', 'keyId', 'executionOrigin', 'costMillicents', 'entries']);
      const fromJson = json.buckets.flatMap((b: any) =>
        b.lines.map((l: any) => [b.start, b.end, l.type, l.operationId ?? '', l.keyId ?? '', '', String(l.costMillicents), String(l.entries)]),
      );
      assert.deepEqual(rows.slice(1), fromJson, `${variant}: the same lines`);
      assert.equal(rows.slice(1).reduce((s, r) => s + Number(r[6]), 0), json.totals.costMillicents, `${variant}: the same total`);
    }
    // JSON stays the default, and wins when the client prefers it.
    assert.match(String((await costs(ctx, t, params, { accept: 'application/json, text/csv;q=0.5' })).headers['content-type']), /application\/json/);
    assert.match(String((await costs(ctx, t, { ...params, format: 'json' }, { accept: 'text/csv' })).headers['content-type']), /application\/json/);
  });

  test('rule "operator view": the admin API reads any workspace\'s costs and usage history as its keys do, 404 for an unknown workspace, and ranks workspaces by spending', async () => {
    const ctx = get();
    ctx.clock.set(Date.UTC(2026, 10, 27, 10, 0));
    const small = await seedTenant(ctx.deps, { credits: 100_000 });
    const big = await seedTenant(ctx.deps, { credits: 100_000 });
    await liveChat(ctx, small, 10);
    await liveMusic(ctx, big, 4_000);
    await liveChat(ctx, big, 5);
    const adminGet = (url: string, token = 'test-admin-token-0123456789') => ctx.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    const query = 'bucket=day&from=2026-11-27&to=2026-11-28&groupBy=operationId';
    const own = assertOk(await costs(ctx, big, { bucket: 'day', from: '2026-11-27', to: '2026-11-28', groupBy: 'operationId' })).data;
    const viaAdmin = await adminGet(`/admin/v1/workspaces/${big.workspace.id}/costs?${query}`);
    assert.equal(viaAdmin.statusCode, 200, viaAdmin.body);
    assert.equal(viaAdmin.json().code, 'ADMIN_COSTS_GET');
    assert.deepEqual(viaAdmin.json().data, own);
    assertError(await adminGet(`/admin/v1/workspaces/${newId()}/costs`), 404, 'NOT_FOUND');
    assertError(await adminGet(`/admin/v1/workspaces/${big.workspace.id}/costs`, 'wrong-token-0123456789abcdef'), 401, 'UNAUTHENTICATED');
    const adminBad = assertError(await adminGet(`/admin/v1/workspaces/${big.workspace.id}/costs?groupBy=toolSlug`), 400, 'INVALID_REQUEST');
    assert.equal(adminBad.details.errors[0].pointer, '/groupBy/0');
    const history = await adminGet(`/admin/v1/workspaces/${big.workspace.id}/usage/history?bucket=day&groupBy=operation`);
    assert.equal(history.statusCode, 200, history.body);
    assert.ok(history.json().data.totals.lines.some((l: any) => l.operation === 'music.generate'));
    assertError(await adminGet(`/admin/v1/workspaces/${newId()}/usage/history`), 404, 'NOT_FOUND');
    const top = await adminGet('/admin/v1/costs/top-spenders?bucket=day&from=2026-11-27&to=2026-11-28&limit=100');
    assert.equal(top.statusCode, 200, top.body);
    const items = top.json().data.items as any[];
    const rank = (id: string) => items.findIndex((i) => i.workspaceId === id);
    assert.ok(rank(big.workspace.id) >= 0 && rank(big.workspace.id) < rank(small.workspace.id), 'the larger spender ranks first');
    assert.deepEqual(items[rank(big.workspace.id)], { workspaceId: big.workspace.id, usageMillicents: 4_005, costMillicents: 4_005, usageEntries: 2 });
    for (let i = 1; i < items.length; i++) assert.ok(items[i - 1].usageMillicents >= items[i].usageMillicents, 'largest first');
  });

}, testKeySuite({ live: { unitPrices: true } }));
