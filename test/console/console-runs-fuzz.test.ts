/**
 * Property tests of the console's run and job endpoints (issue 35, items 4 and 5), like the public
 * API's fuzz tests: random estimate and run bodies (key ids, operation ids, inputs, Idempotency-Key
 * headers) to own, foreign, unknown and malformed workspaces; random jobs-list queries (status,
 * operation, limit, cursors of other lists); random job ids and cursors on every job endpoint.
 * Oracles:
 *   - never a 5xx; every refusal is the envelope with a registered code and its status;
 *   - another user's workspace, key or job, and one that does not exist, are 404 and change
 *     nothing; nothing of the other tenant ever appears in an answer;
 *   - an estimate is answered exactly as POST /v1/estimates answers the same body with the same
 *     key (status and code; the same figures when it succeeds), and a run is refused for its input
 *     with the estimate's code; an accepted run is a job of that key with executionOrigin `web`,
 *     and the same Idempotency-Key replays it;
 *   - a list holds only jobs of the workspace matching its filters, newest first, at most `limit`.
 * CONSOLE_FUZZ_RUNS (default 50) sets the number of runs of each property.
 *
 * Runs with test keys (issue 34) and SIMULATE_LIVE off (testKeySuite): both tenants' keys are test
 * keys, their jobs live in the test twins (scopeOf), and the job endpoints are called in test mode
 * (`mode=test`, the console's test-mode switch).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { assertEnvelope, assertNoForeignData, wrongType } from '../support/api-fuzz.js';
import { check } from '../support/fast-check.js';
import { call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { drain, run } from '../support/jobs.js';
import { scopeOf, seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { consoleCall, signInAs, type ConsoleLogin } from '../support/console.js';

const RUNS = Number(process.env.CONSOLE_FUZZ_RUNS ?? 50);
const CREDITS = 1_000_000_000;
const UNKNOWN = '0190a000-0000-7000-8000-00000000abcd';
const STATUSES = ['pending', 'processing', 'completed', 'failed', 'cancelled'] as const;

/** Inputs of image.generate and chat.generate: mostly valid, some refused by the schema or the operation. */
const inputArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.record(
    {
      prompt: fc.oneof(fc.string({ maxLength: 30 }), wrongType),
      width: fc.oneof(fc.integer({ min: 0, max: 3000 }), wrongType),
      height: fc.integer({ min: 256, max: 512 }),
      count: fc.integer({ min: 0, max: 5 }),
      referenceMediaIds: fc.oneof(fc.constant([UNKNOWN]), fc.array(fc.uuid(), { maxLength: 2 }), wrongType),
    },
    { requiredKeys: ['prompt'] },
  ),
  fc.record({ messages: fc.oneof(fc.constant([{ role: 'user', content: 'hi' }]), fc.array(fc.record({ role: fc.constantFrom('user', 'system', 'robot'), content: fc.string({ maxLength: 8 }) }), { maxLength: 2 }), wrongType) }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  wrongType,
);

const operationArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('image.generate', 'chat.generate') },
  { weight: 1, arbitrary: fc.constantFrom(...OPERATION_IDS) },
  { weight: 1, arbitrary: fc.oneof(fc.constant('no.such'), fc.constant(''), fc.string({ maxLength: 120 }), wrongType) },
);

/**
 * The same refusal, or the first of two requests refused FORBIDDEN_OPERATION and the second
 * KEY_SUSPENDED: that refusal counts towards the key's suspension (modules/auth/service.ts), and
 * the second request may be the one that suspends it.
 */
const sameRefusal = (first: unknown, second: unknown) => first === second || (first === 'FORBIDDEN_OPERATION' && second === 'KEY_SUSPENDED');

type KeyChoice = 'mine' | 'narrow' | 'theirs' | 'unknown' | 'malformed' | 'absent';
type Target = 'own' | 'foreign' | 'unknown' | 'malformed';

interface Scene {
  ctx: TestContext;
  mine: Tenant;
  theirs: Tenant;
  narrow: { key: { id: string }; secret: string };
  login: ConsoleLogin;
  foreign: string[];
}

async function scene(ctx: TestContext): Promise<Scene> {
  const mine = await seedTenant(ctx.deps, { mode: 'test', credits: CREDITS });
  const theirs = await seedTenant(ctx.deps, { mode: 'test', credits: CREDITS });
  await ctx.deps.db.updateTable('workspaces').set({ name: 'Their secret workspace' }).where('id', '=', theirs.workspace.id).execute();
  // A key that may only estimate and run chat.generate.
  const narrow = await seedKey(ctx.deps, mine.user.id, [mine.workspace.id], { mode: 'test', scopes: ['tools:run', 'jobs:read'], operations: ['chat.generate'] });
  const login = await signInAs(ctx, mine.user.id);
  return { ctx, mine, theirs, narrow, login, foreign: ['Their secret workspace', theirs.key.prefix] };
}

