/**
 * Rules of the standing MCP stream (GET /mcp) beyond its notifications (docs/mcp.md "Task status
 * notifications", docs/decisions.md "MCP transport"): the resume window, what opening costs, the
 * key's cap counted across processes, the per-process cap counted apart from job streams, a
 * workspace the key loses, a client that stops reading. Raw requests on a real socket. Keys whose
 * streams carry jobs are test keys (simulated work, the test balance; a test key's stream covers
 * the test twins, testScopeOf); those that only open streams stay live.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo, Socket } from 'node:net';
import { buildApp } from '../../src/app.js';
import * as accounts from '../../src/modules/accounts/service.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { ensureTestTwin } from '../../src/modules/accounts/test-twins.js';
import { testScopeOf } from '../../src/lib/livemode.js';
import { RESUME_WINDOW_MS } from '../../src/mcp/task-events.js';
import { openTaskStreams, STREAMS_PER_KEY, taskHubs } from '../../src/mcp/task-notifications.js';
import { call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { drain, run } from '../support/jobs.js';
import { baseUrl } from '../support/base-url.js';
import { frameReader, streamGet } from '../support/sse.js';
import { waitFor } from '../support/wait.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';

const MUSIC = { prompt: 'a calm tune', durationSeconds: 5 };

function rawGet(base: string, secret: string, headers: Record<string, string> = {}) {
  return streamGet(`${base}/mcp`, { accept: 'text/event-stream', 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${secret}`, ...headers });
}

async function completedJob(ctx: TestContext, t: Tenant): Promise<string> {
  const res = await run(ctx, t, 'music.generate', MUSIC);
  assert.equal(res.statusCode, 202, res.body);
  await drain(ctx);
  return res.json().data.jobId as string;
}

function taskOf(frame: { data?: string } | undefined): { taskId: string; status: string } | undefined {
  return frame?.data ? JSON.parse(frame.data).params : undefined;
}

describeEachDatabase('MCP standing stream: resume window and cost', (get) => {
  test('resume window: a Last-Event-ID within 10 minutes replays the changes since; an older one replays nothing (the stream starts afresh)', async () => {
    const ctx = get();
    const base = await baseUrl(ctx);
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const position = ctx.clock.now() - 1000;
    const lastEventId = `${position}.0123456789ab.7`;
    const old = await completedJob(ctx, t);

    ctx.clock.advance(RESUME_WINDOW_MS - 60_000);
    const within = rawGet(base, t.secret, { 'last-event-id': lastEventId });
    const recent = frameReader(await within.response);
    assert.equal((await recent.next())!.data, '', 'priming first');
    const replayed: string[] = [];
    while (!replayed.includes('completed')) {
      const task = taskOf(await recent.next());
      if (task?.taskId === old) replayed.push(task.status);
    }
    assert.deepEqual(replayed, ['working', 'completed'], 'within the window: the changes since the position');
    within.request.destroy();

    ctx.clock.advance(2 * 60_000);
    const beyond = rawGet(base, t.secret, { 'last-event-id': lastEventId });
    const fresh = frameReader(await beyond.response);
    assert.equal((await fresh.next())!.data, '', 'priming first');
    // A job that runs now is notified; the old job never is (a replay would come before or among these).
    const now = await completedJob(ctx, t);
    const seen: { taskId: string; status: string }[] = [];
    while (!seen.some((s) => s.taskId === now && s.status === 'completed')) {
      const task = taskOf(await fresh.next());
      if (task) seen.push(task);
    }
    assert.deepEqual(seen.filter((s) => s.taskId === old), [], 'beyond the window: nothing replayed');
    beyond.request.destroy();
    await waitFor('streams closed', () => openTaskStreams(ctx.app) === 0);
  });

  test('opening the stream costs no usage points (task reads through tasks/get stay metered)', async () => {
    const ctx = get();
    const base = await baseUrl(ctx);
    const t = await seedTenant(ctx.deps);
    const used = async () => (await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).json().data.points.minuteUsed as number;
    const before = await used();
    const stream = rawGet(base, t.secret);
    const res = await stream.response;
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('ratelimit-remaining'), null, 'no usage window: nothing is charged');
    await frameReader(res).next();
    assert.equal(await used(), before + 1, 'only the usage read itself (1 point) was charged');
    stream.request.destroy();
    await waitFor('stream closed', () => openTaskStreams(ctx.app) === 0);
  });
}, testKeySuite());

describeEachDatabase('MCP standing stream: the key’s cap in every process, lost workspaces, slow clients', (get) => {
  const slotsOf = async (ctx: TestContext, keyId: string) =>
    (await ctx.deps.db.selectFrom('mcp_stream_slots').select('id').where('key_id', '=', keyId).where('expires_at_ms', '>', ctx.clock.now()).execute()).length;

  test('a key holds at most STREAMS_PER_KEY standing streams in all processes together (429 CONCURRENCY_LIMITED, scope key, from either process); a closed stream frees its slot at once, a stopping process frees its own', async () => {
    const ctx = get();
    const base = await baseUrl(ctx);
    const t = await seedTenant(ctx.deps);
    // A second process of the deployment: its own app and hub, the same database.
    const app2 = await buildApp(ctx.deps);
    await app2.listen({ port: 0, host: '127.0.0.1' });
    const base2 = `http://127.0.0.1:${(app2.server.address() as AddressInfo).port}`;
    try {
      const inFirst = Array.from({ length: 6 }, () => rawGet(base, t.secret));
      const inSecond = Array.from({ length: STREAMS_PER_KEY - 6 }, () => rawGet(base2, t.secret));
      for (const s of [...inFirst, ...inSecond]) assert.equal((await s.response).status, 200);
      assert.equal(await slotsOf(ctx, t.key.id), STREAMS_PER_KEY);
      for (const b of [base, base2]) {
        const over = await rawGet(b, t.secret).response;
        assert.equal(over.status, 429);
        assert.equal(over.headers.get('retry-after'), '5');
        const body = (await over.json()) as any;
        assert.deepEqual([body.code, body.details.limit, body.details.scope, body.details.streams, body.details.maximum], ['CONCURRENCY_LIMITED', 'STREAMS', 'key', STREAMS_PER_KEY, STREAMS_PER_KEY]);
      }
      const other = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { transports: ['mcp'] });
      const otherStream = rawGet(base2, other.secret);
      assert.equal((await otherStream.response).status, 200, 'another key of the same owner has its own cap');

      inSecond[0]!.request.destroy();
      await waitFor('the closed stream’s slot freed', async () => (await slotsOf(ctx, t.key.id)) === STREAMS_PER_KEY - 1);
      const again = rawGet(base, t.secret);
      assert.equal((await again.response).status, 200, 'the freed slot is taken in the other process');

      await app2.close();
      assert.equal(await slotsOf(ctx, t.key.id), STREAMS_PER_KEY - inSecond.length + 1, 'the stopped process freed the slots of its streams before closing');
      assert.equal(await slotsOf(ctx, other.key.id), 0);
      for (const s of [...inFirst, again]) s.request.destroy();
      await waitFor('every slot freed', async () => (await slotsOf(ctx, t.key.id)) === 0);
      await waitFor('streams closed', () => openTaskStreams(ctx.app) === 0);
    } finally {
      if (app2.server.listening) await app2.close();
    }
  });

  test('slots of a process whose heartbeat stopped stop counting after the slot lifetime; that process’s streams, finding their slots gone at their next heartbeat, end', async () => {
    const ctx = get();
    const base = await baseUrl(ctx);
    const t = await seedTenant(ctx.deps);
    const saved = { ...ctx.deps.streamSettings };
    // No heartbeat on its own during the test: this process stands for one that stalled.
    ctx.deps.streamSettings.heartbeatMs = 3_600_000;
    try {
      const stalled = Array.from({ length: STREAMS_PER_KEY }, () => rawGet(base, t.secret));
      const readers = [];
      for (const s of stalled) {
        const reader = frameReader(await s.response);
        await reader.next();
        readers.push(reader);
      }
      assert.equal((await rawGet(base, t.secret).response).status, 429);
      ctx.clock.advance(ctx.deps.streamSettings.slotTtlMs + 1);
      const fresh = rawGet(base, t.secret);
      assert.equal((await fresh.response).status, 200, 'the expired slots no longer count');
      assert.equal(await slotsOf(ctx, t.key.id), 1);
      await taskHubs.get(ctx.app)!.heartbeat();
      for (const reader of readers) while (await reader.next(5000));
      assert.equal(openTaskStreams(ctx.app), 1, 'only the stream whose slot is still there goes on');
      fresh.request.destroy();
      await waitFor('streams closed', () => openTaskStreams(ctx.app) === 0);
    } finally {
      Object.assign(ctx.deps.streamSettings, saved);
    }
  });

  test('a stream of several workspaces drops the one its key lost (the owner left the organization) and goes on with the rest; one pinned to the lost workspace ends', async () => {
    const ctx = get();
    const base = await baseUrl(ctx);
    const owner = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const member = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const org = await accounts.createOrganization(ctx.deps, { name: 'Acme', ownerUserId: owner.user.id });
    const orgWs = await accounts.createWorkspace(ctx.deps, { name: 'Acme shared', plan: 'starter', organizationId: org.id });
    await accounts.setMember(ctx.deps, org.id, { userId: member.user.id, role: 'admin' });
    await ensureTestTwin(ctx.deps.db, orgWs, 0, ctx.clock.now());
    const both = await seedKey(ctx.deps, member.user.id, [orgWs.id, member.workspace.id], { transports: ['rest', 'mcp'], mode: 'test' });
    const ownerKey = await seedKey(ctx.deps, owner.user.id, [orgWs.id], { mode: 'test' });
    await grantCredits(ctx.deps, orgWs.id, { amountMillicents: 1_000_000, mode: 'test' });
    const orgTenant = { secret: ownerKey.secret, workspace: { id: orgWs.id } } as Tenant;
    const memberTenant = { secret: both.secret, workspace: member.workspace } as Tenant;

    const all = rawGet(base, both.secret);
    const pinned = rawGet(base, both.secret, { 'x-service-workspace': orgWs.id });
    const allReader = frameReader(await all.response);
    const pinnedReader = frameReader(await pinned.response);
    await allReader.next();
    await pinnedReader.next();
    const hub = taskHubs.get(ctx.app)!;
    assert.ok(hub.covered().has(testScopeOf(orgWs.id)) && hub.covered().has(testScopeOf(member.workspace.id)), 'the test key\'s stream covers the test twins');
    const before = await completedJob(ctx, orgTenant);
    const seenBefore: string[] = [];
    while (!seenBefore.includes('completed')) {
      const task = taskOf(await allReader.next());
      if (task?.taskId === before) seenBefore.push(task.status);
    }

    await accounts.removeMember(ctx.deps, org.id, member.user.id);
    while (await pinnedReader.next(10_000));
    await waitFor('the lost workspace dropped', () => !hub.covered().has(testScopeOf(orgWs.id)));
    assert.equal(openTaskStreams(ctx.app), 1, 'the stream of both workspaces goes on');
    const lost = await completedJob(ctx, orgTenant);
    const kept = await completedJob(ctx, memberTenant);
    const seen: string[] = [];
    while (!seen.includes(`${kept}:completed`)) {
      const task = taskOf(await allReader.next());
      if (task) seen.push(`${task.taskId}:${task.status}`);
    }
    assert.deepEqual(seen.filter((s) => s.startsWith(lost)), [], 'nothing of the lost workspace');
    all.request.destroy();
    await waitFor('streams closed', () => openTaskStreams(ctx.app) === 0);
  });

  test('a client that stops reading is cut off once more than maxBufferedBytes wait unsent (its slot freed); what was sent before stays intact', async () => {
    const ctx = get();
    const base = await baseUrl(ctx);
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const saved = { ...ctx.deps.streamSettings };
    ctx.deps.streamSettings.maxBufferedBytes = 2048;
    let serverSide: Socket | undefined;
    const onConnection = (socket: Socket) => (serverSide = socket);
    ctx.app.server.once('connection', onConnection);
    try {
      const stream = rawGet(base, t.secret);
      const reader = frameReader(await stream.response);
      assert.equal((await reader.next())!.data, '', 'priming');
      // The connection's socket stops taking bytes, as when the client's and the kernel's
      // buffers are full: whatever the stream writes now waits in the process.
      serverSide!.cork();
      const jobs: string[] = [];
      while (openTaskStreams(ctx.app) === 1 && jobs.length < 50) jobs.push(await completedJob(ctx, t));
      assert.equal(openTaskStreams(ctx.app), 0, 'the stream was cut off');
      assert.ok(jobs.length > 1, 'not before the buffer was over the bound');
      await waitFor('its slot freed', async () => (await slotsOf(ctx, t.key.id)) === 0);
      serverSide!.uncork();
      const frames = [];
      for (let f = await reader.next(); f; f = await reader.next()) frames.push(f);
      assert.ok(frames.length > 0 && frames.every((f) => f.id !== undefined), 'the frames written before the cut arrive whole, then the response ends');
    } finally {
      Object.assign(ctx.deps.streamSettings, saved);
    }
  });
}, testKeySuite());

describeEachDatabase(
  'MCP standing stream: the process cap',
  (get) => {
    test('STREAMS_PER_PROCESS bounds the MCP streams of a process (429 CONCURRENCY_LIMITED, scope service), counted apart from job streams', async () => {
      const ctx = get();
      const base = await baseUrl(ctx);
      const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
      const second = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { transports: ['mcp'] });
      const third = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { transports: ['mcp'] });
      const open = [rawGet(base, t.secret), rawGet(base, second.secret)];
      for (const s of open) assert.equal((await s.response).status, 200);
      const over = await rawGet(base, third.secret).response;
      assert.equal(over.status, 429);
      const body = (await over.json()) as any;
      assert.deepEqual([body.code, body.details.limit, body.details.scope, body.details.maximum], ['CONCURRENCY_LIMITED', 'STREAMS', 'service', 2]);
      // A job stream is counted with the job streams, not with these.
      const res = await run(ctx, t, 'music.generate', MUSIC);
      const jobStream = streamGet(`${base}/v1/jobs/${res.json().data.jobId}/stream`, { accept: 'text/event-stream', authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id });
      assert.equal((await jobStream.response).status, 200);
      jobStream.request.destroy();
      open[1]!.request.destroy();
      await waitFor('a slot free again', () => openTaskStreams(ctx.app) === 1);
      const again = rawGet(base, third.secret);
      assert.equal((await again.response).status, 200);
      for (const s of [open[0]!, again]) s.request.destroy();
      await waitFor('streams closed', () => openTaskStreams(ctx.app) === 0);
    });
  },
  testKeySuite({ env: { STREAMS_PER_PROCESS: '2' } }),
  ['sqlite'],
);
