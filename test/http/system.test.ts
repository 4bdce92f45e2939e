/** Operational endpoints: /healthz, /readyz, /metrics (decisions.md section 4), and worker maintenance. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { call, createTestContext, describeEachDatabase, disposeTestContext, TEST_ADMIN_TOKEN, type TestContext } from '../support/harness.js';
import { testDatabaseNames } from '../support/databases.js';
import { seedTenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { runMaintenanceOnce, startMaintenance } from '../../src/worker/maintenance.js';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { DRAIN_CHECK_MS } from '../../src/http/connection-drain.js';
import { buildApp, requestId } from '../../src/app.js';
import { isUuidV7 } from '../../src/lib/ids.js';
import { waitUntil } from '../support/wait.js';

/** One Prometheus text-format sample line: name{labels} value. */
const SAMPLE_LINE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? -?([0-9.e+-]+|NaN|\+Inf|-Inf)$/;

describeEachDatabase('system endpoints', (get) => {
  test('/healthz is 200 with the envelope and X-Request-Id, without a key', async () => {
    const ctx = get();
    const res = await ctx.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { success: true, code: 'HEALTH', message: 'The process is running.', data: { status: 'ok' } });
    assert.ok(res.headers['x-request-id']);
  });

  test('/readyz is 200 once the database is migrated', async () => {
    const ctx = get();
    const res = await ctx.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.status, 'ready');
    assert.equal(res.json().code, 'READY');
  });

  test('/metrics is Prometheus text and counts requests by route pattern after traffic', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1000 });
    for (let i = 0; i < 3; i++) {
      assert.equal((await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).statusCode, 200);
    }
    assert.equal((await call(ctx, 'GET', '/v1/usage', { secret: 'wask_bad', workspaceId: t.workspace.id })).statusCode, 401);
    const res = await ctx.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const lines = res.body.split('\n').filter((l) => l !== '');
    for (const line of lines) {
      if (line.startsWith('#')) assert.match(line, /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* /, line);
      else assert.match(line, SAMPLE_LINE, line);
    }
    const ok = lines.find((l) => l.startsWith('http_requests_total{') && l.includes('route="/v1/usage"') && l.includes('status="200"'));
    assert.ok(ok, `http_requests_total for /v1/usage 200 is present:\n${res.body}`);
    assert.ok(Number(ok.split(' ').pop()) >= 3);
    assert.ok(lines.some((l) => l.startsWith('http_requests_total{') && l.includes('route="/v1/usage"') && l.includes('status="401"')));
    assert.ok(lines.some((l) => l.startsWith('http_request_duration_seconds_bucket{')));
  });

  test('/metrics labels unmatched URLs as one route (no label per unknown path)', async () => {
    const ctx = get();
    await ctx.app.inject({ method: 'GET', url: '/no-such-path-a1' });
    await ctx.app.inject({ method: 'GET', url: '/no-such-path-b2' });
    const res = await ctx.app.inject({ method: 'GET', url: '/metrics' });
    assert.ok(!res.body.includes('no-such-path'), 'raw unknown paths never become labels');
    assert.match(res.body, /http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/);
  });

  test('system endpoints are unauthenticated and cost no usage points', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      const res = await call(ctx, 'GET', url, { secret: t.secret, workspaceId: t.workspace.id });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['ratelimit-remaining'], undefined, `${url} is not metered`);
    }
  });

  test('while draining, a request in flight finishes and a pipelined one gets 503 UNAVAILABLE with Retry-After', async () => {
    const ctx = get();
    const app = await buildApp(ctx.deps);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    const until = (pattern: RegExp) => waitUntil(() => received, (r) => pattern.test(r), `${pattern} on the socket`, 60_000, 25);
    const body = JSON.stringify({ email: 'drain@example.com', name: 'Drain' });
    socket.write(
      `POST /admin/v1/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_ADMIN_TOKEN}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await until(/100 Continue/); // the first request is in flight
    const closed = app.close();
    socket.write(`${body}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
    await until(/HTTP\/1\.1 503[\s\S]*\r\n\r\n\{[^}]*\}/);
    await closed;
    socket.destroy();
    const responses = received.split(/(?=HTTP\/1\.1 )/).filter((r) => !r.startsWith('HTTP/1.1 100'));
    assert.match(responses[0]!, /^HTTP\/1\.1 200/, 'the request in flight completed');
    assert.match(responses[0]!, /drain@example\.com/);
    const drained = responses[1]!;
    assert.match(drained, /^HTTP\/1\.1 503/);
    assert.match(drained, /\r\nretry-after: 1\r\n/i);
    assert.match(drained, /\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
    assert.match(drained, /"code":"UNAVAILABLE"/);
  });

  test('while draining, a connection with no request in progress is closed within two drain checks (a silent spare connection, a stalled request head); one that sends its request meanwhile gets 503 UNAVAILABLE; the stop waits for neither', async () => {
    const ctx = get();
    const app = await buildApp(ctx.deps);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const open = (): Promise<Socket> => new Promise((resolve) => { const s = connect(port, '127.0.0.1', () => resolve(s)); });
    const [silent, stalled, late] = await Promise.all([open(), open(), open()]);
    const closedAt = new Map<Socket, number>();
    for (const s of [silent, stalled, late]) s.on('error', () => {}).on('close', () => closedAt.set(s, Date.now()));
    let received = '';
    late.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    stalled.write('GET /healthz HTTP/1.1\r\nHo');
    await waitUntil(() => new Promise<number>((r) => app.server.getConnections((_, n) => r(n))), (n) => n === 3, 'the server holds the three connections', 10_000, 10);

    const started = Date.now();
    const closing = app.close();
    late.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    // Node alone kept such connections (and the stop) open for about 70 s.
    const stopped = await Promise.race([closing.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 15_000).unref())]);
    assert.ok(stopped, 'app.close() returned within 15 s');
    assert.ok(Date.now() - started < 2 * DRAIN_CHECK_MS + 2000, `app.close() took ${Date.now() - started} ms`);
    await waitUntil(() => closedAt.size, (n) => n === 3, 'every client saw its connection closed', 10_000, 10);
    for (const s of [silent, stalled]) assert.ok(closedAt.get(s)! - started >= DRAIN_CHECK_MS, 'a connection had at least one drain check to send a request');
    assert.match(received, /^HTTP\/1\.1 503[\s\S]*"code":"UNAVAILABLE"/, 'the request sent while draining was answered');
    assert.match(received, /\r\nconnection: close\r\n/i);
  });

  test('worker maintenance settles expired credit allocations and leaves the ledger consistent', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 5000, expiresAt: ctx.clock.now() + 60_000 });
    ctx.clock.advance(120_000);
    assert.ok((await runMaintenanceOnce(ctx.deps)) >= 1, 'the workspace with an expired allocation was settled');
    const types = await ctx.deps.db.selectFrom('credit_transactions').select('type').where('workspace_id', '=', t.workspace.id).execute();
    assert.ok(types.some((r) => r.type === 'expiration'), 'an expiration transaction was written');
    assert.equal(await runMaintenanceOnce(ctx.deps), 0, 'a second pass finds nothing due');
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('worker maintenance deletes idempotency records past 24 h and stream slots (job and MCP streams) whose heartbeat stopped', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const now = ctx.clock.now();
    const base = { key_id: t.key.id, workspace_id: t.workspace.id, request_hash: 'h', state: 'done' as const, status_code: 202, response_json: '{}' };
    await ctx.deps.db
      .insertInto('idempotency_keys')
      .values([
        { ...base, idem_key: 'old', created_at_ms: now - 90_000_000, expires_at_ms: now - 3_600_000 },
        { ...base, idem_key: 'fresh', created_at_ms: now, expires_at_ms: now + 86_400_000 },
      ])
      .execute();
    await ctx.deps.db
      .insertInto('stream_slots')
      .values([
        { id: 'slot-dead', workspace_id: t.workspace.id, key_id: t.key.id, job_id: 'j', expires_at_ms: now - 1 },
        { id: 'slot-live', workspace_id: t.workspace.id, key_id: t.key.id, job_id: 'j', expires_at_ms: now + 30_000 },
      ])
      .execute();
    await ctx.deps.db
      .insertInto('mcp_stream_slots')
      .values([
        { id: 'mcp-dead', key_id: t.key.id, expires_at_ms: now - 1 },
        { id: 'mcp-live', key_id: t.key.id, expires_at_ms: now + 30_000 },
      ])
      .execute();
    await runMaintenanceOnce(ctx.deps);
    const keys = await ctx.deps.db.selectFrom('idempotency_keys').select('idem_key').where('workspace_id', '=', t.workspace.id).execute();
    assert.deepEqual(keys.map((k) => k.idem_key), ['fresh']);
    const slots = await ctx.deps.db.selectFrom('stream_slots').select('id').where('workspace_id', '=', t.workspace.id).execute();
    assert.deepEqual(slots.map((r) => r.id), ['slot-live']);
    const mcpSlots = await ctx.deps.db.selectFrom('mcp_stream_slots').select('id').where('key_id', '=', t.key.id).execute();
    assert.deepEqual(mcpSlots.map((r) => r.id), ['mcp-live'], 'and the MCP streams’ slots likewise');
  });

  test('event retention: maintenance deletes events older than EVENT_RETENTION_DAYS with their finished deliveries, never one still being delivered', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const day = 86_400_000;
    const now = ctx.clock.now();
    const retention = ctx.config.eventRetentionDays;
    assert.equal(retention, 30, 'default retention: 30 days');
    const old = now - (retention + 1) * day;
    await ctx.deps.db
      .insertInto('webhooks')
      .values({ id: 'hook-1', workspace_id: t.workspace.id, url: 'https://hooks.example.com/x', hostname: 'hooks.example.com', event_types_json: '["job.completed"]', enabled: 1, secret_enc: 'sealed', created_at_ms: old, updated_at_ms: old, revoked_at_ms: null })
      .execute();
    const event = (id: string, at: number) => ({ id, workspace_id: t.workspace.id, type: 'job.completed', data_json: '{}', created_at_ms: at });
    await ctx.deps.db.insertInto('events').values([event('ev-old-done', old), event('ev-old-pending', old), event('ev-old-bare', old), event('ev-recent', now - day)]).execute();
    const delivery = (id: string, eventId: string, status: 'succeeded' | 'pending' | 'failed') => ({
      id, workspace_id: t.workspace.id, webhook_id: 'hook-1', event_id: eventId, status, attempts: 1, replay_count: 0, next_attempt_at_ms: now, lease_token: 0, created_at_ms: old, updated_at_ms: old,
    });
    await ctx.deps.db
      .insertInto('webhook_deliveries')
      .values([delivery('d-done', 'ev-old-done', 'succeeded'), delivery('d-pending', 'ev-old-pending', 'pending'), delivery('d-recent', 'ev-recent', 'failed')])
      .execute();
    await runMaintenanceOnce(ctx.deps);
    const events = await ctx.deps.db.selectFrom('events').select('id').where('workspace_id', '=', t.workspace.id).orderBy('id').execute();
    assert.deepEqual(events.map((e) => e.id), ['ev-old-pending', 'ev-recent'], 'old finished events went; the one still being delivered and the recent one stay');
    const deliveries = await ctx.deps.db.selectFrom('webhook_deliveries').select('id').where('workspace_id', '=', t.workspace.id).orderBy('id').execute();
    assert.deepEqual(deliveries.map((d) => d.id), ['d-pending', 'd-recent']);
  });

  test('startMaintenance runs a pass at once and its stop waits for the pass in progress', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 700, expiresAt: ctx.clock.now() + 1000 });
    ctx.clock.advance(5000);
    const stop = startMaintenance(ctx.deps, 3_600_000);
    await stop();
    const row = await ctx.deps.db
      .selectFrom('credit_transactions')
      .select('type')
      .where('workspace_id', '=', t.workspace.id)
      .where('type', '=', 'expiration')
      .executeTakeFirst();
    assert.ok(row, 'the first pass finished before stop() resolved');
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });
});