const keyIdOf = (s: Scene, which: KeyChoice): unknown =>
  ({ mine: s.mine.key.id, narrow: s.narrow.key.id, theirs: s.theirs.key.id, unknown: UNKNOWN, malformed: 'key-1', absent: undefined })[which];
const workspaceOf = (s: Scene, target: Target): string => ({ own: s.mine.workspace.id, foreign: s.theirs.workspace.id, unknown: UNKNOWN, malformed: 'ws-1' })[target];
const secretOf = (s: Scene, which: KeyChoice) => (which === 'narrow' ? s.narrow.secret : s.mine.secret);

const bodyArb = fc.record({
  key: fc.constantFrom<KeyChoice>('mine', 'mine', 'mine', 'narrow', 'theirs', 'unknown', 'malformed', 'absent'),
  target: fc.constantFrom<Target>('own', 'own', 'own', 'own', 'foreign', 'unknown', 'malformed'),
  operationId: operationArb,
  input: inputArb,
  extra: fc.option(fc.constantFrom('workspaceId', 'executionOrigin', 'idempotencyKey'), { nil: undefined }),
});

/** True when the console's wrapper of the body (keyId, operationId, input, no other property) is well-formed. */
function wrapperValid(b: { key: KeyChoice; operationId: unknown; input: unknown; extra: string | undefined }): boolean {
  return (
    b.key !== 'absent' &&
    b.key !== 'malformed' &&
    typeof b.operationId === 'string' &&
    b.operationId.length >= 1 &&
    b.operationId.length <= 100 &&
    typeof b.input === 'object' &&
    b.input !== null &&
    !Array.isArray(b.input) &&
    b.extra === undefined
  );
}

function bodyFor(s: Scene, b: { key: KeyChoice; operationId: unknown; input: unknown; extra: string | undefined }): Record<string, unknown> {
  const body: Record<string, unknown> = { operationId: b.operationId, input: b.input };
  if (b.key !== 'absent') body.keyId = keyIdOf(s, b.key);
  if (b.extra) body[b.extra] = b.extra === 'executionOrigin' ? 'api' : UNKNOWN;
  return body;
}

