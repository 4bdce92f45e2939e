/**
 * GET /v1/jobs/{id} as served from its caches (store.ts findJobForRead, snapshot.ts, routes.ts):
 * a change written by another process shows on the next read, another workspace's job stays
 * 404 after its owner read it, and the once-serialized body keeps the envelope, the JSON type
 * and freshly signed file URLs.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';
import { drain, getJob, run } from '../support/jobs.js';
import { checkRefusals } from '../support/openapi-responses.js';

const read = (ctx: TestContext, t: { secret: string; workspace: { id: string } }, jobId: string) =>
  call(ctx, 'GET', `/v1/jobs/${jobId}`, { secret: t.secret, workspaceId: t.workspace.id });

describeEachDatabase('job snapshot reads', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('a job changed by another process (written past this process) is read fresh, version included', async (tc) => {
    const ctx = get();
    // Embedded SQLite has one writer, this process: nothing can write past it.
    if (ctx.deps.caps.dialect === 'sqlite') return tc.skip('single-writer SQLite');
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = (await run(ctx, t, 'music.generate', { prompt: 'x' })).json().data.jobId;
    const before = await getJob(ctx, t, jobId);
    assert.equal((await getJob(ctx, t, jobId)).version, before.version);
    // What another process's claim does: status, start time, version.
    await ctx.deps.db
      .updateTable('jobs')
      .set((eb) => ({ status: 'processing', started_at_ms: ctx.clock.now(), version: eb('version', '+', 1) }))
      .where('id', '=', jobId)
      .execute();
    const after = await getJob(ctx, t, jobId);
    assert.equal(after.status, 'processing');
    assert.equal(after.version, before.version + 1);
    assert.notEqual(after.startedAt, null);
    // A cost added without a version bump (settlement inside a finishing write) shows as well.
    await ctx.deps.db.updateTable('jobs').set({ cost_mc: 777 }).where('id', '=', jobId).execute();
    assert.equal((await getJob(ctx, t, jobId)).costMillicents, 777);
  });

  test('another workspace’s job stays 404 after its own workspace read it', async () => {
    const ctx = get();
    const a = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const b = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = (await run(ctx, a, 'music.generate', { prompt: 'x' })).json().data.jobId;
    await drain(ctx);
    assert.equal((await read(ctx, a, jobId)).statusCode, 200);
    assert.equal((await read(ctx, a, jobId)).statusCode, 200);
    const res = await read(ctx, b, jobId);
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().code, 'NOT_FOUND');
    assert.equal((await read(ctx, a, jobId)).statusCode, 200);
  });

  test('the snapshot body is the JSON envelope, identical within a second, with file URLs signed afresh later', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = (await run(ctx, t, 'music.generate', { prompt: 'x' })).json().data.jobId;
    await drain(ctx);
    const first = await read(ctx, t, jobId);
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['content-type'], 'application/json; charset=utf-8');
    const body = first.json();
    assert.equal(body.success, true);
    assert.equal(body.code, 'PUBLIC_JOBS_GET');
    assert.equal(body.message, 'Job read.');
    assert.equal(body.data.id, jobId);
    assert.equal(body.data.status, 'completed');
    assert.ok(body.data.output.audio.url, 'file link inline');
    assert.equal((await read(ctx, t, jobId)).body, first.body);
    ctx.clock.advance(5_000);
    const later = (await read(ctx, t, jobId)).json().data;
    assert.ok(Date.parse(later.output.audio.urlExpiresAt) >= Date.parse(body.data.output.audio.urlExpiresAt) + 5_000);
    assert.notEqual(later.output.audio.url, body.data.output.audio.url);
  });
}, testKeySuite());