describe('request ids', () => {
  test('request ids are distinct UUIDv7 values whose timestamp is the current time', () => {
    const before = Date.now();
    const ids = Array.from({ length: 10_000 }, () => requestId());
    const after = Date.now();
    assert.equal(new Set(ids).size, ids.length, 'all distinct');
    for (const id of ids.slice(0, 100)) {
      assert.ok(isUuidV7(id), id);
      const ms = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
      assert.ok(ms >= before && ms <= after, `${id} carries the creation time`);
    }
  });
});

// One context per database (PGlite takes seconds to start); the tests run in order and the
// second one breaks the database for good.
for (const dbName of testDatabaseNames()) {
  describe(`readiness without a usable database [${dbName}]`, () => {
    let ctx: TestContext | undefined;
    before(async () => {
      ctx = await createTestContext(dbName);
    });
    after(async () => {
      if (ctx) await disposeTestContext(ctx);
    });

    test('/readyz is 503 UNAVAILABLE with Retry-After while a migration is missing', async () => {
      const c = ctx!;
      const last = await c.deps.db.selectFrom('kysely_migration' as never).select(sql<string>`name`.as('name')).orderBy(sql`name`, 'desc').executeTakeFirstOrThrow();
      await sql`delete from kysely_migration where name = ${last.name}`.execute(c.deps.db);
      const res = await c.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.headers['retry-after'], '5');
      assert.equal(res.json().code, 'UNAVAILABLE');
      assert.equal(res.json().details.status, 'migrating');
      assert.equal(res.json().requestId, res.headers['x-request-id']);
    });

    test('/readyz is 503 UNAVAILABLE with Retry-After when the database is unreachable; /healthz stays 200', async () => {
      const c = ctx!;
      await c.database.handle.close();
      const res = await c.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.headers['retry-after'], '5');
      assert.equal(res.json().success, false);
      assert.equal(res.json().code, 'UNAVAILABLE');
      assert.equal(res.json().details.status, 'database unreachable');
      assert.equal((await c.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    });
  });
}
