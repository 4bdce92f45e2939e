/**
 * Job lifecycle: states table, failure accounting, cancel, retry with checkpoints, fencing, complete
 * output; with test keys (simulated work, the test balance). A job funded by a personal provider
 * key is a live key's matter (test keys never use one): that block stays live.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { admin, call, describeEachDatabase, testKeySuite } from '../support/harness.js';
import { scopeOf, seedKey, seedTenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { balance, drain, failedJob, getJob, readCompleteOutput, run } from '../support/jobs.js';
import { claimJobs } from '../../src/worker/job-claim.js';
import { recoverExpiredLeases } from '../../src/worker/job-recovery.js';
import { executeJob } from '../../src/modules/jobs/executor.js';
import { findOperation } from '../../src/operations/registry.js';
import { gateAdapter } from '../support/gates.js';
import { LIVE_PROVIDERS } from '../support/live-backend.js';
import { checkRefusals } from '../support/openapi-responses.js';

const SPRITE = (directives: string, frames = 4) => ({ prompt: `a knight ${directives}`, frames, frameWidth: 16, frameHeight: 16 });
const spriteMax = (frames = 4) => findOperation('sprite.generate')!.price(SPRITE('', frames)).maximumMillicents;

async function retry(ctx: any, t: any, jobId: string, key = randomUUID()) {
  return call(ctx, 'POST', `/v1/jobs/${jobId}/retry`, { secret: t.secret, workspaceId: t.workspace.id, headers: { 'idempotency-key': key } });
}

describeEachDatabase('job lifecycle', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('processing → failed: [sim:fail=CODE] sets errorCode, emits job.failed and still accounts consumed work', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const res = await run(ctx, t, 'sprite.generate', SPRITE('[sim:fail=MODEL_REFUSED]'));
    const jobId = res.json().data.jobId;
    await drain(ctx);
    const job = await getJob(ctx, t, jobId);
    assert.equal(job.status, 'failed');
    assert.equal(job.errorCode, 'MODEL_REFUSED');
    assert.equal(job.costMillicents, spriteMax());
    assert.equal((await balance(ctx, t)).reservedMillicents, 0);
    const ev = await ctx.deps.db.selectFrom('events').select('type').where('workspace_id', '=', scopeOf(t)).execute();
    assert.ok(ev.some((e) => e.type === 'job.failed'));
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('retry resumes after the last checkpoint and is not charged again for completed steps', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const full = spriteMax(4); // 4 frames, 1500 each
    const res = await run(ctx, t, 'sprite.generate', SPRITE('[sim:failAt=2]'));
    const jobId = res.json().data.jobId;
    await drain(ctx);
    let job = await getJob(ctx, t, jobId);
    assert.equal(job.status, 'failed');
    assert.equal(job.costMillicents, full / 2, 'two completed frames are charged');
    const again = await retry(ctx, t, jobId);
    assert.equal(again.statusCode, 202, again.body);
    assert.equal(again.json().code, 'PUBLIC_JOBS_RETRY');
    assert.deepEqual(again.json().data, { kind: 'job', jobId, status: 'pending', maximumCostMillicents: full / 2 }, 'the retry reserves the steps still to do');
    job = await getJob(ctx, t, jobId);
    assert.equal(job.status, 'pending');
    assert.equal(job.maximumCostMillicents, full, 'the job’s bound: earlier attempts’ cost plus the new reservation');
    await drain(ctx);
    job = await getJob(ctx, t, jobId);
    assert.equal(job.status, 'completed');
    assert.equal(job.costMillicents, full, 'cumulative cost equals the full price, nothing charged twice');
    assert.ok(job.costMillicents <= job.maximumCostMillicents, 'cost never exceeds the bound the snapshot shows');
    const usage = (await call(ctx, 'GET', '/v1/transactions', { secret: t.secret, workspaceId: t.workspace.id })).json().data.items.filter((i: any) => i.type === 'usage');
    assert.equal(usage.reduce((s: number, i: any) => s - i.amountMillicents, 0), job.costMillicents, 'usage transactions sum to the job cost');
    const output = JSON.parse((await readCompleteOutput(ctx, t, jobId)).bytes.toString('utf8'));
    assert.equal(output.frames.length, 4, 'frames of both attempts are in the result');
    assert.ok(output.atlas.url && output.strips.length === 1 && output.exports.godot);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('retry rules: only failed jobs (409 JOB_NOT_RETRYABLE), Idempotency-Key required (over 128 characters 400 INVALID_REQUEST), replay with the same key', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const ok = (await run(ctx, t, 'sprite.generate', SPRITE(''))).json().data.jobId;
    await drain(ctx);
    assert.equal((await retry(ctx, t, ok)).json().code, 'JOB_NOT_RETRYABLE');
    const failed = (await run(ctx, t, 'sprite.generate', SPRITE('[sim:failAt=1]'))).json().data.jobId;
    await drain(ctx);
    const noKey = await call(ctx, 'POST', `/v1/jobs/${failed}/retry`, { secret: t.secret, workspaceId: t.workspace.id });
    assert.equal(noKey.json().code, 'IDEMPOTENCY_KEY_REQUIRED');
    const longKey = await retry(ctx, t, failed, 'r'.repeat(129) as ReturnType<typeof randomUUID>);
    assert.equal(longKey.statusCode, 400);
    assert.equal(longKey.json().code, 'INVALID_REQUEST', 'an over-long key was given: a malformed header, not a missing one');
    const key = randomUUID();
    const first = await retry(ctx, t, failed, key);
    const replay = await retry(ctx, t, failed, key);
    assert.equal(replay.statusCode, 202);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.json().data, first.json().data);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('retry refusals change nothing: a failed synchronous job (409 JOB_NOT_RETRYABLE), a key without the operation (403 FORBIDDEN_OPERATION), the run’s own key reused (409 IDEMPOTENCY_CONFLICT), a full queue (429 QUEUE_FULL)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { plan: 'free', credits: 1_000_000, mode: 'test' });
    await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 100_000 } });
    const sync = await run(ctx, t, 'chat.generate', { messages: [{ role: 'user', content: 'hi [sim:fail=MODEL_REFUSED]' }], maxTokens: 50 });
    assert.equal(sync.json().data.status, 'failed', sync.body);
    assert.equal((await retry(ctx, t, sync.json().data.jobId)).json().code, 'JOB_NOT_RETRYABLE');
    const runKey = randomUUID();
    const failed = (await run(ctx, t, 'sprite.generate', SPRITE('[sim:failAt=1]'), runKey)).json().data.jobId;
    await drain(ctx);
    const before = await getJob(ctx, t, failed);
    assert.equal(before.status, 'failed');
    const narrow = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { operations: ['chat.generate'], mode: 'test' });
    const forbidden = await call(ctx, 'POST', `/v1/jobs/${failed}/retry`, { secret: narrow.secret, workspaceId: t.workspace.id, headers: { 'idempotency-key': randomUUID() } });
    assert.deepEqual([forbidden.statusCode, forbidden.json().code], [403, 'FORBIDDEN_OPERATION']);
    const reused = await retry(ctx, t, failed, runKey);
    assert.deepEqual([reused.statusCode, reused.json().code], [409, 'IDEMPOTENCY_CONFLICT'], 'the run’s key names another request');
    // The free plan lets 3 jobs wait.
    for (let i = 0; i < 3; i++) assert.equal((await run(ctx, t, 'music.generate', { prompt: `tune ${i}`, durationSeconds: 10 })).statusCode, 202);
    const full = await retry(ctx, t, failed);
    assert.deepEqual([full.statusCode, full.json().code, full.json().details.limit], [429, 'QUEUE_FULL', 'WAITING_JOBS']);
    assert.ok(Number(full.headers['retry-after']) >= 1);
    const after = await getJob(ctx, t, failed);
    assert.deepEqual([after.status, after.costMillicents, after.maximumCostMillicents], [before.status, before.costMillicents, before.maximumCostMillicents]);
    assert.equal((await balance(ctx, t)).reservedMillicents, 3 * findOperation('music.generate')!.price({ prompt: 'x', durationSeconds: 10 }).maximumMillicents, 'only the three waiting jobs hold credits');
    await drain(ctx);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('cancel: a pending job becomes cancelled, releases its hold and emits job.cancelled; again returns it; finished is 409', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = (await run(ctx, t, 'sprite.generate', SPRITE(''))).json().data.jobId;
    const cancel = () => call(ctx, 'POST', `/v1/jobs/${jobId}/cancel`, { secret: t.secret, workspaceId: t.workspace.id });
    const res = await cancel();
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().code, 'PUBLIC_JOBS_CANCEL');
    assert.equal(res.json().data.status, 'cancelled');
    assert.equal(res.json().data.costMillicents, 0);
    assert.equal((await balance(ctx, t)).reservedMillicents, 0);
    assert.equal((await cancel()).statusCode, 200);
    assert.equal(await drain(ctx), 0, 'a cancelled job is never run');
    const done = (await run(ctx, t, 'sprite.generate', SPRITE(''))).json().data.jobId;
    await drain(ctx);
    const late = await call(ctx, 'POST', `/v1/jobs/${done}/cancel`, { secret: t.secret, workspaceId: t.workspace.id });
    assert.equal(late.statusCode, 409);
    assert.equal(late.json().code, 'JOB_NOT_CANCELLABLE');
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('cancel of a processing job fences out its worker: checkpointed steps are charged, the rest released, one terminal state', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = (await run(ctx, t, 'sprite.generate', SPRITE('[sim:delay=0]'))).json().data.jobId;
    const [claimed] = await claimJobs(ctx.deps, 'test-worker', 1);
    assert.ok(claimed);
    // The work is held right after its first frame's checkpoint: the cancel comes between two checkpoints.
    const gate = gateAdapter(ctx.deps, 'sprite.generate', { after: 'checkpoint', step: 1 }, 'test');
    try {
      const attempt = executeJob(ctx.deps, claimed, new AbortController().signal);
      assert.equal(await gate.reached, jobId);
      const row = await ctx.deps.db.selectFrom('jobs').select('steps_done').where('id', '=', jobId).executeTakeFirstOrThrow();
      assert.equal(Number(row.steps_done), 1, 'one frame checkpointed');
      const res = await call(ctx, 'POST', `/v1/jobs/${jobId}/cancel`, { secret: t.secret, workspaceId: t.workspace.id });
      assert.equal(res.json().data.status, 'cancelled');
      gate.open();
      const outcome = await attempt;
      assert.equal(outcome.status, 'lost', 'the fenced worker cannot finish the job');
    } finally {
      gate.restore();
    }
    const job = await getJob(ctx, t, jobId);
    assert.equal(job.status, 'cancelled');
    assert.equal(job.costMillicents, Math.floor(spriteMax() / 4), `charged the one checkpointed frame of four: ${job.costMillicents}`);
    assert.equal((await balance(ctx, t)).reservedMillicents, 0);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('lease fencing: a worker paused past its lease can no longer checkpoint or settle; the recovered job finishes once', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = (await run(ctx, t, 'sprite.generate', SPRITE(''))).json().data.jobId;
    const [stale] = await claimJobs(ctx.deps, 'paused-worker', 1);
    ctx.clock.advance(ctx.config.jobLeaseMs + 1);
    assert.equal(await recoverExpiredLeases(ctx.deps), 1);
    assert.equal((await getJob(ctx, t, jobId)).status, 'pending');
    const outcome = await executeJob(ctx.deps, stale!, new AbortController().signal);
    assert.equal(outcome.status, 'lost');
    assert.equal(await drain(ctx), 1);
    const job = await getJob(ctx, t, jobId);
    assert.equal(job.status, 'completed');
    assert.equal(job.costMillicents, spriteMax());
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('GET /v1/jobs lists metadata newest first with cursor paging; GET /v1/queue shows positions', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await run(ctx, t, 'music.generate', { prompt: `tune ${i}` })).json().data.jobId);
    const page1 = (await call(ctx, 'GET', '/v1/jobs', { secret: t.secret, workspaceId: t.workspace.id, query: { limit: '3' } })).json().data;
    assert.equal(page1.items.length, 3);
    assert.equal(page1.items[0].output, undefined, 'list items carry no output');
    assert.ok('executionOrigin' in page1.items[0] && 'status' in page1.items[0]);
    const page2 = (await call(ctx, 'GET', '/v1/jobs', { secret: t.secret, workspaceId: t.workspace.id, query: { limit: '3', cursor: page1.nextCursor } })).json().data;
    assert.deepEqual([...page1.items, ...page2.items].map((j: any) => j.id), [...ids].reverse());
    assert.equal(page2.nextCursor, null);
    const queue = await call(ctx, 'GET', '/v1/queue', { secret: t.secret, workspaceId: t.workspace.id });
    assert.equal(queue.json().code, 'PUBLIC_QUEUE_GET');
    const q = queue.json().data;
    assert.equal(q.waiting, 5);
    assert.equal(q.running, 0);
    assert.equal(q.runningLimit, 6);
    assert.deepEqual(q.items.map((i: any) => i.position), [1, 2, 3, 4, 5]);
    assert.deepEqual(q.items.map((i: any) => i.jobId), ids);
  });

  test('GET /v1/queue: running jobs first (position 0), then waiting jobs numbered in the order claims take them; a retried job waits behind jobs queued before its retry', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const failed = await failedJob(ctx, t, 'sprite.generate', SPRITE('[sim:fail=MODEL_REFUSED]'));
    ctx.clock.advance(1000);
    const b = (await run(ctx, t, 'music.generate', { prompt: 'b' })).json().data.jobId;
    ctx.clock.advance(1000);
    const c = (await run(ctx, t, 'music.generate', { prompt: 'c' })).json().data.jobId;
    ctx.clock.advance(1000);
    assert.equal((await retry(ctx, t, failed)).statusCode, 202);
    const queue = async () => (await call(ctx, 'GET', '/v1/queue', { secret: t.secret, workspaceId: t.workspace.id })).json().data;
    let q = await queue();
    assert.deepEqual(q.items.map((i: any) => [i.jobId, i.status, i.position]), [[b, 'pending', 1], [c, 'pending', 2], [failed, 'pending', 3]]);
    assert.ok(q.items[2].createdAt < q.items[0].createdAt, 'createdAt stays the job’s creation time');
    // Each claim of one job takes the job listed at position 1; running jobs are listed first.
    const claimed = [];
    for (let i = 0; i < 3; i++) {
      const next = q.items.find((item: any) => item.position === 1).jobId;
      const [job] = await claimJobs(ctx.deps, 'w', 1);
      assert.equal(job?.id, next, `claim ${i + 1} takes position 1`);
      claimed.push(job!);
      q = await queue();
      assert.deepEqual(q.items.map((item: any) => item.position), [...claimed.map(() => 0), ...Array.from({ length: 2 - i }, (_, k) => k + 1)]);
      assert.deepEqual(q.items.slice(0, claimed.length).map((item: any) => item.status), claimed.map(() => 'processing'));
    }
    assert.deepEqual(claimed.map((j) => j.id), [b, c, failed]);
    for (const job of claimed) await executeJob(ctx.deps, job, new AbortController().signal);
    assert.deepEqual((await queue()).items, []);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('running-jobs limit: a free workspace runs one job at a time', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { plan: 'free', credits: 1_000_000, mode: 'test' });
    await run(ctx, t, 'music.generate', { prompt: 'a' });
    await run(ctx, t, 'music.generate', { prompt: 'b' });
    const claimed = await claimJobs(ctx.deps, 'w', 10);
    assert.equal(claimed.filter((j) => j.workspace_id === scopeOf(t)).length, 1);
  });

  test('another workspace’s job is 404 on every job endpoint', async () => {
    const ctx = get();
    const a = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const b = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const jobId = (await run(ctx, a, 'music.generate', { prompt: 'x' })).json().data.jobId;
    for (const [method, url] of [['GET', `/v1/jobs/${jobId}`], ['GET', `/v1/jobs/${jobId}/output`], ['POST', `/v1/jobs/${jobId}/cancel`]] as const) {
      const res = await call(ctx, method, url, { secret: b.secret, workspaceId: b.workspace.id });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().code, 'NOT_FOUND');
    }
  });
}, testKeySuite());

describeEachDatabase('complete output (Rule 6)', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('snapshot projection names omitted fields; complete output pages join to the verified document', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const jobId = (await run(ctx, t, 'music.generate', { prompt: 'long [sim:outputBytes=200000]' })).json().data.jobId;
    await drain(ctx);
    const job = await getJob(ctx, t, jobId);
    assert.deepEqual(job.output.omittedFields, ['text']);
    assert.ok(job.output.audio.url, 'file links stay inline');
    assert.ok(Buffer.byteLength(JSON.stringify(job.output)) <= 60 * 1024);
    const { bytes, total, digest, pages } = await readCompleteOutput(ctx, t, jobId);
    assert.equal(bytes.length, total);
    assert.equal(createHash('sha256').update(bytes).digest('hex'), digest);
    assert.ok(pages >= 25);
    const doc = JSON.parse(bytes.toString('utf8'));
    assert.ok(Buffer.byteLength(doc.text) >= 199_990);
    assert.match(doc.text, /Déjà vu € 😀/);
    assert.equal(doc.audio.mediaId, job.output.audio.mediaId);
  });

  test('output cursors: tampered → 400 INVALID_CURSOR, older than the TTL → 410 CURSOR_EXPIRED, changed result → 409 OUTPUT_CHANGED', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const jobId = (await run(ctx, t, 'sprite.generate', { prompt: 'x [sim:outputBytes=30000] [sim:failAt=1]', frames: 2, frameWidth: 16, frameHeight: 16 })).json().data.jobId;
    await drain(ctx);
    const read = (cursor?: string) => call(ctx, 'GET', `/v1/jobs/${jobId}/output`, { secret: t.secret, workspaceId: t.workspace.id, ...(cursor ? { query: { cursor } } : {}) });
    // failed job: the result is null until the retry completes
    const first = (await read()).json().data;
    assert.equal(first.fragment, 'null');
    await retry(ctx, t, jobId);
    await drain(ctx);
    const page = (await read()).json().data;
    assert.ok(page.nextCursor);
    const tampered = page.nextCursor.slice(0, -2) + (page.nextCursor.endsWith('AA') ? 'BB' : 'AA');
    assert.equal((await read(tampered)).json().code, 'INVALID_CURSOR');
    assert.equal((await read('x'.repeat(1025))).statusCode, 400);
    const ttlMs = ctx.config.outputCursorTtlS * 1000;
    // Each cursor lives OUTPUT_CURSOR_TTL_S from the page that issued it, however long ago the read began.
    ctx.clock.advance(ttlMs - 1000);
    const second = await read(page.nextCursor);
    assert.equal(second.statusCode, 200);
    ctx.clock.advance(ttlMs - 1000);
    const third = await read(second.json().data.nextCursor);
    assert.equal(third.statusCode, 200, 'a cursor issued late in a long read still lives its full lifetime');
    assert.equal(third.json().data.offsetBytes, second.json().data.offsetBytes + Buffer.byteLength(second.json().data.fragment));
    ctx.clock.advance(2000);
    const expired = await read(second.json().data.nextCursor);
    assert.equal(expired.statusCode, 410, 'older than the TTL');
    assert.equal(expired.json().code, 'CURSOR_EXPIRED');
    const fresh = (await read()).json().data;
    const replaced = JSON.stringify({ replaced: true, filler: 'y'.repeat(20_000) });
    await ctx.deps.db.updateTable('jobs').set({ output_json: replaced, output_sha256: createHash('sha256').update(replaced).digest('hex') }).where('id', '=', jobId).execute();
    const changed = await read(fresh.nextCursor);
    assert.equal(changed.statusCode, 409);
    assert.equal(changed.json().code, 'OUTPUT_CHANGED');
  });
}, testKeySuite());

// A personal provider key funds only a live key's work (a test key never uses one: decisions.md
// "Test mode"), so this stays live, on a paid provider's fake (support/live-backend.ts: the
// workspace's own key for its Replicate route); the same rule over the OpenAI fake is in
// providers/providers-openai.test.ts.
describeEachDatabase('job lifecycle: a live key funded by a personal provider key', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('a job funded by a personal provider key costs no credits and cannot be retried (409 PERSONAL_PROVIDER_KEY)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1000 });
    const own = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/provider-keys`, { provider: LIVE_PROVIDERS.image, apiKey: 'r8_own_key_0123456789' });
    assert.equal(own.statusCode, 200, own.body);
    // The prediction fails after work the provider bills to the workspace's own key.
    ctx.live!.failNext();
    const res = await run(ctx, t, 'image.generate', { prompt: 'a failing picture' });
    assert.equal(res.statusCode, 202, res.body);
    await drain(ctx);
    assert.equal(ctx.live!.replicate.calls('create').at(-1)?.headers.authorization, 'Bearer r8_own_key_0123456789', 'the workspace key was used');
    assert.equal((await getJob(ctx, t, res.json().data.jobId)).status, 'failed');
    assert.equal((await balance(ctx, t)).totalMillicents, 1000);
    const again = await retry(ctx, t, res.json().data.jobId);
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().code, 'PERSONAL_PROVIDER_KEY');
  });
}, testKeySuite({ live: true }));

// decisions.md "Simulated provider": `[sim:delay=MS]` — the work takes MS milliseconds (default
// 50). The suite runs with SIMULATED_DELAY_MS=0 (test/support/harness.ts); this block runs with
// the decided default. Only lower bounds are checked: a sleep never ends early, however loaded
// the machine, so nothing here races the clock.
describeEachDatabase(
  'simulated provider work time',
  (get) => {
    test('decisions.md simulated provider: a job whose text names no delay works at least the default 50 ms; [sim:delay=MS] at least MS', async () => {
      const ctx = get();
      assert.equal(ctx.config.simulatedDelayMs, 50);
      const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
      for (const [prompt, atLeastMs] of [
        ['a quiet tune', 50],
        ['a quiet tune [sim:delay=120]', 120],
      ] as const) {
        const jobId = (await run(ctx, t, 'music.generate', { prompt })).json().data.jobId;
        const started = performance.now();
        await drain(ctx);
        const tookMs = performance.now() - started;
        assert.equal((await getJob(ctx, t, jobId)).status, 'completed');
        assert.ok(tookMs >= atLeastMs - 1, `${prompt}: worked ${tookMs.toFixed(1)} ms, at least ${atLeastMs}`);
      }
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    });
  },
  testKeySuite({ env: { SIMULATED_DELAY_MS: '50' } }),
  ['sqlite'],
);
