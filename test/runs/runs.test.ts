/** Tool catalog, estimates and runs: admission, idempotency, money and limits (spec Rules 1-4, Budgets); with test keys (simulated work, the test balance). */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { call, admin, describeEachDatabase, testKeySuite } from '../support/harness.js';
import { scopeOf, seedKey, seedTenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { assertError } from '../support/assertions.js';
import { waitUntil } from '../support/wait.js';
import { balance, drain, failedJob, getJob, run } from '../support/jobs.js';
import { SPEC_OPERATION_WEIGHTS } from '../support/spec-weights.js';
import { gateAdapter } from '../support/gates.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { findOperation } from '../../src/operations/registry.js';
import { claim, IDEMPOTENCY_TTL_MS, IN_FLIGHT_TTL_MS, requestHash } from '../../src/modules/idempotency/service.js';
import { createWorkspace } from '../../src/modules/accounts/service.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { ensureTestTwin } from '../../src/modules/accounts/test-twins.js';
import { checkRefusals } from '../support/openapi-responses.js';

const CHAT = { messages: [{ role: 'user', content: 'Hello there' }], maxTokens: 100 };
const CHAT_MAX = findOperation('chat.generate')!.price(CHAT).maximumMillicents;
const MUSIC = (extra = '') => ({ prompt: `a calm tune ${extra}`, durationSeconds: 10 });
const MUSIC_MAX = findOperation('music.generate')!.price(MUSIC()).maximumMillicents; // 5000


describeEachDatabase('tools and estimates', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('GET /v1/tools lists the 14 operations with exactly the five required fields', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test' });
    const res = await call(ctx, 'GET', '/v1/tools', { secret: t.secret, workspaceId: t.workspace.id });
    assert.equal(res.statusCode, 200);
    const ops = res.json().data.items.flatMap((tool: any) => {
      assert.deepEqual(Object.keys(tool).sort(), ['description', 'name', 'operations', 'slug']);
      assert.ok(tool.operations.length <= 20);
      return tool.operations;
    });
    assert.deepEqual(ops.map((o: any) => o.operationId).sort(), [...OPERATION_IDS].sort());
    for (const o of ops) {
      assert.deepEqual(Object.keys(o).sort(), ['asynchronous', 'inputSchema', 'operationId', 'summaryKey', 'usagePoints']);
      assert.equal(o.usagePoints, SPEC_OPERATION_WEIGHTS[o.operationId], `${o.operationId}: the spec's weight`);
      assert.equal(o.asynchronous, !['link.preview', 'chat.generate'].includes(o.operationId));
      assert.equal(o.inputSchema.type, 'object');
      assert.equal(o.inputSchema.additionalProperties, false);
    }
  });

  test('GET /v1/tools shows only the operations the key may run', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test' });
    const { secret } = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { operations: ['chat.generate'], mode: 'test' });
    const res = await call(ctx, 'GET', '/v1/tools', { secret, workspaceId: t.workspace.id });
    const ops = res.json().data.items.flatMap((tool: any) => tool.operations.map((o: any) => o.operationId));
    assert.deepEqual(ops, ['chat.generate']);
  });

  test('POST /v1/estimates returns the four fields and reserves nothing', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const res = await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'chat.generate', input: CHAT } });
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data;
    assert.equal(res.json().code, 'PUBLIC_TOOLS_ESTIMATE');
    assert.deepEqual(Object.keys(data).sort(), ['estimatedCostMillicents', 'maximumCostMillicents', 'operationId', 'usagePoints']);
    assert.equal(data.maximumCostMillicents, CHAT_MAX);
    assert.ok(data.estimatedCostMillicents <= data.maximumCostMillicents);
    assert.equal(data.usagePoints, 10);
    const b = await balance(ctx, t);
    assert.equal(b.reservedMillicents, 0);
    assert.equal(b.spendableMillicents, 100_000);
  });

  test('Rule 1: estimates and runs accept exactly operationId and input; unknown operation and invalid input are 400', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const post = (body: unknown) => call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body });
    assert.equal((await post({ operationId: 'chat.generate', input: CHAT, extra: 1 })).json().code, 'INVALID_REQUEST');
    assert.equal((await post({ operationId: 'chat.generate' })).json().code, 'INVALID_REQUEST');
    assert.equal((await post({ operationId: 'nope.nothing', input: {} })).json().code, 'UNKNOWN_OPERATION');
    const invalid = await post({ operationId: 'chat.generate', input: { messages: [{ role: 'robot', content: '' }], bogus: true } });
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.json().code, 'INVALID_INPUT');
    const pointers = invalid.json().details.errors.map((e: any) => e.pointer);
    assert.ok(pointers.length > 0 && pointers.every((p: string) => p.startsWith('/input')), JSON.stringify(pointers));
    const path = await post({ operationId: 'background.remove', input: { mediaId: '/etc/passwd' } });
    assert.equal(path.json().code, 'INVALID_INPUT');
    // A well-formed id of no media item: the reference check points into the body as schema errors do.
    const missing = await post({ operationId: 'voice.clone', input: { name: 'v', referenceMediaIds: [randomUUID()] } });
    assert.equal(missing.json().code, 'INVALID_INPUT');
    assert.deepEqual(missing.json().details.errors.map((e: any) => e.pointer), ['/input/referenceMediaIds/0']);
  });

  test('a key may only run the operations chosen at its creation (403 FORBIDDEN_OPERATION)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const { secret } = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { operations: ['link.preview'], mode: 'test' });
    const res = await run(ctx, { secret, workspace: t.workspace }, 'chat.generate', CHAT);
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().code, 'FORBIDDEN_OPERATION');
  });
}, testKeySuite());

