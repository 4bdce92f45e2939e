/**
 * Rules of the standing MCP stream (GET /mcp) beyond its notifications (docs/mcp.md "Task status
 * notifications", docs/decisions.md "MCP transport"): the resume window, what opening costs, and
 * the per-process cap counted apart from job streams. Raw requests on a real socket.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTaskStreams, RESUME_WINDOW_MS } from '../../src/mcp/task-notifications.js';
import { call, describeEachDatabase, type TestContext } from '../support/harness.js';
import { drain, run } from '../support/jobs.js';
import { baseUrl } from '../support/mcp-client.js';
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
    const t = await seedTenant(ctx.deps, { credits: 1_000_000 });
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
});

describeEachDatabase(
  'MCP standing stream: the process cap',
  (get) => {
    test('STREAMS_PER_PROCESS bounds the MCP streams of a process (429 CONCURRENCY_LIMITED, scope service), counted apart from job streams', async () => {
      const ctx = get();
      const base = await baseUrl(ctx);
      const t = await seedTenant(ctx.deps, { credits: 1_000_000 });
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
  { env: { STREAMS_PER_PROCESS: '2' } },
  ['sqlite'],
);
