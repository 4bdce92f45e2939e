/**
 * GET /v1/jobs/{jobId}/stream over a real socket, read with the `eventsource` package and a raw
 * frame reader: snapshot first, one event per change in order (ids = versions), close after the
 * terminal status, Last-Event-ID resume and gaps, keep-alive comments, plan and concurrency
 * limits counted in stream_slots, and the ways a stream ends (client, revocation). The jobs are
 * a test key's (simulated work, the test balance): its slots are in the workspace's test twin.
 */
import { before, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { sql } from 'kysely';
import { admin, call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { scopeOf, seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { drain, getJob, run } from '../support/jobs.js';
import { baseUrl } from '../support/base-url.js';
import { apiHeaders, frameReader, httpGet, openEventSource, slotCount } from '../support/sse.js';
import { waitFor } from '../support/wait.js';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import { DEFAULT_STREAM_SETTINGS } from '../../src/modules/jobs/stream-settings.js';
import { createWorkspace } from '../../src/modules/accounts/service.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { ensureTestTwin } from '../../src/modules/accounts/test-twins.js';
import { checkRefusals } from '../support/openapi-responses.js';
import { assertError as assertErrorOf, fetchResponse } from '../support/assertions.js';

const SPRITE = { prompt: 'a knight', frames: 3, frameWidth: 16, frameHeight: 16 };
const SSE = { accept: 'text/event-stream' };

async function queuedJob(ctx: TestContext, t: Tenant): Promise<string> {
  const res = await run(ctx, t, 'sprite.generate', SPRITE);
  assert.equal(res.statusCode, 202, res.body);
  return res.json().data.jobId;
}

async function completedJob(ctx: TestContext, t: Tenant): Promise<{ jobId: string; version: number }> {
  const jobId = await queuedJob(ctx, t);
  await drain(ctx);
  const job = await getJob(ctx, t, jobId);
  assert.equal(job.status, 'completed');
  return { jobId, version: job.version };
}

async function openStream(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, jobId: string, headers: Record<string, string> = {}) {
  return httpGet(`${await baseUrl(ctx)}/v1/jobs/${jobId}/stream`, apiHeaders(t, { ...SSE, ...headers }));
}

/** Opens `count` streams of `jobId` (each must answer 200 and send its first frame); returns their readers. */
async function openStreams(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, jobId: string, count: number) {
  const readers = [];
  for (let i = 0; i < count; i++) {
    const res = await openStream(ctx, t, jobId);
    assert.equal(res.status, 200);
    const reader = frameReader(res);
    assert.equal((await reader.next())?.event, 'job');
    readers.push(reader);
  }
  return readers;
}

/** The shared error-envelope assertion, on a response read with fetch. */
const assertError = async (res: Response, status: number, code: string) => assertErrorOf(await fetchResponse(res), status, code);

describeEachDatabase('job streams (SSE)', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  const reset = () => Object.assign(get().deps.streamSettings, DEFAULT_STREAM_SETTINGS);

  test('EventSource: first event is the current snapshot, then every change in order with id = version, closed after the terminal status (204 stops the reconnect)', async () => {
    const ctx = get();
    reset();
    // No safety poll during the test: only the change feed (NOTIFY or the in-process emitter) wakes the stream.
    ctx.deps.streamSettings.pollMs = 600_000;
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = await queuedJob(ctx, t);
    const { es, events, errors } = openEventSource(`${await baseUrl(ctx)}/v1/jobs/${jobId}/stream`, t);
    try {
      await waitFor('the first event', () => events.length >= 1);
      const first = events[0]!;
      assert.equal(first.type, 'job');
      assert.deepEqual(first.data, await getJob(ctx, t, jobId), 'the first event is GET /v1/jobs/{id}');
      assert.equal(first.id, String(first.data.version));
      await drain(ctx);
      const final = await getJob(ctx, t, jobId);
      assert.equal(final.status, 'completed');
      await waitFor('the terminal event', () => events.at(-1)?.data.status === 'completed');
      assert.deepEqual(
        events.map((e) => Number(e.id)),
        Array.from({ length: final.version - first.data.version + 1 }, (_, i) => first.data.version + i),
        'each version once, in order, none skipped',
      );
      for (const e of events) assert.equal(Number(e.id), e.data.version);
      assert.deepEqual(events.at(-1)!.data, final, 'the terminal event is the full snapshot, output included');
      assert.ok(events.some((e) => e.data.status === 'processing'));
      // The server closed the stream; EventSource reconnects with Last-Event-ID = terminal version, gets 204 and stops.
      await waitFor('EventSource closed for good', () => es.readyState === es.CLOSED, 10_000);
      assert.equal(errors.at(-1)?.code, 204);
      assert.equal(events.length, final.version - first.data.version + 1, 'nothing was sent twice');
      await waitFor('slot released', async () => (await slotCount(ctx, scopeOf(t))) === 0);
    } finally {
      es.close();
    }
  });

  test('stream response: text/event-stream, Cache-Control no-cache, X-Accel-Buffering no, X-Request-Id and RateLimit headers; 3 usage points; the body ends after a terminal job', async () => {
    const ctx = get();
    reset();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const { jobId, version } = await completedJob(ctx, t);
    const before = (await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).json().data.points.minuteUsed;
    const res = await openStream(ctx, t, jobId);
    assert.equal(res.status, 200);
    assert.match(String(res.headers.get('content-type')), /^text\/event-stream/);
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.equal(res.headers.get('x-accel-buffering'), 'no');
    assert.match(String(res.headers.get('x-request-id')), /^[0-9a-f-]{36}$/);
    for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) assert.ok(res.headers.get(h), h);
    const frames = await frameReader(res).rest();
    assert.equal(frames.length, 1, 'a finished job: its snapshot, then the end of the stream');
    assert.equal(frames[0]!.event, 'job');
    assert.equal(frames[0]!.id, String(version));
    assert.deepEqual(JSON.parse(frames[0]!.data!), await getJob(ctx, t, jobId));
    const after = (await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).json().data.points.minuteUsed;
    assert.equal(after - before, 1 + 3 + 1, 'the stream costs 3 points (plus the two usage reads)');
  });

  test('Last-Event-ID resume: exactly the versions after it from the stored history (older ones with output {}), then the terminal snapshot and the end', async () => {
    const ctx = get();
    reset();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const { jobId, version } = await completedJob(ctx, t);
    assert.ok(version >= 4, `several versions (${version})`);
    const res = await openStream(ctx, t, jobId, { 'last-event-id': '2' });
    assert.equal(res.status, 200);
    const frames = await frameReader(res).rest();
    assert.deepEqual(
      frames.map((f) => Number(f.id)),
      Array.from({ length: version - 2 }, (_, i) => i + 3),
    );
    const stored = await ctx.deps.db.selectFrom('job_versions').selectAll().where('job_id', '=', jobId).orderBy('version').execute();
    for (const f of frames.slice(0, -1)) {
      const data = JSON.parse(f.data!);
      assert.deepEqual(data, { ...JSON.parse(stored.find((s) => Number(s.version) === Number(f.id))!.snapshot_json), output: {} });
    }
    assert.deepEqual(JSON.parse(frames.at(-1)!.data!), await getJob(ctx, t, jobId), 'the current version is the full snapshot');
  });

  test('Last-Event-ID equal to the terminal version: 204 No Content (nothing more will come)', async () => {
    const ctx = get();
    reset();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const { jobId, version } = await completedJob(ctx, t);
    const res = await openStream(ctx, t, jobId, { 'last-event-id': String(version) });
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
  });

  test('gap: when a needed version is gone from the history, `event: gap` {jobId, lastEventId} and then the current snapshot', async () => {
    const ctx = get();
    reset();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const { jobId, version } = await completedJob(ctx, t);
    await ctx.deps.db.deleteFrom('job_versions').where('job_id', '=', jobId).where('version', '<', version).execute();
    const frames = await frameReader(await openStream(ctx, t, jobId, { 'last-event-id': '1' })).rest();
    assert.equal(frames.length, 2);
    assert.equal(frames[0]!.event, 'gap');
    assert.equal(frames[0]!.id, undefined);
    assert.deepEqual(JSON.parse(frames[0]!.data!), { jobId, lastEventId: 1 });
    assert.equal(frames[1]!.event, 'job');
    assert.equal(frames[1]!.id, String(version));
    assert.deepEqual(JSON.parse(frames[1]!.data!), await getJob(ctx, t, jobId));

    // An id ahead of the job (not one this stream sent) is a gap too.
    const ahead = await frameReader(await openStream(ctx, t, jobId, { 'last-event-id': String(version + 5) })).rest();
    assert.deepEqual(ahead.map((f) => f.event), ['gap', 'job']);
  });

  test('invalid Last-Event-ID is 400 INVALID_REQUEST; a missing or other Accept is 400 INVALID_REQUEST', async () => {
    const ctx = get();
    reset();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = await queuedJob(ctx, t);
    for (const bad of ['abc', '-1', '1.5', '1e3', '99999999999999999999']) {
      await assertError(await openStream(ctx, t, jobId, { 'last-event-id': bad }), 400, 'INVALID_REQUEST');
    }
    const base = await baseUrl(ctx);
    for (const accept of [undefined, 'application/json', 'text/event-stream;q=0']) {
      const headers = apiHeaders(t, accept ? { accept } : {});
      const res = await httpGet(`${base}/v1/jobs/${jobId}/stream`, accept ? headers : { ...headers, accept: '' });
      const body = await assertError(res, 400, 'INVALID_REQUEST');
      assert.match(body.message, /text\/event-stream/);
    }
    assert.equal(await slotCount(ctx, scopeOf(t)), 0, 'refusals take no slot');
  });

  test('non-Pro workspaces are 403 PLAN_REQUIRED; an operator streams override enables them, as GET /v1/usage reports', async () => {
    const ctx = get();
    reset();
    for (const plan of ['free', 'starter'] as const) {
      const t = await seedTenant(ctx.deps, { plan, credits: 100_000, mode: 'test' });
      const jobId = await queuedJob(ctx, t);
      await assertError(await openStream(ctx, t, jobId), 403, 'PLAN_REQUIRED');
      assert.deepEqual((await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).json().data.streams, { enabled: false, maximum: 0 });
      const set = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { streams: 1 } });
      assert.equal(set.statusCode, 200, set.body);
      assert.deepEqual((await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).json().data.streams, { enabled: true, maximum: 1 });
      const res = await openStream(ctx, t, jobId);
      assert.equal(res.status, 200);
      await res.body!.cancel();
    }
    const pro = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    await admin(ctx, `/admin/v1/workspaces/${pro.workspace.id}/settings`, { limits: { streams: 0 } });
    await assertError(await openStream(ctx, pro, await queuedJob(ctx, pro)), 403, 'PLAN_REQUIRED');
  });

  test('a 4th concurrent stream on Pro is 429 CONCURRENCY_LIMITED (limit STREAMS, resetsAt, Retry-After); closing a stream frees its slot', async () => {
    const ctx = get();
    reset();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = await queuedJob(ctx, t);
    const open = await openStreams(ctx, t, jobId, 3);
    assert.equal(await slotCount(ctx, scopeOf(t)), 3);
    const refused = await openStream(ctx, t, jobId);
    const body = await assertError(refused, 429, 'CONCURRENCY_LIMITED');
    assert.equal(body.details.limit, 'STREAMS');
    assert.equal(body.details.scope, 'workspace');
    assert.equal(body.details.maximum, 3);
    assert.ok(!Number.isNaN(Date.parse(body.details.resetsAt)));
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    await open.pop()!.cancel();
    await waitFor('the closed stream releases its slot', async () => (await slotCount(ctx, scopeOf(t))) === 2);
    const again = await openStream(ctx, t, jobId);
    assert.equal(again.status, 200);
    await again.body!.cancel();
    for (const r of open) await r.cancel();
    await waitFor('every slot released', async () => (await slotCount(ctx, scopeOf(t))) === 0);
  });

  test('connection limits apply per key too: a key of two Pro workspaces holds 3 streams in both together (429 CONCURRENCY_LIMITED, scope key); another key of the workspace still opens', async () => {
    const ctx = get();
    reset();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const second = await createWorkspace(ctx.deps, { name: 'Second', plan: 'pro', ownerUserId: t.user.id });
    await ensureTestTwin(ctx.deps.db, second, 0, ctx.clock.now());
    await grantCredits(ctx.deps, second.id, { amountMillicents: 100_000, mode: 'test' });
    const both = await seedKey(ctx.deps, t.user.id, [t.workspace.id, second.id], { mode: 'test' });
    const inFirst = { secret: both.secret, workspace: t.workspace };
    const inSecond = { secret: both.secret, workspace: second };
    const jobId = await queuedJob(ctx, t);
    const otherJob = await queuedJob(ctx, { ...t, secret: both.secret, workspace: second } as Tenant);
    const open = await openStreams(ctx, inFirst, jobId, 3);
    const refused = await openStream(ctx, inSecond, otherJob);
    const body = await assertError(refused, 429, 'CONCURRENCY_LIMITED');
    assert.deepEqual([body.details.limit, body.details.scope, body.details.streams, body.details.maximum], ['STREAMS', 'key', 3, 3]);
    assert.equal(await slotCount(ctx, scopeOf({ workspace: second, key: both.key })), 0, 'the refusal takes no slot');
    const own = await seedKey(ctx.deps, t.user.id, [second.id], { mode: 'test' });
    const fine = await openStream(ctx, { secret: own.secret, workspace: second }, otherJob);
    assert.equal(fine.status, 200, 'the second workspace itself has room');
    await fine.body!.cancel();
    await open.pop()!.cancel();
    await waitFor('the closed stream releases its slot', async () => (await slotCount(ctx, scopeOf(t))) === 2);
    const again = await openStream(ctx, inSecond, otherJob);
    assert.equal(again.status, 200, 'a slot of the key was freed');
    await again.body!.cancel();
    for (const r of open) await r.cancel();
    await waitFor('every slot released', async () => (await slotCount(ctx, scopeOf(t))) + (await slotCount(ctx, scopeOf({ workspace: second, key: both.key }))) === 0);
  });

  test('concurrent opens cannot both take the last slot: of 6 simultaneous opens exactly 3 succeed', async () => {
    const ctx = get();
    reset();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = await queuedJob(ctx, t);
    const results = await Promise.all(Array.from({ length: 6 }, () => openStream(ctx, t, jobId)));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 429, 429, 429]);
    assert.equal(await slotCount(ctx, scopeOf(t)), 3);
    for (const r of results) {
      if (r.status === 200) await r.body!.cancel();
      else await assertError(r, 429, 'CONCURRENCY_LIMITED');
    }
    await waitFor('every slot released', async () => (await slotCount(ctx, scopeOf(t))) === 0);
  });

  test('slots of a crashed process stop counting when they expire; an open stream heartbeats its slot', async () => {
    const ctx = get();
    reset();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = await queuedJob(ctx, t);
    const now = ctx.clock.now();
    const stale = [1, 2, 3].map((i) => ({ id: `00000000-0000-7000-8000-00000000000${i}`, workspace_id: scopeOf(t), key_id: t.key.id, job_id: jobId, expires_at_ms: now + 1000 }));
    await ctx.deps.db.insertInto('stream_slots').values(stale).execute();
    await assertError(await openStream(ctx, t, jobId), 429, 'CONCURRENCY_LIMITED');
    ctx.clock.advance(1001);
    ctx.deps.streamSettings.heartbeatMs = 20;
    const res = await openStream(ctx, t, jobId);
    assert.equal(res.status, 200, 'expired slots no longer count');
    const reader = frameReader(res);
    await reader.next();
    assert.equal(await slotCount(ctx, scopeOf(t)), 1, 'the expired rows were removed');
    ctx.clock.advance(60_000);
    await waitFor('the heartbeat extends the slot', async () => {
      const slot = await ctx.deps.db.selectFrom('stream_slots').select('expires_at_ms').where('workspace_id', '=', scopeOf(t)).executeTakeFirst();
      return slot && Number(slot.expires_at_ms) > ctx.clock.now();
    });
    await reader.cancel();
  });

  test('keep-alive: by default a `: keep-alive` comment every 15 s (decisions.md 1), counted on a fake interval clock, not waited for', async () => {
    const ctx = get();
    reset();
    assert.equal(ctx.deps.streamSettings.keepAliveMs, 15_000, 'the default interval');
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = await queuedJob(ctx, t);
    // The stream's intervals are created on the fake clock; the sockets and the reader keep real time.
    mock.timers.enable({ apis: ['setInterval'] });
    try {
      const reader = frameReader(await openStream(ctx, t, jobId));
      assert.equal((await reader.next())?.event, 'job');
      mock.timers.tick(15_000);
      const frame = await reader.next(10_000);
      assert.equal(frame?.comment, 'keep-alive', 'a comment line at 15 s');
      assert.equal(frame?.event, undefined);
      await reader.cancel();
    } finally {
      mock.timers.reset();
    }
  });

  test('keep-alive: a `: keep-alive` comment line arrives on the configured interval', async () => {
    const ctx = get();
    reset();
    ctx.deps.streamSettings.keepAliveMs = 50;
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = await queuedJob(ctx, t);
    const reader = frameReader(await openStream(ctx, t, jobId));
    assert.equal((await reader.next())?.event, 'job');
    const frame = await reader.next(5000);
    assert.equal(frame?.comment, 'keep-alive');
    assert.equal(frame?.event, undefined);
    await reader.cancel();
  });

  test('a client that stops reading is cut off once more than maxBufferedBytes wait unsent, and its slot is freed; what was sent before arrives whole', async () => {
    const ctx = get();
    reset();
    Object.assign(ctx.deps.streamSettings, { keepAliveMs: 20, maxBufferedBytes: 512 });
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = await queuedJob(ctx, t);
    let serverSide: Socket | undefined;
    const url = await baseUrl(ctx);
    ctx.app.server.once('connection', (socket: Socket) => (serverSide = socket));
    const reader = frameReader(await httpGet(`${url}/v1/jobs/${jobId}/stream`, apiHeaders(t, SSE)));
    assert.equal((await reader.next())?.event, 'job');
    assert.equal(await slotCount(ctx, scopeOf(t)), 1);
    // The socket stops taking bytes, as when the client's and the kernel's buffers are full: the
    // keep-alive comments now wait in the process until they pass the bound.
    serverSide!.cork();
    await waitFor('the slow client’s slot freed', async () => (await slotCount(ctx, scopeOf(t))) === 0);
    serverSide!.uncork();
    const rest = await reader.rest(10_000);
    // Each comment is 14 bytes and its chunk framing 7 more: over 512 bytes took about 25.
    assert.ok(rest.length > 512 / 21, `the buffered keep-alives arrive (${rest.length}), then the response ends`);
    assert.ok(rest.every((f) => f.comment === 'keep-alive'));
    reset();
  });

  test('a change made through the API (cancel) reaches the stream through the change feed, and the stream then closes', async () => {
    const ctx = get();
    reset();
    ctx.deps.streamSettings.pollMs = 600_000;
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = await queuedJob(ctx, t);
    const reader = frameReader(await openStream(ctx, t, jobId));
    const first = await reader.next();
    assert.equal(JSON.parse(first!.data!).status, 'pending');
    const cancel = await call(ctx, 'POST', `/v1/jobs/${jobId}/cancel`, { secret: t.secret, workspaceId: t.workspace.id });
    assert.equal(cancel.statusCode, 200, cancel.body);
    const rest = await reader.rest();
    assert.equal(rest.length, 1);
    assert.equal(rest[0]!.id, String(Number(first!.id) + 1));
    assert.deepEqual(JSON.parse(rest[0]!.data!), cancel.json().data);
  });

  test('PostgreSQL: the LISTEN connection reconnects after being killed, and a change made while it was down still reaches the stream', async (tc) => {
    const ctx = get();
    if (ctx.dbName !== 'postgres') return tc.skip('LISTEN/NOTIFY is used with a PostgreSQL server only');
    reset();
    ctx.deps.streamSettings.pollMs = 600_000;
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = await queuedJob(ctx, t);
    const reader = frameReader(await openStream(ctx, t, jobId));
    const first = await reader.next();
    const killed = await sql<{ n: number }>`select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where datname = current_database() and query ilike 'LISTEN%' and pid <> pg_backend_pid()`.execute(ctx.deps.db);
    assert.equal(killed.rows[0]!.n, 1, 'one LISTEN connection per process');
    const cancel = await call(ctx, 'POST', `/v1/jobs/${jobId}/cancel`, { secret: t.secret, workspaceId: t.workspace.id });
    assert.equal(cancel.statusCode, 200, cancel.body);
    const rest = await reader.rest();
    assert.deepEqual(rest.map((f) => Number(f.id)), [Number(first!.id) + 1]);
    assert.equal(JSON.parse(rest[0]!.data!).status, 'cancelled');
  });

  test('revoking the key through the admin API ends its open stream; the reconnect is 401', async () => {
    const ctx = get();
    reset();
    ctx.deps.streamSettings.authCheckMs = 20;
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = await queuedJob(ctx, t);
    const reader = frameReader(await openStream(ctx, t, jobId));
    await reader.next();
    const revoked = await admin(ctx, `/admin/v1/keys/${t.key.id}/revoke`);
    assert.equal(revoked.statusCode, 200, revoked.body);
    assert.deepEqual(await reader.rest(), [], 'the stream ends without another event');
    await waitFor('slot released', async () => (await slotCount(ctx, scopeOf(t))) === 0);
    await assertError(await openStream(ctx, t, jobId), 401, 'UNAUTHENTICATED');
  });

  test('a stream ends when the workspace loses streams (operator sets streams to 0) or when its slot row is gone', async () => {
    const ctx = get();
    reset();
    ctx.deps.streamSettings.authCheckMs = 20;
    ctx.deps.streamSettings.heartbeatMs = 20;
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = await queuedJob(ctx, t);
    const first = frameReader(await openStream(ctx, t, jobId));
    await first.next();
    const second = frameReader(await openStream(ctx, t, jobId));
    await second.next();

    await ctx.deps.db.deleteFrom('stream_slots').where('workspace_id', '=', scopeOf(t)).where('id', '=', (await ctx.deps.db.selectFrom('stream_slots').select('id').where('workspace_id', '=', scopeOf(t)).orderBy('id').executeTakeFirstOrThrow()).id).execute();
    const rests = [first.rest(15_000), second.rest(15_000)];
    const ended = await Promise.race(rests.map((rest, i) => rest.then((frames) => ({ i, frames }))));
    assert.deepEqual(ended.frames, [], 'the stream whose slot vanished ended');
    assert.equal(await slotCount(ctx, scopeOf(t)), 1, 'the other stream still holds its slot');

    const set = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { streams: 0 } });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual(await rests[1 - ended.i], [], 'streams no longer allowed: the other stream ends without another frame');
    await waitFor('slots released', async () => (await slotCount(ctx, scopeOf(t))) === 0);
    await assertError(await openStream(ctx, t, jobId), 403, 'PLAN_REQUIRED');
  });

  test('another workspace’s job is 404, another workspace 403, no workspace header 400; a key without jobs:read is 403 FORBIDDEN_SCOPE; no key or a key in the query 401; a malformed job id 400; no HEAD', async () => {
    const ctx = get();
    reset();
    const a = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const b = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobOfB = await queuedJob(ctx, b);
    await assertError(await openStream(ctx, a, jobOfB), 404, 'NOT_FOUND');
    await assertError(await openStream(ctx, { secret: a.secret, workspace: b.workspace }, jobOfB), 403, 'FORBIDDEN_WORKSPACE');
    await assertError(await httpGet(`${await baseUrl(ctx)}/v1/jobs/${jobOfB}/stream`, { ...SSE, authorization: `Bearer ${b.secret}` }), 400, 'INVALID_REQUEST');
    const { secret } = await seedKey(ctx.deps, a.user.id, [a.workspace.id], { scopes: SCOPES.filter((s) => s !== 'jobs:read'), mode: 'test' });
    await assertError(await openStream(ctx, { secret, workspace: a.workspace }, await queuedJob(ctx, a)), 403, 'FORBIDDEN_SCOPE');
    await assertError(await openStream(ctx, a, jobOfB.replace(/.$/, 'x')), 400, 'INVALID_REQUEST');
    const base = await baseUrl(ctx);
    await assertError(await httpGet(`${base}/v1/jobs/${jobOfB}/stream`, { ...SSE, 'x-service-workspace': b.workspace.id }), 401, 'UNAUTHENTICATED');
    await assertError(await httpGet(`${base}/v1/jobs/${jobOfB}/stream?api_key=${b.secret}`, apiHeaders(b, SSE)), 401, 'UNAUTHENTICATED');
    const head = await ctx.app.inject({ method: 'HEAD', url: `/v1/jobs/${jobOfB}/stream`, headers: apiHeaders(b, SSE) });
    assert.equal(head.statusCode, 404, 'no HEAD twin: it would hold a slot for a response without a body');
    assert.equal(await slotCount(ctx, scopeOf(b)), 0);
  });
}, testKeySuite());

