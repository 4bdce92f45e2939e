/**
 * The SDK and was-client for cost analytics (issue 36): client.costs.list and .csv, the ledger's
 * async iterator and CSV stream, client.usage.history, and `was-client costs --by day --group
 * operationId` (a table, and --json for the report), against the in-process service.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, type TestContext, testKeySuite } from '../support/harness.js';
import { describeSdkDatabases, runCli } from '../support/sdk.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { drain, run } from '../support/jobs.js';
import { baseUrl } from '../support/base-url.js';
import { parseCsv } from '../support/costs-oracle.js';
import { createClient } from '../../packages/sdk/src/node.js';

async function workload(ctx: TestContext): Promise<Tenant> {
  ctx.clock.set(Date.UTC(2026, 10, 18, 9, 0));
  const t = await seedTenant(ctx.deps, { mode: 'test', credits: 1_000_000 });
  for (const cost of [120, 80]) {
    assert.equal((await run(ctx, t, 'chat.generate', { messages: [{ role: 'user', content: `hi [sim:cost=${cost}]` }], maxTokens: 100 })).statusCode, 200);
  }
  ctx.clock.advance(86_400_000);
  assert.equal((await run(ctx, t, 'music.generate', { prompt: 'a tune [sim:cost=2500]', durationSeconds: 10 })).statusCode, 202);
  await drain(ctx);
  return t;
}

describeSdkDatabases('SDK: costs, ledger iteration and export, usage history', (get) => {
  test('client.costs.list is GET /v1/costs (groupBy repeated); client.costs.csv streams the same lines', async () => {
    const ctx = get();
    const t = await workload(ctx);
    const client = createClient({ baseUrl: await baseUrl(ctx), apiKey: t.secret, workspaceId: t.workspace.id });
    const params = { bucket: 'day' as const, from: '2026-11-18', to: new Date(Date.UTC(2026, 10, 20)), groupBy: ['operationId' as const, 'keyId' as const] };
    const report = await client.costs.list(params);
    const rest = (await call(ctx, 'GET', '/v1/costs?bucket=day&from=2026-11-18&to=2026-11-20T00:00:00.000Z&groupBy=operationId&groupBy=keyId', { secret: t.secret, workspaceId: t.workspace.id })).json().data;
    assert.deepEqual(report, rest);
    assert.deepEqual(report.totals.lines.map((l) => [l.operationId, l.keyId, l.costMillicents]), [
      ['chat.generate', t.key.id, 200],
      ['music.generate', t.key.id, 2_500],
    ]);
    const lines: string[] = [];
    for await (const line of client.costs.csv(params)) lines.push(line);
    const rows = parseCsv(lines.map((l) => `${l}\r\n`).join(''));
    assert.equal(rows[0]!.join(','), 'bucketStart,bucketEnd,type,operationId,keyId,executionOrigin,costMillicents,entries');
    assert.equal(rows.slice(1).reduce((s, r) => s + Number(r[6]), 0), report.totals.costMillicents);
  });

  test('client.transactions.iterate yields every ledger entry with keyId and operationId; .csv streams the ledger; client.usage.history groups points', async () => {
    const ctx = get();
    const t = await workload(ctx);
    const client = createClient({ baseUrl: await baseUrl(ctx), apiKey: t.secret, workspaceId: t.workspace.id });
    const entries = [];
    for await (const e of client.transactions.iterate({ limit: 2 })) entries.push(e);
    assert.deepEqual(entries.map((e) => [e.type, e.amountMillicents, e.operationId, e.keyId]), [
      ['usage', -2_500, 'music.generate', t.key.id],
      ['usage', -80, 'chat.generate', t.key.id],
      ['usage', -120, 'chat.generate', t.key.id],
      ['purchase', 1_000_000, null, null],
    ]);
    const ranged = [];
    for await (const e of client.transactions.iterate({ from: '2026-11-19' })) ranged.push(e.amountMillicents);
    assert.deepEqual(ranged, [-2_500]);
    const csv: string[] = [];
    for await (const line of client.transactions.csv()) csv.push(line);
    assert.equal(csv.length, 5);
    assert.deepEqual(parseCsv(csv.slice(1).map((l) => `${l}\r\n`).join('')).map((r) => Number(r[3])), [1_000_000, -120, -80, -2_500]);
    const history = await client.usage.history({ bucket: 'day', from: '2026-11-18', groupBy: ['operation'] });
    assert.ok(history.totals.lines.some((l) => l.operation === 'chat.generate' && l.points > 0), JSON.stringify(history.totals));
  });

  test('was-client costs --by day --group operationId prints a table with a total; --json prints the report', async () => {
    const ctx = get();
    const t = await workload(ctx);
    const env = { SERVICE_URL: await baseUrl(ctx), SERVICE_API_KEY: t.secret, SERVICE_WORKSPACE: t.workspace.id };
    const args = ['costs', '--by', 'day', '--group', 'operationId', '--from', '2026-11-18', '--to', '2026-11-20'];
    const out = await runCli(args, env);
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^day\s+type\s+operationId\s+costMillicents\s+entries$/);
    assert.match(lines[2]!, /^2026-11-18\s+usage\s+chat\.generate\s+200\s+2$/);
    assert.match(lines[3]!, /^2026-11-19\s+usage\s+music\.generate\s+2500\s+1$/);
    assert.match(lines[4]!, /^total\s+2700\s+3$/);
    const json = await runCli([...args, '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.totals.costMillicents, 2_700);
    assert.deepEqual(report.groupBy, ['operationId']);
    const bad = await runCli(['costs', '--group', 'toolSlug'], env);
    assert.equal(bad.code, 2, 'an unknown group is a usage error');
  });
}, testKeySuite());
