/**
 * The standing stream of the MCP endpoint (GET /mcp, revision 2025-11-25): notifications/tasks/status
 * outside tasks/result (docs/mcp.md "Task status notifications", docs/decisions.md "MCP transport").
 * With the official SDK client on a real socket (its StreamableHTTPClientTransport opens the GET
 * stream itself after initialize), and with raw requests where the wire matters (priming event,
 * ids, resume, refusals, shutdown). Keys whose streams carry jobs are test keys (simulated work,
 * the test balance); those that only open or are refused streams stay live.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Agent } from 'node:http';
import pino from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TaskStatusNotificationSchema, type Task } from '@modelcontextprotocol/sdk/types.js';
import { buildApp } from '../../src/app.js';
import { openDatabase } from '../../src/db/connect.js';
import { createDeps } from '../../src/deps.js';
import { RECONNECT_AFTER_MS } from '../../src/mcp/task-events.js';
import { openTaskStreams, STREAMS_PER_KEY } from '../../src/mcp/task-notifications.js';
import * as accounts from '../../src/modules/accounts/service.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { ensureTestTwin } from '../../src/modules/accounts/test-twins.js';
import { claimJobs } from '../../src/worker/job-claim.js';
import { recoverExpiredLeases } from '../../src/worker/job-recovery.js';
import { admin, describeEachDatabase, TEST_SECRET_KEY, testKeySuite, type TestContext } from '../support/harness.js';
import { drain, run } from '../support/jobs.js';
import { baseUrl } from '../support/base-url.js';
import { frameReader, streamGet, type Frame } from '../support/sse.js';
import { waitFor } from '../support/wait.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';

const MUSIC = { prompt: 'a calm tune', durationSeconds: 5 };
const REVISION = '2025-11-25';

/** An SDK client whose every status notification is recorded; connected once its standing stream is open. */
async function watchingClient(ctx: TestContext, secret: string, headers: Record<string, string> = {}, app = ctx.app, fetchFn?: typeof fetch) {
  const before = openTaskStreams(app);
  const client = new Client({ name: 'watcher', version: '1.0.0' });
  const notes: Task[] = [];
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
    notes.push(n.params as Task);
  });
  if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
  const url = new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`);
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${secret}`, ...headers } }, ...(fetchFn ? { fetch: fetchFn } : {}) }));
  await waitFor('the SDK client’s standing GET stream', () => openTaskStreams(app) > before);
  return { client, notes, of: (jobId: string) => notes.filter((n) => n.taskId === jobId) };
}

async function queued(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>): Promise<string> {
  const res = await run(ctx, t, 'music.generate', MUSIC);
  assert.equal(res.statusCode, 202, res.body);
  return res.json().data.jobId as string;
}

/** A raw GET /mcp with the stream headers (over its own connection, or a keep-alive agent's). */
function rawGet(base: string, headers: Record<string, string>, agent: Agent | false = false) {
  return streamGet(`${base}/mcp`, { accept: 'text/event-stream', 'mcp-protocol-version': REVISION, ...headers }, agent);
}

function rpc(frame: Frame | undefined): any {
  return frame?.data ? JSON.parse(frame.data) : undefined;
}

/** Reads frames until one carries a status notification of `jobId` with this job status message prefix. */
async function untilStatus(reader: ReturnType<typeof frameReader>, jobId: string, status: Task['status']): Promise<Frame> {
  for (;;) {
    const frame = await reader.next(20_000);
    if (!frame) throw new Error(`stream ended before ${jobId} was ${status}`);
    const msg = rpc(frame);
    if (msg?.params?.taskId === jobId && msg.params.status === status) return frame;
  }
}