describeEachDatabase(
  'job streams: the process cap (STREAMS_PER_PROCESS)',
  (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
    test('past STREAMS_PER_PROCESS open streams this process answers 429 CONCURRENCY_LIMITED with scope service, before taking a slot; a closed stream makes room', async () => {
      const ctx = get();
      const tenants = [await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' }), await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' }), await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' })];
      const jobs = [];
      for (const t of tenants) jobs.push(await queuedJob(ctx, t));
      const open = [...(await openStreams(ctx, tenants[0]!, jobs[0]!, 1)), ...(await openStreams(ctx, tenants[1]!, jobs[1]!, 1))];
      const refused = await openStream(ctx, tenants[2]!, jobs[2]!);
      const body = await assertError(refused, 429, 'CONCURRENCY_LIMITED');
      assert.deepEqual([body.details.limit, body.details.scope, body.details.maximum], ['STREAMS', 'service', 2]);
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      assert.equal(await slotCount(ctx, scopeOf(tenants[2]!)), 0);
      await open.pop()!.cancel();
      await waitFor('the closed stream leaves the process', async () => (await slotCount(ctx, scopeOf(tenants[1]!))) === 0);
      const again = await openStream(ctx, tenants[2]!, jobs[2]!);
      assert.equal(again.status, 200);
      await again.body!.cancel();
      for (const r of open) await r.cancel();
    });
  },
  testKeySuite({ env: { STREAMS_PER_PROCESS: '2' } }),
);