describeEachDatabase('console runs fuzz', (get) => {
  test('random estimate bodies: answered as POST /v1/estimates answers them', async () => {
    const s = await scene(get());
    const { ctx } = s;
    await check(
      fc.asyncProperty(bodyArb, async (b) => {
        const body = bodyFor(s, b);
        const res = await consoleCall(ctx, s.login, 'POST', `/console/api/workspaces/${workspaceOf(s, b.target)}/estimates`, { body });
        assert.ok(res.statusCode < 500, res.body);
        assertNoForeignData(s.foreign, JSON.stringify(body), res.body, 'estimate');
        if (b.target === 'malformed' || !wrapperValid(b)) return void assert.equal(assertEnvelope(res).code, 'INVALID_REQUEST', `${JSON.stringify(body)}: ${res.body}`);
        if (b.target !== 'own' || b.key === 'theirs' || b.key === 'unknown') return void assert.equal(assertEnvelope(res).code, 'NOT_FOUND', `${JSON.stringify(body)}: ${res.body}`);
        const api = await call(ctx, 'POST', '/v1/estimates', { secret: secretOf(s, b.key), workspaceId: s.mine.workspace.id, body: { operationId: b.operationId, input: b.input } });
        if (api.statusCode === 429) return;
        if (!sameRefusal(res.json().code, api.json().code)) assert.equal(res.statusCode, api.statusCode, `${JSON.stringify(body)}: console ${res.body}, API ${api.body}`);
        if (res.statusCode === 200) assert.deepEqual(res.json().data, api.json().data);
        else assert.ok(sameRefusal(assertEnvelope(res).code, api.json().code), `console ${res.body}, API ${api.body}`);
      }),
      RUNS,
    );
  });

  test('random run bodies and Idempotency-Keys: refused like the estimate, accepted runs are web jobs of the key, replays run nothing', async () => {
    const s = await scene(get());
    const { ctx } = s;
    // A fresh key per run (a generated UUID could repeat across runs and turn a run into a replay).
    const idemArb = fc.oneof({ weight: 5, arbitrary: fc.constant('fresh') }, { weight: 1, arbitrary: fc.constantFrom<string | undefined>(undefined, '', 'x'.repeat(129)) });
    await check(
      fc.asyncProperty(bodyArb, idemArb, async (b, idemKind) => {
        const idem = idemKind === 'fresh' ? randomUUID() : idemKind;
        const body = bodyFor(s, b);
        const url = `/console/api/workspaces/${workspaceOf(s, b.target)}/runs`;
        const headers: Record<string, string> = idem === undefined ? {} : { 'idempotency-key': idem };
        const before = await ctx.deps.db.selectFrom('jobs').select('id').execute();
        const res = await consoleCall(ctx, s.login, 'POST', url, { body, headers });
        assert.ok(res.statusCode < 500, res.body);
        assertNoForeignData(s.foreign, JSON.stringify(body), res.body, 'run');
        const jobsNow = await ctx.deps.db.selectFrom('jobs').select(['id', 'workspace_id', 'key_id', 'execution_origin']).execute();
        if (res.statusCode !== 200) {
          assert.equal(jobsNow.length, before.length, `a refused run makes no job: ${res.body}`);
          const code = assertEnvelope(res).code;
          if (b.target === 'malformed' || !wrapperValid(b)) return void assert.equal(code, 'INVALID_REQUEST', res.body);
          if (b.target !== 'own' || b.key === 'theirs' || b.key === 'unknown') return void assert.equal(code, 'NOT_FOUND', res.body);
          if (idem === undefined || idem === '') return void assert.equal(code, 'IDEMPOTENCY_KEY_REQUIRED', res.body);
          if (idem.length > 128) return void assert.equal(code, 'INVALID_REQUEST', res.body);
          const est = await consoleCall(ctx, s.login, 'POST', `/console/api/workspaces/${s.mine.workspace.id}/estimates`, { body });
          // Refused for its input: the estimate's code. Accepted by the estimate: refused for money or limits only.
          if (est.statusCode !== 200) assert.ok(sameRefusal(code, est.json().code), `run ${res.body}, estimate ${est.body}`);
          else assert.ok(['INSUFFICIENT_CREDITS', 'RATE_LIMITED', 'BUDGET_EXCEEDED', 'QUEUE_FULL', 'CONCURRENCY_LIMITED'].includes(code), res.body);
          return;
        }
        assert.equal(b.target, 'own');
        const data = res.json().data;
        const job = jobsNow.find((j) => j.id === data.run.jobId);
        assert.ok(job, 'the run made a job');
        assert.deepEqual({ ws: job.workspace_id, key: job.key_id, origin: job.execution_origin }, { ws: scopeOf(s.mine), key: keyIdOf(s, b.key), origin: 'web' });
        assert.equal(jobsNow.length, before.length + 1, 'exactly one job');
        const again = await consoleCall(ctx, s.login, 'POST', url, { body, headers });
        assert.equal(again.statusCode, 200, again.body);
        assert.deepEqual(again.json().data, { run: data.run, replayed: true });
        assert.equal((await ctx.deps.db.selectFrom('jobs').select('id').execute()).length, jobsNow.length, 'the replay ran nothing');
      }),
      RUNS,
    );
    await drain(ctx);
    const theirs = await call(ctx, 'GET', '/v1/jobs', { secret: s.theirs.secret, workspaceId: s.theirs.workspace.id });
    assert.equal(theirs.json().data.items.length, 0, 'nothing ever ran in their workspace');
  });

  test('random jobs-list queries: only matching jobs of the workspace, newest first, bounded', async () => {
    const s = await scene(get());
    const { ctx } = s;
    // Jobs of every status and a few operations, in both workspaces.
    for (const t of [s.mine, s.theirs]) {
      for (const prompt of ['a', 'b [sim:fail=PROVIDER_ERROR]', 'c']) await run(ctx, t, 'image.generate', { prompt, width: 256, height: 256 });
      await run(ctx, t, 'music.generate', { prompt: 'tune', durationSeconds: 5 });
      await drain(ctx);
      await run(ctx, t, 'image.generate', { prompt: 'waits', width: 256, height: 256 });
      const cancelMe = (await run(ctx, t, 'music.generate', { prompt: 'stop', durationSeconds: 5 })).json().data.jobId;
      await call(ctx, 'POST', `/v1/jobs/${cancelMe}/cancel`, { secret: t.secret, workspaceId: t.workspace.id });
      await run(ctx, t, 'chat.generate', { messages: [{ role: 'user', content: 'hi' }] });
    }
    const all = await ctx.deps.db.selectFrom('jobs').select(['id', 'workspace_id', 'status', 'operation_id']).execute();
    const theirIds = all.filter((j) => j.workspace_id === scopeOf(s.theirs)).map((j) => j.id);
    const first = (await consoleCall(ctx, s.login, 'GET', `/console/api/workspaces/${s.mine.workspace.id}/jobs?limit=2&mode=test`)).json().data.nextCursor as string;
    const filtered = (await consoleCall(ctx, s.login, 'GET', `/console/api/workspaces/${s.mine.workspace.id}/jobs?limit=1&status=completed&mode=test`)).json().data.nextCursor as string;
    const foreignCursor = (await call(ctx, 'GET', '/v1/jobs?limit=1', { secret: s.theirs.secret, workspaceId: s.theirs.workspace.id })).json().data.nextCursor as string;
    const queryArb = fc.record(
      {
        status: fc.oneof(fc.constantFrom(...STATUSES), fc.constantFrom('done', '', 'PENDING')),
        operationId: fc.oneof(fc.constantFrom('image.generate', 'music.generate', 'chat.generate', 'video.edit'), fc.constantFrom('x', '')),
        limit: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.constantFrom('0', '101', 'ten', '-1')),
        cursor: fc.constantFrom('first', 'filtered', 'foreign', 'garbage'),
        extra: fc.constantFrom('x', 'workspaceId'),
      },
      { requiredKeys: [] },
    );
    await check(
      fc.asyncProperty(queryArb, fc.constantFrom<Target>('own', 'own', 'own', 'foreign', 'unknown', 'malformed'), async (q, target) => {
        const params = new URLSearchParams();
        const cursors: Record<string, string> = { first, filtered, foreign: foreignCursor, garbage: 'abc.def' };
        for (const [k, v] of Object.entries(q)) {
          if (k === 'extra') params.set(v as string, UNKNOWN);
          else params.set(k, k === 'cursor' ? cursors[v as string]! : String(v));
        }
        params.set('mode', 'test');
        const res = await consoleCall(ctx, s.login, 'GET', `/console/api/workspaces/${workspaceOf(s, target)}/jobs?${params}`);
        assert.ok(res.statusCode < 500, res.body);
        for (const id of theirIds) assert.equal(res.body.includes(id), false, 'none of their jobs');
        const wellFormed =
          target !== 'malformed' &&
          q.extra === undefined &&
          (q.status === undefined || (STATUSES as readonly string[]).includes(q.status)) &&
          (q.operationId === undefined || (OPERATION_IDS as readonly string[]).includes(q.operationId)) &&
          (q.limit === undefined || typeof q.limit === 'number');
        if (!wellFormed) return void assert.equal(assertEnvelope(res).code, 'INVALID_REQUEST', `${params}: ${res.body}`);
        if (target !== 'own') return void assert.equal(assertEnvelope(res).code, 'NOT_FOUND', res.body);
        const sameList = q.cursor === undefined || (q.cursor === 'first' && q.status === undefined && q.operationId === undefined) || (q.cursor === 'filtered' && q.status === 'completed' && q.operationId === undefined);
        if (!sameList) return void assert.equal(assertEnvelope(res).code, 'INVALID_CURSOR', `${params}: ${res.body}`);
        assert.equal(res.statusCode, 200, res.body);
        const { items } = res.json().data as { items: { id: string; workspaceId: string; status: string; operationId: string }[] };
        assert.ok(items.length <= (q.limit as number | undefined ?? 25));
        for (const j of items) {
          assert.equal(j.workspaceId, s.mine.workspace.id);
          if (q.status) assert.equal(j.status, q.status);
          if (q.operationId) assert.equal(j.operationId, q.operationId);
        }
        assert.deepEqual(items.map((j) => j.id), [...items.map((j) => j.id)].sort().reverse(), 'newest first');
        if (q.cursor === undefined && items.length < (q.limit as number | undefined ?? 25)) {
          const expected = all.filter((j) => j.workspace_id === scopeOf(s.mine) && (!q.status || j.status === q.status) && (!q.operationId || j.operation_id === q.operationId));
          assert.equal(items.length, expected.length, 'a short first page holds every match');
        }
      }),
      RUNS,
    );
  });

  test('random job ids, cursors, keys and Idempotency-Keys on every job endpoint', async () => {
    const s = await scene(get());
    const { ctx } = s;
    const mineJob = (await run(ctx, s.mine, 'image.generate', { prompt: 'mine [sim:fail=PROVIDER_ERROR]', width: 256, height: 256 })).json().data.jobId as string;
    const theirJob = (await run(ctx, s.theirs, 'image.generate', { prompt: 'theirs [sim:fail=PROVIDER_ERROR]', width: 256, height: 256 })).json().data.jobId as string;
    await drain(ctx);
    const actionArb = fc.record({
      action: fc.constantFrom('get', 'output', 'cancel', 'retry'),
      job: fc.constantFrom('mine', 'theirs', 'unknown', 'malformed'),
      target: fc.constantFrom<Target>('own', 'own', 'foreign', 'malformed'),
      cursor: fc.option(fc.oneof(fc.string({ maxLength: 40 }), fc.constant('a.b')), { nil: undefined }),
      key: fc.constantFrom<KeyChoice>('mine', 'narrow', 'theirs', 'malformed', 'absent'),
      idem: fc.option(fc.uuid(), { nil: undefined }),
    });
    await check(
      fc.asyncProperty(actionArb, async (a) => {
        const jobId = { mine: mineJob, theirs: theirJob, unknown: UNKNOWN, malformed: 'job-1' }[a.job];
        const base = `/console/api/workspaces/${workspaceOf(s, a.target)}/jobs/${jobId}`;
        const headers: Record<string, string> = a.idem ? { 'idempotency-key': a.idem } : {};
        const body = a.key === 'absent' ? {} : { keyId: keyIdOf(s, a.key) };
        const res =
          a.action === 'get' ? await consoleCall(ctx, s.login, 'GET', `${base}?mode=test`)
          : a.action === 'output' ? await consoleCall(ctx, s.login, 'GET', `${base}/output?mode=test${a.cursor === undefined ? '' : `&cursor=${encodeURIComponent(a.cursor)}`}`)
          : a.action === 'cancel' ? await consoleCall(ctx, s.login, 'POST', `${base}/cancel?mode=test`)
          : await consoleCall(ctx, s.login, 'POST', `${base}/retry?mode=test`, { body, headers });
        assert.ok(res.statusCode < 500, res.body);
        assertNoForeignData([...s.foreign, theirJob], '', res.body, a.action);
        if (res.statusCode === 200) {
          assert.equal(a.target, 'own');
          assert.equal(a.job, 'mine');
          return;
        }
        const code = assertEnvelope(res).code;
        const badCursor = a.action === 'output' && a.cursor !== undefined && (a.cursor.length === 0 || a.cursor.length > 1024);
        const badBody = a.action === 'retry' && (a.key === 'absent' || a.key === 'malformed');
        if (a.target === 'malformed' || a.job === 'malformed' || badCursor || badBody) return void assert.equal(code, 'INVALID_REQUEST', res.body);
        if (a.target !== 'own' || (a.action === 'retry' && a.key === 'theirs')) return void assert.equal(code, 'NOT_FOUND', res.body);
        // A retry is checked as POST /v1/jobs/{id}/retry is: the key's scope, then the Idempotency-Key, then the job.
        if (a.action === 'retry' && a.key === 'narrow') return void assert.equal(code, 'FORBIDDEN_SCOPE', res.body);
        if (a.action === 'retry' && !a.idem) return void assert.equal(code, 'IDEMPOTENCY_KEY_REQUIRED', res.body);
        // A cursor is read before the job, as GET /v1/jobs/{id}/output reads it: these are never valid.
        if (a.action === 'output' && a.cursor !== undefined) return void assert.equal(code, 'INVALID_CURSOR', res.body);
        if (a.job !== 'mine') return void assert.equal(code, 'NOT_FOUND', res.body);
        const expected: Record<string, string[]> = {
          get: [],
          output: [],
          cancel: ['JOB_NOT_CANCELLABLE'],
          retry: ['JOB_NOT_RETRYABLE', 'FORBIDDEN_OPERATION', 'IDEMPOTENCY_CONFLICT', 'RATE_LIMITED', 'QUEUE_FULL'],
        };
        assert.ok(expected[a.action]!.includes(code), `${a.action}: ${res.body}`);
      }),
      RUNS,
    );
    const theirs = await call(ctx, 'GET', `/v1/jobs/${theirJob}`, { secret: s.theirs.secret, workspaceId: s.theirs.workspace.id });
    assert.equal(theirs.json().data.status, 'failed', 'their job was neither cancelled nor retried');
  });
}, testKeySuite());