describeEachDatabase('MCP task status notifications (GET /mcp)', (get) => {
  test('standing stream: the SDK client opens GET /mcp itself and is told of a queued run’s pending → processing → completed, without tasks/result; a failed run says failed', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const w = await watchingClient(ctx, t.secret);
    try {
      const jobId = await queued(ctx, t);
      await drain(ctx);
      await waitFor('completed notification', () => w.of(jobId).some((n) => n.status === 'completed'));
      const seen = w.of(jobId).map((n) => `${n.status}:${n.statusMessage}`);
      assert.deepEqual(seen, ['working:Job running (0%)', 'completed:Job completed'], `one notification per status change, in order: ${seen.join(' | ')}`);
      const done = w.of(jobId).at(-1)!;
      assert.equal(done.ttl, null);
      assert.ok(done.pollInterval! > 0);
      assert.ok(done.lastUpdatedAt >= done.createdAt);

      const failing = await run(ctx, t, 'music.generate', { ...MUSIC, prompt: 'a tune [sim:fail=PROVIDER_ERROR]' });
      assert.equal(failing.statusCode, 202, failing.body);
      const failedId = failing.json().data.jobId as string;
      await drain(ctx);
      await waitFor('failed notification', () => w.of(failedId).some((n) => n.status === 'failed'));
      assert.match(w.of(failedId).at(-1)!.statusMessage!, /^Job failed: /);
    } finally {
      await w.client.close();
    }
    await waitFor('the stream closed with the client', () => openTaskStreams(ctx.app) === 0);
  });

  test('a requeued task is notified: a job whose worker lost its lease goes back to the queue (working, "Job waiting in the queue"), then runs to completion; one notification per status change', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const w = await watchingClient(ctx, t.secret);
    try {
      const jobId = await queued(ctx, t);
      const [claimed] = await claimJobs(ctx.deps, 'lost-worker', 1);
      assert.equal(claimed?.id, jobId);
      await waitFor('the processing notification', () => w.of(jobId).some((n) => n.statusMessage?.startsWith('Job running')));
      ctx.clock.advance(ctx.config.jobLeaseMs + 1);
      assert.equal(await recoverExpiredLeases(ctx.deps), 1);
      await waitFor('the requeue notification', () => w.of(jobId).some((n) => n.statusMessage === 'Job waiting in the queue'));
      await drain(ctx);
      await waitFor('the completed notification', () => w.of(jobId).some((n) => n.status === 'completed'));
      const seen = w.of(jobId).map((n) => `${n.status}:${n.statusMessage}`);
      assert.deepEqual(seen, ['working:Job running (0%)', 'working:Job waiting in the queue', 'working:Job running (0%)', 'completed:Job completed'], seen.join(' | '));
    } finally {
      await w.client.close();
    }
    await waitFor('the stream closed with the client', () => openTaskStreams(ctx.app) === 0);
  });

  test('scope: no notification of another workspace’s job (another tenant’s, or the same owner’s workspace the key lacks); X-Service-Workspace narrows a key of two workspaces to one; without it every workspace of the key is covered', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const other = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const second = await accounts.createWorkspace(ctx.deps, { name: 'Second', plan: 'pro', ownerUserId: t.user.id });
    await ensureTestTwin(ctx.deps.db, second, 0, ctx.clock.now());
    await grantCredits(ctx.deps, second.id, { amountMillicents: 1_000_000, mode: 'test' });
    const both = await seedKey(ctx.deps, t.user.id, [t.workspace.id, second.id], { transports: ['rest', 'mcp'], mode: 'test' });
    const secondKey = await seedKey(ctx.deps, t.user.id, [second.id], { transports: ['rest', 'mcp'], mode: 'test' });

    const onlyFirst = await watchingClient(ctx, t.secret);
    const pinned = await watchingClient(ctx, both.secret, { 'x-service-workspace': t.workspace.id });
    const all = await watchingClient(ctx, both.secret);
    try {
      const mine = await queued(ctx, t);
      const inSecond = await queued(ctx, { secret: secondKey.secret, workspace: second });
      const foreign = await queued(ctx, other);
      await drain(ctx);
      await waitFor('notifications of both workspaces', () => all.of(mine).some((n) => n.status === 'completed') && all.of(inSecond).some((n) => n.status === 'completed'));
      await waitFor('the one-workspace key’s notification', () => onlyFirst.of(mine).some((n) => n.status === 'completed') && pinned.of(mine).some((n) => n.status === 'completed'));
      // The changes were offered to every stream at the same time: nothing more is on its way.
      for (const [name, w] of [['key of one workspace', onlyFirst], ['pinned key', pinned]] as const) {
        assert.deepEqual(w.notes.filter((n) => n.taskId !== mine).map((n) => n.taskId), [], `${name}: only its workspace’s task`);
      }
      assert.equal(all.of(foreign).length, 0, 'never another tenant’s job');
    } finally {
      for (const w of [onlyFirst, pinned, all]) await w.client.close();
    }
  });

  test('a second process’s change arrives: a job run to completion by another process of the deployment is notified through the cross-process job-change feed (PostgreSQL LISTEN/NOTIFY)', async (tt) => {
    const ctx = get();
    if (ctx.dbName !== 'postgres') return tt.skip('one process owns an embedded database (SQLite, PGlite): no second process to hear from');
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    // Only the feed can deliver within the test: the safety poll is pushed out of reach.
    const saved = { ...ctx.deps.streamSettings };
    ctx.deps.streamSettings.pollMs = 600_000;
    const w = await watchingClient(ctx, t.secret);
    Object.assign(ctx.deps.streamSettings, saved);
    const handle = await openDatabase(ctx.database.url!);
    const deps2 = await createDeps({ config: ctx.config, secretKey: TEST_SECRET_KEY, database: handle, clock: ctx.clock, log: pino({ level: 'silent' }), epochPollMs: 0, migrate: false, net: ctx.deps.net });
    const app2 = await buildApp(deps2);
    await app2.ready();
    const p2: TestContext = { ...ctx, deps: deps2, app: app2 };
    try {
      // The job is created and finished by the other process.
      const jobId = await queued(p2, t);
      await drain(p2);
      await waitFor('completion notified across processes', () => w.of(jobId).some((n) => n.status === 'completed'), 20_000);
      assert.deepEqual(w.of(jobId).map((n) => n.status), ['working', 'completed']);
    } finally {
      await w.client.close();
      await app2.close();
      await deps2.close();
    }
  });

  test('wire: priming event (id, retry, empty data) first; each notification is `event: message` with a unique id; Last-Event-ID resumes with the changes missed while away; a Last-Event-ID that this endpoint never sent is 400', async () => {
    const ctx = get();
    const base = await baseUrl(ctx);
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const first = rawGet(base, { authorization: `Bearer ${t.secret}` });
    const res = await first.response;
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/event-stream/);
    assert.ok(res.headers.get('x-request-id'));
    assert.equal(res.headers.get('mcp-session-id'), null, 'no session');
    const reader = frameReader(res);
    const priming = (await reader.next())!;
    assert.match(priming.id!, /^\d+\.[0-9a-f]{12}\.1$/);
    assert.equal(priming.data, '');
    assert.equal(priming.retry, String(RECONNECT_AFTER_MS), 'the reconnect delay');
    const jobA = await queued(ctx, t);
    await drain(ctx);
    const doneA = await untilStatus(reader, jobA, 'completed');
    assert.equal(doneA.event, 'message');
    assert.equal(rpc(doneA).jsonrpc, '2.0');
    assert.equal(rpc(doneA).method, 'notifications/tasks/status');
    assert.equal(rpc(doneA).id, undefined, 'a notification, never a request or response');
    const ids = reader.frames.map((f) => f.id).filter(Boolean);
    assert.equal(new Set(ids).size, ids.length, 'ids are unique');
    first.request.destroy();

    // Away: another job runs to completion. Resuming from the last id received sends its changes.
    const jobB = await queued(ctx, t);
    await drain(ctx);
    const again = rawGet(base, { authorization: `Bearer ${t.secret}`, 'last-event-id': doneA.id! });
    const resumed = frameReader(await again.response);
    const primed = (await resumed.next())!;
    assert.equal(primed.data, '');
    assert.notEqual(primed.id!.split('.')[1], doneA.id!.split('.')[1], 'a new stream tag: ids stay unique across streams');
    await untilStatus(resumed, jobB, 'working');
    await untilStatus(resumed, jobB, 'completed');
    const replayedA = resumed.frames.filter((f) => rpc(f)?.params?.taskId === jobA && rpc(f).params.status === 'completed');
    assert.ok(replayedA.length <= 1, 'a change before the resume position is offered at most again within the overlap, never twice');
    again.request.destroy();

    const bad = await rawGet(base, { authorization: `Bearer ${t.secret}`, 'last-event-id': '17' }).response;
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as any).code, 'INVALID_REQUEST');
  });

  test('the SDK client resumes by itself: its connection drops, a job runs to completion meanwhile, and its reconnect with Last-Event-ID brings that job’s status changes', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const gets: (string | null)[] = [];
    let releaseReconnect!: () => void;
    const reconnectGate = new Promise<void>((resolve) => (releaseReconnect = resolve));
    // The client's own fetch, watched: each GET's Last-Event-ID; the reconnect waits for the job to end.
    const watched: typeof fetch = async (input, init) => {
      if (init?.method === 'GET') {
        const lastEventId = new Headers(init.headers).get('last-event-id');
        gets.push(lastEventId);
        if (lastEventId !== null) await reconnectGate;
      }
      return fetch(input, init);
    };
    const w = await watchingClient(ctx, t.secret, {}, ctx.app, watched);
    try {
      ctx.app.server.closeAllConnections();
      await waitFor('the dropped stream closed', () => openTaskStreams(ctx.app) === 0);
      const jobId = await queued(ctx, t);
      await drain(ctx);
      releaseReconnect();
      await waitFor('the changes made while away', () => w.of(jobId).some((n) => n.status === 'completed'), 20_000);
      assert.deepEqual(w.of(jobId).map((n) => n.status), ['working', 'completed']);
      assert.equal(gets[0], null, 'the first GET starts afresh');
      assert.match(gets[1] ?? '', /^\d+\.[0-9a-f]{12}\.\d+$/, 'the reconnect names the last event id it got');
    } finally {
      releaseReconnect();
      await w.client.close();
    }
  });

  test('refusals before the stream: Origin, unknown revision 400, key, Accept 406, scope jobs:read, X-Service-Workspace (malformed, not the key’s); and 405 stays for what is still not allowed: revisions before 2025-11-25 (and requests without MCP-Protocol-Version), HEAD and DELETE', async () => {
    const ctx = get();
    const base = await baseUrl(ctx);
    const t = await seedTenant(ctx.deps);
    const other = await seedTenant(ctx.deps);
    const noJobs = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { scopes: ['workspaces:read', 'tools:read'], transports: ['rest', 'mcp'] });
    const restOnly = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { transports: ['rest'] });
    const key = { authorization: `Bearer ${t.secret}` };
    const status = async (headers: Record<string, string>, expected: number, code?: string) => {
      const res = await rawGet(base, headers).response;
      const body = (await res.text()) || '{}';
      assert.equal(res.status, expected, `${JSON.stringify(headers)} → ${body}`);
      if (code) assert.equal(JSON.parse(body).code, code);
      return { res, body: JSON.parse(body) };
    };
    await status({ ...key, origin: 'http://evil.example' }, 403, 'FORBIDDEN_ORIGIN');
    await status({}, 401, 'UNAUTHENTICATED');
    await status({ authorization: `Bearer ${restOnly.secret}` }, 403, 'FORBIDDEN_TRANSPORT');
    await status({ authorization: `Bearer ${noJobs.secret}` }, 403, 'FORBIDDEN_SCOPE');
    await status({ ...key, 'x-service-workspace': 'not-a-uuid' }, 400, 'INVALID_REQUEST');
    await status({ ...key, 'x-service-workspace': other.workspace.id }, 403, 'FORBIDDEN_WORKSPACE');
    const unknown = await status({ ...key, 'mcp-protocol-version': '2099-01-01' }, 400);
    assert.equal(unknown.body.error.code, -32600);
    const notAcceptable = await status({ ...key, accept: 'application/json' }, 406);
    assert.equal(notAcceptable.body.error.code, -32000);
    const older = await status({ ...key, 'mcp-protocol-version': '2025-06-18' }, 405);
    assert.equal(older.res.headers.get('allow'), 'POST');
    assert.equal((await fetch(`${base}/mcp`, { headers: key })).status, 405, 'no MCP-Protocol-Version: 2025-03-26, which has no tasks');
    assert.equal((await fetch(`${base}/mcp`)).status, 405, 'whoever asks: the revision is checked before the key');
    for (const method of ['HEAD', 'DELETE']) {
      const res = await fetch(`${base}/mcp`, { method, headers: { ...key, 'mcp-protocol-version': REVISION } });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'GET, POST');
    }
    assert.equal(openTaskStreams(ctx.app), 0, 'no refusal left a stream open');
  });

  test('limits and lifetime: keep-alive comments that also move the resume id; at most STREAMS_PER_KEY streams per key (429 CONCURRENCY_LIMITED, scope key); a revoked key’s stream ends; server stop ends every stream with its resume id and retry, without waiting for clients', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const saved = { ...ctx.deps.streamSettings };
    // A second instance of the service, with short keep-alives, that this test stops.
    Object.assign(ctx.deps.streamSettings, { keepAliveMs: 100, authCheckMs: 50 });
    const app2 = await buildApp(ctx.deps);
    await app2.listen({ port: 0, host: '127.0.0.1' });
    const base2 = `http://127.0.0.1:${(app2.server.address() as AddressInfo).port}`;
    try {
      const open = [];
      // The stream that lives until the stop keeps its connection alive after the response, as
      // the MCP SDK's fetch does: the stop must close it rather than wait out its keep-alive timeout.
      const keepAlive = new Agent({ keepAlive: true });
      for (let i = 0; i < STREAMS_PER_KEY; i++) {
        const s = rawGet(base2, { authorization: `Bearer ${t.secret}` }, i === 0 ? keepAlive : false);
        open.push(s);
        assert.equal((await s.response).status, 200);
      }
      const over = await rawGet(base2, { authorization: `Bearer ${t.secret}` }).response;
      assert.equal(over.status, 429);
      const body = (await over.json()) as any;
      assert.deepEqual([body.code, body.details.limit, body.details.scope, body.details.maximum], ['CONCURRENCY_LIMITED', 'STREAMS', 'key', STREAMS_PER_KEY]);
      assert.equal(over.headers.get('retry-after'), '5');
      for (const s of open.slice(1)) s.request.destroy();
      await waitFor('streams of gone clients closed', () => openTaskStreams(app2) === 1);

      const reader = frameReader(await open[0]!.response);
      const priming = (await reader.next())!;
      ctx.clock.advance(1000);
      // Keep-alives sent before the clock moved may still be buffered: read on until one after it.
      const target = Number(priming.id!.split('.')[0]) + 1000;
      let moved: Frame | undefined;
      const deadline = Date.now() + 10_000;
      while (!moved && Date.now() < deadline) {
        const f = (await reader.next())!;
        if (f.comment !== undefined) {
          assert.equal(f.comment, 'keep-alive');
          const positioned = (await reader.next())!;
          assert.equal(positioned.data, '', 'each keep-alive comment is followed by an id-only event');
          assert.equal(positioned.event, undefined);
          if (Number(positioned.id!.split('.')[0]) >= target) moved = positioned;
        }
      }
      assert.ok(moved, `the resume position moves on with the keep-alives (from ${priming.id})`);

      // Revoking another key of the owner changes nothing; revoking this stream's key ends it.
      const revokedKey = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { transports: ['mcp'] });
      const revokedStream = rawGet(base2, { authorization: `Bearer ${revokedKey.secret}` });
      const revokedReader = frameReader(await revokedStream.response);
      await revokedReader.next();
      const revoke = await admin(ctx, `/admin/v1/keys/${revokedKey.key.id}/revoke`, {});
      assert.equal(revoke.statusCode, 200, revoke.body);
      while (await revokedReader.next(5000));
      assert.equal(openTaskStreams(app2), 1, 'only the revoked key’s stream ended');

      const started = Date.now();
      await app2.close();
      assert.ok(Date.now() - started < 5000, `app.close() took ${Date.now() - started} ms: it waits neither for stream clients nor for their keep-alive connections`);
      let last: Frame | undefined;
      for (let f = await reader.next(5000); f; f = await reader.next(5000)) last = f;
      assert.match(last!.id!, /^\d+\.[0-9a-f]{12}\.\d+$/, 'the last event names where to resume');
      assert.equal(last!.data, '');
      assert.equal(last!.retry, String(RECONNECT_AFTER_MS), 'and when to reconnect');
      keepAlive.destroy();
    } finally {
      Object.assign(ctx.deps.streamSettings, saved);
      if (app2.server.listening) await app2.close();
    }
  });
}, testKeySuite());