describeEachDatabase('runs: money and idempotency', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('synchronous chat.generate answers 200 kind=result, charges its cost and records a completed job', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const res = await run(ctx, t, 'chat.generate', CHAT);
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data;
    assert.equal(res.json().code, 'PUBLIC_TOOLS_RUN');
    assert.equal(res.json().message, 'Operation completed.');
    assert.equal(data.kind, 'result');
    assert.equal(data.status, 'completed');
    assert.match(data.result.message.content, /Hello there/);
    assert.ok(data.costMillicents > 0 && data.costMillicents <= CHAT_MAX);
    const job = await getJob(ctx, t, data.jobId);
    assert.equal(job.status, 'completed');
    assert.equal(job.executionOrigin, 'api');
    assert.equal(job.costMillicents, data.costMillicents);
    const b = await balance(ctx, t);
    assert.equal(b.totalMillicents, 100_000 - data.costMillicents);
    assert.equal(b.reservedMillicents, 0);
    const tx = (await call(ctx, 'GET', '/v1/transactions', { secret: t.secret, workspaceId: t.workspace.id })).json().data.items[0];
    assert.equal(tx.type, 'usage');
    assert.equal(tx.amountMillicents, -data.costMillicents);
    assert.equal(tx.jobId, data.jobId);
    assert.equal(tx.toolSlug, 'chat');
    assert.equal(tx.executionOrigin, 'api');
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('queued run answers 202 kind=job, holds the maximum cost, and settles after the worker completes it', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const res = await run(ctx, t, 'music.generate', MUSIC('[sim:cost=1234]'));
    assert.equal(res.statusCode, 202, res.body);
    const data = res.json().data;
    assert.deepEqual(Object.keys(data).sort(), ['jobId', 'kind', 'maximumCostMillicents', 'status']);
    assert.equal(data.kind, 'job');
    assert.equal(data.status, 'pending');
    assert.equal(data.maximumCostMillicents, MUSIC_MAX);
    let b = await balance(ctx, t);
    assert.equal(b.reservedMillicents, MUSIC_MAX);
    assert.equal(b.spendableMillicents, 100_000 - MUSIC_MAX);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
    assert.equal(await drain(ctx), 1);
    const job = await getJob(ctx, t, data.jobId);
    assert.equal(job.status, 'completed');
    assert.equal(job.costMillicents, 1234);
    assert.ok(job.startedAt && job.completedAt);
    assert.equal(job.progress.percentage, 100);
    assert.equal(job.output.audio.mimeType, 'audio/wav');
    assert.match(job.output.audio.url, /^http/);
    b = await balance(ctx, t);
    assert.equal(b.reservedMillicents, 0);
    assert.equal(b.totalMillicents, 100_000 - 1234);
    const events = await ctx.deps.db.selectFrom('events').selectAll().where('workspace_id', '=', scopeOf(t)).execute();
    assert.ok(events.some((e) => e.type === 'job.completed' && JSON.parse(e.data_json).job.id === data.jobId));
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('Rule 3: spendable credits below the maximum cost is 402 INSUFFICIENT_CREDITS and nothing is written', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: MUSIC_MAX - 1, mode: 'test' });
    const res = await run(ctx, t, 'music.generate', MUSIC());
    assert.equal(res.statusCode, 402);
    assert.equal(res.json().code, 'INSUFFICIENT_CREDITS');
    const jobs = await ctx.deps.db.selectFrom('jobs').select('id').where('workspace_id', '=', scopeOf(t)).execute();
    assert.equal(jobs.length, 0);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('Rule 3 / Budgets: key daily budget and workspace ceiling both must permit; 429 BUDGET_EXCEEDED names the budget', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test', key: { budgets: { dailyMillicents: MUSIC_MAX * 2 } } });
    assert.equal((await run(ctx, t, 'music.generate', MUSIC())).statusCode, 202);
    assert.equal((await run(ctx, t, 'music.generate', MUSIC())).statusCode, 202);
    const refused = await run(ctx, t, 'music.generate', MUSIC());
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().code, 'BUDGET_EXCEEDED');
    assert.equal(refused.json().details.limit, 'KEY_BUDGET_DAY');
    assert.equal(refused.json().details.scope, 'key');
    const midnight = Date.UTC(2026, 10, 19);
    assert.equal(refused.json().details.resetsAt, new Date(midnight).toISOString());
    assert.equal(Number(refused.headers['retry-after']), Math.ceil((midnight - ctx.clock.now()) / 1000));

    const w = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    await admin(ctx, `/admin/v1/workspaces/${w.workspace.id}/settings`, { budgets: { monthlyMillicents: MUSIC_MAX } });
    assert.equal((await run(ctx, w, 'music.generate', MUSIC())).statusCode, 202);
    const ws = await run(ctx, w, 'music.generate', MUSIC());
    assert.equal(ws.statusCode, 429);
    assert.equal(ws.json().details.limit, 'WORKSPACE_BUDGET_MONTH');
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('Budgets: every period of both ceilings refuses with its own details.limit, scope, resetsAt (UTC day, ISO week from Monday, month) and Retry-After; spending counts as holds do', async () => {
    const ctx = get();
    // The harness clock: Wednesday 2026-11-18 12:00 UTC.
    const resets = { day: Date.UTC(2026, 10, 19), week: Date.UTC(2026, 10, 23), month: Date.UTC(2026, 11, 1) };
    const cases = [
      { scope: 'key', period: 'day', limit: 'KEY_BUDGET_DAY', field: 'dailyMillicents' },
      { scope: 'key', period: 'week', limit: 'KEY_BUDGET_WEEK', field: 'weeklyMillicents' },
      { scope: 'key', period: 'month', limit: 'KEY_BUDGET_MONTH', field: 'monthlyMillicents' },
      { scope: 'workspace', period: 'day', limit: 'WORKSPACE_BUDGET_DAY', field: 'dailyMillicents' },
      { scope: 'workspace', period: 'week', limit: 'WORKSPACE_BUDGET_WEEK', field: 'weeklyMillicents' },
      { scope: 'workspace', period: 'month', limit: 'WORKSPACE_BUDGET_MONTH', field: 'monthlyMillicents' },
    ] as const;
    for (const c of cases) {
      const budgets = { [c.field]: MUSIC_MAX };
      const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test', ...(c.scope === 'key' ? { key: { budgets } } : {}) });
      if (c.scope === 'workspace') await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { budgets });
      assert.equal((await run(ctx, t, 'music.generate', MUSIC())).statusCode, 202, c.limit);
      const held = await run(ctx, t, 'music.generate', MUSIC());
      assert.equal(held.statusCode, 429, `${c.limit}: the open hold fills the budget`);
      assert.deepEqual(
        { code: held.json().code, limit: held.json().details.limit, scope: held.json().details.scope, resetsAt: held.json().details.resetsAt },
        { code: 'BUDGET_EXCEEDED', limit: c.limit, scope: c.scope, resetsAt: new Date(resets[c.period]).toISOString() },
      );
      assert.equal(Number(held.headers['retry-after']), Math.ceil((resets[c.period] - ctx.clock.now()) / 1000), c.limit);
      await drain(ctx);
      const spent = await run(ctx, t, 'music.generate', MUSIC());
      assert.equal(spent.json().details?.limit, c.limit, `${c.limit}: the settled spending fills it too`);
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    }
  });

  test('Budgets: a key budget counts the key’s holds and spending in all its workspaces; a workspace budget only its own', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const second = await createWorkspace(ctx.deps, { name: 'Second', plan: 'pro', ownerUserId: t.user.id });
    await ensureTestTwin(ctx.deps.db, second, 0, ctx.clock.now());
    await grantCredits(ctx.deps, second.id, { amountMillicents: 1_000_000, mode: 'test' });
    const both = await seedKey(ctx.deps, t.user.id, [t.workspace.id, second.id], { budgets: { dailyMillicents: MUSIC_MAX }, mode: 'test' });
    assert.equal((await run(ctx, { secret: both.secret, workspace: t.workspace }, 'music.generate', MUSIC())).statusCode, 202);
    const other = await run(ctx, { secret: both.secret, workspace: second }, 'music.generate', MUSIC());
    assert.equal(other.statusCode, 429, 'the hold in the first workspace counts in the second');
    assert.equal(other.json().details.limit, 'KEY_BUDGET_DAY');
    // The tenant's own key has no budget, and the workspace ceiling of the second workspace
    // counts only that workspace's spending.
    await admin(ctx, `/admin/v1/workspaces/${second.id}/settings`, { budgets: { dailyMillicents: MUSIC_MAX } });
    const own = await seedKey(ctx.deps, t.user.id, [second.id], { mode: 'test' });
    assert.equal((await run(ctx, { secret: own.secret, workspace: second }, 'music.generate', MUSIC())).statusCode, 202);
    await drain(ctx);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
    await assertLedgerInvariants(ctx.deps, scopeOf({ workspace: second, key: both.key }));
  });

  test('Budgets: a retry is admitted against the budgets of the key that retries (429 BUDGET_EXCEEDED, nothing changed)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const failed = await failedJob(ctx, t, 'music.generate', MUSIC('[sim:fail=MODEL_REFUSED]'));
    const spent = (await getJob(ctx, t, failed)).costMillicents;
    const narrow = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { budgets: { dailyMillicents: MUSIC_MAX - 1 }, mode: 'test' });
    const res = await call(ctx, 'POST', `/v1/jobs/${failed}/retry`, { secret: narrow.secret, workspaceId: t.workspace.id, headers: { 'idempotency-key': randomUUID() } });
    assert.equal(res.statusCode, 429, res.body);
    assert.equal(res.json().code, 'BUDGET_EXCEEDED');
    assert.equal(res.json().details.limit, 'KEY_BUDGET_DAY');
    const job = await getJob(ctx, t, failed);
    assert.deepEqual([job.status, job.costMillicents], ['failed', spent], 'the refused retry changed nothing');
    assert.equal((await balance(ctx, t)).reservedMillicents, 0);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('Budgets: in-flight reservations count toward admission after the period changes', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test', key: { budgets: { dailyMillicents: MUSIC_MAX } } });
    assert.equal((await run(ctx, t, 'music.generate', MUSIC())).statusCode, 202);
    ctx.clock.advance(24 * 3_600_000); // next UTC day, the job still waits
    const res = await run(ctx, t, 'music.generate', MUSIC());
    assert.equal(res.statusCode, 429);
    assert.equal(res.json().details.limit, 'KEY_BUDGET_DAY');
  });

  test('waiting-jobs limit: 429 QUEUE_FULL with details.limit WAITING_JOBS and Retry-After', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { plan: 'free', credits: 1_000_000, mode: 'test' });
    for (let i = 0; i < 3; i++) assert.equal((await run(ctx, t, 'music.generate', MUSIC())).statusCode, 202);
    const res = await run(ctx, t, 'music.generate', MUSIC());
    assert.equal(res.statusCode, 429);
    assert.equal(res.json().code, 'QUEUE_FULL');
    assert.equal(res.json().details.limit, 'WAITING_JOBS');
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.equal((await balance(ctx, t)).reservedMillicents, 3 * MUSIC_MAX);
  });

  test('Rule 4: Idempotency-Key is required (400 IDEMPOTENCY_KEY_REQUIRED); one over 128 characters is a malformed header (400 INVALID_REQUEST)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const missing = await call(ctx, 'POST', '/v1/runs', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'chat.generate', input: CHAT } });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().code, 'IDEMPOTENCY_KEY_REQUIRED');
    const empty = await run(ctx, t, 'chat.generate', CHAT, '');
    assert.equal(empty.json().code, 'IDEMPOTENCY_KEY_REQUIRED');
    const long = await run(ctx, t, 'chat.generate', CHAT, 'k'.repeat(129));
    assert.equal(long.statusCode, 400);
    assert.equal(long.json().code, 'INVALID_REQUEST');
    assert.deepEqual(long.json().details, { header: 'Idempotency-Key', maxLength: 128 });
    const longest = await run(ctx, t, 'chat.generate', CHAT, 'k'.repeat(128));
    assert.equal(longest.statusCode, 200, longest.body);
  });

  test('Rule 4: same key and same request replays the stored response with Idempotent-Replayed, charges nothing and costs 1 point', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const key = randomUUID();
    const first = await run(ctx, t, 'music.generate', MUSIC(), key);
    assert.equal(first.statusCode, 202);
    const before = Number(first.headers['ratelimit-remaining']);
    const again = await run(ctx, t, 'music.generate', { durationSeconds: 10, prompt: 'a calm tune ' }, key); // same input, other key order
    assert.equal(again.statusCode, 202);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json().data, first.json().data);
    const usage = (await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).json().data;
    // points: first run 50, replay 1, this usage read 1
    assert.equal(usage.points.minuteUsed, 50 + 1 + 1);
    assert.ok(before >= 0);
    const jobs = await ctx.deps.db.selectFrom('jobs').select('id').where('workspace_id', '=', scopeOf(t)).execute();
    assert.equal(jobs.length, 1);
    assert.equal((await balance(ctx, t)).reservedMillicents, MUSIC_MAX);
  });

  test('Rule 4: same key with a different request is 409 IDEMPOTENCY_CONFLICT; keys are scoped to the API key', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const key = randomUUID();
    assert.equal((await run(ctx, t, 'music.generate', MUSIC(), key)).statusCode, 202);
    const conflict = await run(ctx, t, 'music.generate', MUSIC('other'), key);
    assert.equal(conflict.statusCode, 409);
    assert.equal(conflict.json().code, 'IDEMPOTENCY_CONFLICT');
    const other = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test' });
    assert.equal((await run(ctx, { secret: other.secret, workspace: t.workspace }, 'music.generate', MUSIC('other'), key)).statusCode, 202);
  });

  test('Rule 4: a failed admission (402) does not burn the key; the same request succeeds after credits are added', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 10, mode: 'test' });
    const key = randomUUID();
    assert.equal((await run(ctx, t, 'music.generate', MUSIC(), key)).statusCode, 402);
    await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/credits`, { amountMillicents: 100_000, mode: 'test' });
    assert.equal((await run(ctx, t, 'music.generate', MUSIC(), key)).statusCode, 202);
  });

  test('Rule 4: concurrent requests with one key: exactly one job, the others replay or see 409 IDEMPOTENCY_IN_PROGRESS', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: 8 }, () => run(ctx, t, 'music.generate', MUSIC(), key)));
    const codes = results.map((r) => r.statusCode);
    assert.ok(codes.every((c) => c === 202 || c === 409), codes.join(','));
    for (const r of results.filter((r) => r.statusCode === 409)) assert.equal(r.json().code, 'IDEMPOTENCY_IN_PROGRESS');
    const jobs = await ctx.deps.db.selectFrom('jobs').select('id').where('workspace_id', '=', scopeOf(t)).execute();
    assert.equal(jobs.length, 1);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('Rule 4: a run takes the workspace lock before claiming its Idempotency-Key, so a concurrent admission holding the lock never deadlocks with it (concurrent writers)', async (tc) => {
    const ctx = get();
    if (ctx.deps.caps.singleWriter) {
      tc.skip('one writer: transactions run one at a time, no two wait for each other');
      return;
    }
    // The batched admission of queued runs takes the workspace lock, then inserts the claims of its
    // keys. A synchronous run with the same key used to claim first and lock second: each waited
    // for the other and PostgreSQL aborted one ("deadlock detected", a 500; found by runs-fuzz).
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const key = randomUUID();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let signalLocked!: () => void;
    const locked = new Promise<void>((resolve) => (signalLocked = resolve));
    const other = ctx.deps.db.transaction().execute(async (trx) => {
      await sql`set local lock_timeout = '10s'`.execute(trx);
      await sql`select id from workspaces where id = ${scopeOf(t)} for update`.execute(trx);
      signalLocked();
      await gate;
      const now = ctx.clock.now();
      await trx.insertInto('idempotency_keys').values({
        key_id: t.key.id, workspace_id: scopeOf(t), idem_key: key, request_hash: 'another request', state: 'done',
        status_code: 202, response_json: JSON.stringify({ kind: 'job' }), created_at_ms: now, expires_at_ms: now + IDEMPOTENCY_TTL_MS,
      }).execute();
    });
    try {
      await locked;
      const pending = run(ctx, t, 'chat.generate', CHAT, key);
      // The gate: the run is waiting for a lock the other transaction holds.
      await waitUntil(
        async () => (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(ctx.deps.db)).rows[0]!.n,
        (n) => n > 0,
        'the run to wait for the workspace lock',
        30_000,
        10,
      );
      open();
      await other;
      const res = await pending;
      assertError(res, 409, 'IDEMPOTENCY_CONFLICT');
      const jobs = await ctx.deps.db.selectFrom('jobs').select('id').where('workspace_id', '=', scopeOf(t)).execute();
      assert.equal(jobs.length, 0, 'the refused run wrote no job');
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    } finally {
      open();
      await other.catch(() => undefined);
    }
  });

  test('concurrency: 200 parallel runs against credits for exactly K maximum costs admit exactly K', async () => {
    const ctx = get();
    const K = 7;
    const t = await seedTenant(ctx.deps, { credits: K * MUSIC_MAX, mode: 'test' });
    await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { waitingJobs: 1000, pointsPerMinute: 1_000_000 } });
    const results = await Promise.all(Array.from({ length: 200 }, () => run(ctx, t, 'music.generate', MUSIC())));
    const admitted = results.filter((r) => r.statusCode === 202).length;
    const refused = results.filter((r) => r.statusCode === 402).length;
    assert.equal(admitted, K);
    assert.equal(refused, 200 - K);
    const b = await balance(ctx, t);
    assert.equal(b.reservedMillicents, K * MUSIC_MAX);
    assert.equal(b.spendableMillicents, 0);
    await drain(ctx);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
    assert.equal((await balance(ctx, t)).reservedMillicents, 0);
  });
}, testKeySuite());

/** A 2 s job lease: a synchronous run's timeout is min(20 s, lease − 1 s) = 1 s. */
describeEachDatabase('synchronous runs: timeout, dead process, abandoned Idempotency-Key', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  const SLOW_CHAT = (ms: number) => ({ messages: [{ role: 'user', content: `Hello [sim:delay=${ms}]` }], maxTokens: 100 });

  test('a synchronous run past its timeout fails with PROVIDER_TIMEOUT: answered as failed, hold released, never run again', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const key = randomUUID();
    // The provider never answers (held until the test ends): only the run's deadline can end it.
    const gate = gateAdapter(ctx.deps, 'chat.generate', { before: 'run', honourAbort: true }, 'test');
    let res;
    try {
      res = await run(ctx, t, 'chat.generate', SLOW_CHAT(30_000), key);
    } finally {
      gate.restore();
    }
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data;
    assert.deepEqual({ kind: data.kind, status: data.status, errorCode: data.errorCode, result: data.result }, { kind: 'result', status: 'failed', errorCode: 'PROVIDER_TIMEOUT', result: null });
    assert.equal(res.json().message, 'Operation failed; see errorCode.');
    const job = await getJob(ctx, t, data.jobId);
    assert.equal(job.status, 'failed');
    assert.equal(job.errorCode, 'PROVIDER_TIMEOUT');
    assert.equal(job.costMillicents, data.costMillicents);
    assert.equal((await balance(ctx, t)).reservedMillicents, 0);
    // Past the lease, recovery and the worker leave it alone: it is not processing any more.
    ctx.clock.advance(ctx.config.jobLeaseMs + 1);
    await drain(ctx);
    assert.equal((await getJob(ctx, t, data.jobId)).status, 'failed');
    const replay = await run(ctx, t, 'chat.generate', SLOW_CHAT(30_000), key);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.json().data, data);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('a synchronous job whose lease expired (its process died) fails with WORKER_LOST instead of running again in a worker', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    // The provider call is held, deaf to the run's real 1 s deadline, until the recovery is done:
    // the process "died" with the job processing, whatever the machine's speed.
    const gate = gateAdapter(ctx.deps, 'chat.generate', { before: 'run', honourAbort: false }, 'test');
    let res;
    try {
      const pending = run(ctx, t, 'chat.generate', SLOW_CHAT(0));
      const jobId = await gate.reached;
      assert.equal((await getJob(ctx, t, jobId)).status, 'processing', 'the synchronous job is processing');
      ctx.clock.advance(ctx.config.jobLeaseMs + 1);
      await drain(ctx);
      const after = await getJob(ctx, t, jobId);
      assert.equal(after.status, 'failed');
      assert.equal(after.errorCode, 'WORKER_LOST');
      gate.open();
      res = await pending;
    } finally {
      gate.restore();
    }
    assert.equal(res.json().data.status, 'failed', 'the fenced-out request reports what the job became');
    assert.equal(res.json().data.errorCode, 'WORKER_LOST');
    assert.equal((await balance(ctx, t)).reservedMillicents, 0);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test(`an Idempotency-Key left in flight by a dead process is 409 IDEMPOTENCY_IN_PROGRESS for ${IN_FLIGHT_TTL_MS / 60_000} minutes, then free again; a completed key is kept 24 h`, async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const key = randomUUID();
    const hash = requestHash('POST /v1/runs', { operationId: 'chat.generate', input: CHAT });
    // What a process that died between claiming the key and answering leaves behind.
    assert.deepEqual(await claim(ctx.deps, { keyId: t.key.id, workspaceId: scopeOf(t), idemKey: key }, hash), { kind: 'new' });
    const busy = await run(ctx, t, 'chat.generate', CHAT, key);
    assert.equal(busy.statusCode, 409);
    assert.equal(busy.json().code, 'IDEMPOTENCY_IN_PROGRESS');
    ctx.clock.advance(IN_FLIGHT_TTL_MS + 1);
    const fresh = await run(ctx, t, 'chat.generate', CHAT, key);
    assert.equal(fresh.statusCode, 200, fresh.body);
    assert.equal(fresh.headers['idempotent-replayed'], undefined);
    ctx.clock.advance(IDEMPOTENCY_TTL_MS - 60_000);
    const replay = await run(ctx, t, 'chat.generate', CHAT, key);
    assert.equal(replay.headers['idempotent-replayed'], 'true', 'kept 24 h from the request');
    assert.deepEqual(replay.json().data, fresh.json().data);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });
}, testKeySuite({ env: { JOB_LEASE_MS: '2000' } }));
