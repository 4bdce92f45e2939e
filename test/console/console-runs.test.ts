/**
 * The console's Run and Jobs endpoints (issue 35, items 4 and 5) over HTTP: operations listed for
 * a key, estimates, runs with executionOrigin `web` and one Idempotency-Key per form, the jobs
 * list with its filters, snapshots, the complete output read through the verified output path,
 * cancel and retry with the public API's rules and error codes; organization roles (a member
 * reads jobs but neither runs nor changes them), CSRF on every change, and another user's
 * workspace, key or job never reachable (404 on every endpoint).
 *
 * Runs with test keys (issue 34) and SIMULATE_LIVE off (testKeySuite): the work is simulated
 * because the keys are test keys, as an owner trying operations from the console in test mode;
 * the job endpoints are called with `mode=test` (the console's test-mode switch). Live-only
 * behaviour of the same endpoints (mode isolation, a live key without a provider) is in
 * console-jobs-test-mode.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { grantCredits } from '../../src/modules/billing/service.js';
import { assertError } from '../support/assertions.js';
import { call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { drain, getJob, readCompleteOutput, run } from '../support/jobs.js';
import { scopeOf, seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { consoleCall, seedSignedInOrganization, signInAs, type ConsoleLogin } from '../support/console.js';

const CREDITS = 10_000_000;
const ws = (workspaceId: string) => `/console/api/workspaces/${workspaceId}`;
const IMAGE = { prompt: 'a lighthouse at dusk [sim:delay=0]', width: 256, height: 256 };
/** A job endpoint in test mode (the jobs of the test keys this suite runs with). */
const tm = (url: string) => `${url}${url.includes('?') ? '&' : '?'}mode=test`;

function consoleRun(ctx: TestContext, login: ConsoleLogin, workspaceId: string, body: object, idempotencyKey: string | null = randomUUID()) {
  return consoleCall(ctx, login, 'POST', `${ws(workspaceId)}/runs`, { body, headers: idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey } });
}

async function queuedJob(ctx: TestContext, login: ConsoleLogin, t: Tenant, input: object = IMAGE): Promise<string> {
  const res = await consoleRun(ctx, login, t.workspace.id, { keyId: t.key.id, operationId: 'image.generate', input });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().data.run.kind, 'job');
  return res.json().data.run.jobId as string;
}

/** Reads the complete output through the console, page by page, checking offsets and the digest. */
async function consoleOutput(ctx: TestContext, login: ConsoleLogin, workspaceId: string, jobId: string) {
  const parts: Buffer[] = [];
  let cursor: string | null = null;
  let sha256 = '';
  do {
    const res = await consoleCall(ctx, login, 'GET', tm(`${ws(workspaceId)}/jobs/${jobId}/output${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`));
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json().data;
    assert.equal(page.offsetBytes, Buffer.concat(parts).length);
    sha256 = page.sha256;
    parts.push(Buffer.from(page.fragment, 'utf8'));
    cursor = page.nextCursor;
  } while (cursor);
  const bytes = Buffer.concat(parts);
  assert.equal(createHash('sha256').update(bytes).digest('hex'), sha256, 'the document matches its digest');
  return JSON.parse(bytes.toString('utf8'));
}

describeEachDatabase('console runs and jobs', (get) => {
  test('the operations a key may run, an estimate, and a run with executionOrigin web, once per Idempotency-Key', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: CREDITS });
    const login = await signInAs(ctx, t.user.id);
    const narrow = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test', scopes: ['tools:run', 'jobs:read'], operations: ['image.generate'] });

    const tools = await consoleCall(ctx, login, 'GET', `${ws(t.workspace.id)}/tools?keyId=${narrow.key.id}`);
    assert.equal(tools.statusCode, 200, tools.body);
    assert.equal(tools.json().code, 'CONSOLE_TOOLS_LIST');
    const ops = tools.json().data.items.flatMap((tool: { operations: { operationId: string }[] }) => tool.operations);
    assert.deepEqual(ops.map((o: { operationId: string }) => o.operationId), ['image.generate'], 'only what the key may run');
    assert.deepEqual(ops[0].mediaFields, [{ field: 'referenceMediaIds', multiple: true, kinds: ['image'] }]);
    const apiTools = await call(ctx, 'GET', '/v1/tools', { secret: narrow.secret, workspaceId: t.workspace.id });
    assert.equal(apiTools.statusCode, 403, 'the narrow key has no tools:read on the API; the console asks tools:run, as it runs');

    const est = await consoleCall(ctx, login, 'POST', `${ws(t.workspace.id)}/estimates`, { body: { keyId: narrow.key.id, operationId: 'image.generate', input: IMAGE } });
    assert.equal(est.statusCode, 200, est.body);
    const apiEst = await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'image.generate', input: IMAGE } });
    assert.deepEqual(est.json().data, apiEst.json().data, 'the same figures as POST /v1/estimates');

    const idem = randomUUID();
    const first = await consoleRun(ctx, login, t.workspace.id, { keyId: narrow.key.id, operationId: 'image.generate', input: IMAGE }, idem);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().code, 'CONSOLE_RUNS_CREATE');
    const { run: queued, replayed } = first.json().data;
    assert.equal(replayed, false);
    assert.equal(queued.kind, 'job');
    assert.equal(queued.maximumCostMillicents, est.json().data.maximumCostMillicents);
    const again = await consoleRun(ctx, login, t.workspace.id, { keyId: narrow.key.id, operationId: 'image.generate', input: IMAGE }, idem);
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json().data, { run: queued, replayed: true }, 'a second submission of the same form runs nothing');
    assert.equal(again.headers['idempotent-replayed'], 'true');
    const conflict = await consoleRun(ctx, login, t.workspace.id, { keyId: narrow.key.id, operationId: 'image.generate', input: { ...IMAGE, prompt: 'other' } }, idem);
    assertError(conflict, 409, 'IDEMPOTENCY_CONFLICT');

    const listed = await call(ctx, 'GET', '/v1/jobs', { secret: t.secret, workspaceId: t.workspace.id });
    assert.deepEqual(listed.json().data.items.map((j: { id: string }) => j.id), [queued.jobId], 'one job');
    assert.equal((await getJob(ctx, t, queued.jobId)).executionOrigin, 'web');
    const row = await ctx.deps.db.selectFrom('jobs').select(['key_id', 'execution_origin']).where('id', '=', queued.jobId).executeTakeFirstOrThrow();
    assert.deepEqual(row, { key_id: narrow.key.id, execution_origin: 'web' }, 'the job is the chosen key’s');

    await drain(ctx);
    const snap = await consoleCall(ctx, login, 'GET', tm(`${ws(t.workspace.id)}/jobs/${queued.jobId}`));
    assert.equal(snap.statusCode, 200, snap.body);
    assert.equal(snap.json().data.status, 'completed');
    assert.equal(snap.json().data.executionOrigin, 'web');
    const doc = await consoleOutput(ctx, login, t.workspace.id, queued.jobId);
    const api = await readCompleteOutput(ctx, t, queued.jobId);
    const strip = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (k, x) => (k === 'url' || k === 'urlExpiresAt' ? undefined : x)));
    assert.deepEqual(strip(doc), strip(JSON.parse(api.bytes.toString('utf8'))), 'the same document as GET /v1/jobs/{id}/output (signatures aside)');

    const sync = await consoleRun(ctx, login, t.workspace.id, { keyId: t.key.id, operationId: 'chat.generate', input: { messages: [{ role: 'user', content: 'hello' }] } });
    assert.equal(sync.statusCode, 200, sync.body);
    assert.equal(sync.json().data.run.kind, 'result');
    assert.equal(sync.json().data.run.status, 'completed');
    assert.equal((await getJob(ctx, t, sync.json().data.run.jobId)).executionOrigin, 'web');
  });

  test('refusals carry the public API’s codes: input, Idempotency-Key, the key’s operations, scopes, revocation, credits', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: CREDITS });
    const login = await signInAs(ctx, t.user.id);
    const body = { keyId: t.key.id, operationId: 'image.generate', input: IMAGE };
    assertError(await consoleRun(ctx, login, t.workspace.id, body, null), 400, 'IDEMPOTENCY_KEY_REQUIRED');
    const invalid = assertError(await consoleRun(ctx, login, t.workspace.id, { ...body, input: { prompt: '', width: 3 } }), 400, 'INVALID_INPUT');
    assert.ok(invalid.details.errors.some((e: { pointer: string }) => e.pointer.startsWith('/input')));
    assertError(await consoleRun(ctx, login, t.workspace.id, { ...body, operationId: 'no.such' }), 400, 'UNKNOWN_OPERATION');
    const estimateInvalid = await consoleCall(ctx, login, 'POST', `${ws(t.workspace.id)}/estimates`, { body: { ...body, input: { width: 1 } } });
    assertError(estimateInvalid, 400, 'INVALID_INPUT');

    const chatOnly = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test', operations: ['chat.generate'] });
    assertError(await consoleRun(ctx, login, t.workspace.id, { ...body, keyId: chatOnly.key.id }), 403, 'FORBIDDEN_OPERATION');
    const readOnly = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test', scopes: ['jobs:read'] });
    assertError(await consoleRun(ctx, login, t.workspace.id, { ...body, keyId: readOnly.key.id }), 403, 'FORBIDDEN_SCOPE');
    assertError(await consoleCall(ctx, login, 'GET', `${ws(t.workspace.id)}/tools?keyId=${readOnly.key.id}`), 403, 'FORBIDDEN_SCOPE');
    const mcpOnly = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test', transports: ['mcp'] });
    assertError(await consoleRun(ctx, login, t.workspace.id, { ...body, keyId: mcpOnly.key.id }), 403, 'FORBIDDEN_TRANSPORT');
    const elsewhere = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test', ipRanges: ['192.0.2.0/24'] });
    assertError(await consoleRun(ctx, login, t.workspace.id, { ...body, keyId: elsewhere.key.id }), 403, 'FORBIDDEN_IP');

    const revoked = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test' });
    assert.equal((await consoleCall(ctx, login, 'POST', `${ws(t.workspace.id)}/keys/${revoked.key.id}/revoke`)).statusCode, 200);
    const gone = assertError(await consoleRun(ctx, login, t.workspace.id, { ...body, keyId: revoked.key.id }), 401, 'UNAUTHENTICATED');
    assert.deepEqual(gone.details, { keyId: revoked.key.id });
    assert.equal((await consoleCall(ctx, login, 'GET', '/console/api/me')).statusCode, 200, 'the session is not what was refused');

    const poor = await seedTenant(ctx.deps, { mode: 'test' });
    const poorLogin = await signInAs(ctx, poor.user.id);
    assertError(await consoleRun(ctx, poorLogin, poor.workspace.id, { ...body, keyId: poor.key.id }), 402, 'INSUFFICIENT_CREDITS');
    assert.equal((await ctx.deps.db.selectFrom('jobs').select('id').where('workspace_id', '=', scopeOf(t)).execute()).length, 0, 'no refused run made a job');
  });

  test('the jobs list: newest first, metadata only, filters by status and operation, pages', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: CREDITS });
    const login = await signInAs(ctx, t.user.id);
    const done = await queuedJob(ctx, login, t);
    await drain(ctx);
    const waiting = await queuedJob(ctx, login, t);
    const fromApi = (await run(ctx, t, 'music.generate', { prompt: 'a tune [sim:delay=0]', durationSeconds: 10 })).json().data.jobId as string;
    assert.ok(fromApi, 'the API job');

    const all = await consoleCall(ctx, login, 'GET', tm(`${ws(t.workspace.id)}/jobs`));
    assert.equal(all.statusCode, 200, all.body);
    const items = all.json().data.items as { id: string; status: string; executionOrigin: string; operationId: string; output?: unknown }[];
    assert.deepEqual(items.map((j) => j.id), [fromApi, waiting, done]);
    assert.deepEqual(items.map((j) => j.executionOrigin), ['api', 'web', 'web']);
    assert.ok(items.every((j) => j.output === undefined), 'metadata only');
    const apiList = (await call(ctx, 'GET', '/v1/jobs', { secret: t.secret, workspaceId: t.workspace.id })).json().data.items;
    assert.deepEqual(items, apiList, 'the same items as GET /v1/jobs');

    const ids = async (query: string) => ((await consoleCall(ctx, login, 'GET', tm(`${ws(t.workspace.id)}/jobs?${query}`))).json().data.items as { id: string }[]).map((j) => j.id);
    assert.deepEqual(await ids('status=completed'), [done]);
    assert.deepEqual(await ids('status=pending'), [fromApi, waiting]);
    assert.deepEqual(await ids('operationId=music.generate'), [fromApi]);
    assert.deepEqual(await ids('operationId=image.generate&status=pending'), [waiting]);
    assert.deepEqual(await ids('status=failed'), []);

    const page1 = (await consoleCall(ctx, login, 'GET', tm(`${ws(t.workspace.id)}/jobs?limit=2`))).json().data;
    assert.deepEqual(page1.items.map((j: { id: string }) => j.id), [fromApi, waiting]);
    const page2 = (await consoleCall(ctx, login, 'GET', tm(`${ws(t.workspace.id)}/jobs?limit=2&cursor=${encodeURIComponent(page1.nextCursor)}`))).json().data;
    assert.deepEqual(page2.items.map((j: { id: string }) => j.id), [done]);
    assert.equal(page2.nextCursor, null);
    const crossed = await consoleCall(ctx, login, 'GET', tm(`${ws(t.workspace.id)}/jobs?limit=2&status=pending&cursor=${encodeURIComponent(page1.nextCursor)}`));
    assertError(crossed, 400, 'INVALID_CURSOR');
    for (const bad of ['status=done', 'operationId=x', 'limit=0', 'limit=101', 'extra=1']) {
      assertError(await consoleCall(ctx, login, 'GET', tm(`${ws(t.workspace.id)}/jobs?${bad}`)), 400, 'INVALID_REQUEST');
    }
  });

  test('cancel and retry: the public API’s rules and codes', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: CREDITS });
    const login = await signInAs(ctx, t.user.id);
    const pending = await queuedJob(ctx, login, t);
    const cancelled = await consoleCall(ctx, login, 'POST', tm(`${ws(t.workspace.id)}/jobs/${pending}/cancel`));
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(cancelled.json().data.status, 'cancelled');
    assert.equal((await consoleCall(ctx, login, 'POST', tm(`${ws(t.workspace.id)}/jobs/${pending}/cancel`))).json().data.status, 'cancelled', 'cancelling again returns it');

    const completed = await queuedJob(ctx, login, t);
    await drain(ctx);
    assertError(await consoleCall(ctx, login, 'POST', tm(`${ws(t.workspace.id)}/jobs/${completed}/cancel`)), 409, 'JOB_NOT_CANCELLABLE');
    const retryUrl = (jobId: string) => tm(`${ws(t.workspace.id)}/jobs/${jobId}/retry`);
    const retry = (jobId: string, idem: string | null = randomUUID(), keyId = t.key.id) =>
      consoleCall(ctx, login, 'POST', retryUrl(jobId), { body: { keyId }, headers: idem === null ? {} : { 'idempotency-key': idem } });
    assertError(await retry(completed), 409, 'JOB_NOT_RETRYABLE');

    const failing = await queuedJob(ctx, login, t, { ...IMAGE, prompt: 'fails [sim:delay=0][sim:fail=PROVIDER_ERROR]' });
    await drain(ctx);
    assert.equal((await getJob(ctx, t, failing)).status, 'failed');
    assertError(await retry(failing, null), 400, 'IDEMPOTENCY_KEY_REQUIRED');
    const readOnly = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test', scopes: ['jobs:read', 'tools:run'] });
    assertError(await retry(failing, randomUUID(), readOnly.key.id), 403, 'FORBIDDEN_SCOPE');
    const idem = randomUUID();
    const retried = await retry(failing, idem);
    assert.equal(retried.statusCode, 200, retried.body);
    assert.equal(retried.json().code, 'CONSOLE_JOBS_RETRY');
    assert.deepEqual(retried.json().data.run.status, 'pending');
    assert.equal((await retry(failing, idem)).json().data.replayed, true, 'the same Idempotency-Key replays');
    assert.equal((await getJob(ctx, t, failing)).status, 'pending');
  });

  test('organization roles: a member reads jobs and their output but neither runs, cancels nor retries', async () => {
    const ctx = get();
    const o = await seedSignedInOrganization(ctx);
    const adminKey = await seedKey(ctx.deps, o.adminUser.id, [o.workspace.id], { mode: 'test' });
    await grantCredits(ctx.deps, o.workspace.id, { amountMillicents: CREDITS, mode: 'test' });
    const run1 = await consoleRun(ctx, o.admin, o.workspace.id, { keyId: adminKey.key.id, operationId: 'image.generate', input: IMAGE });
    assert.equal(run1.statusCode, 200, run1.body);
    const jobId = run1.json().data.run.jobId as string;
    await drain(ctx);
    const base = ws(o.workspace.id);
    assert.equal((await consoleCall(ctx, o.member, 'GET', tm(`${base}/jobs`))).json().data.items[0].id, jobId);
    assert.equal((await consoleCall(ctx, o.member, 'GET', tm(`${base}/jobs/${jobId}`))).statusCode, 200);
    await consoleOutput(ctx, o.member, o.workspace.id, jobId);
    const body = { keyId: adminKey.key.id, operationId: 'image.generate', input: IMAGE };
    for (const [method, url, b] of [
      ['GET', `${base}/tools?keyId=${adminKey.key.id}`, undefined],
      ['POST', `${base}/estimates`, body],
      ['POST', `${base}/runs`, body],
      ['POST', tm(`${base}/jobs/${jobId}/cancel`), undefined],
      ['POST', tm(`${base}/jobs/${jobId}/retry`), { keyId: adminKey.key.id }],
    ] as const) {
      const res = await consoleCall(ctx, o.member, method, url, { body: b, headers: { 'idempotency-key': randomUUID() } });
      assertError(res, 403, 'FORBIDDEN');
    }
    const byOwner = await consoleRun(ctx, o.owner, o.workspace.id, body);
    assert.equal(byOwner.statusCode, 200, 'an owner runs with an admin’s key of the workspace');
    assert.equal((await consoleCall(ctx, o.owner, 'POST', tm(`${base}/jobs/${byOwner.json().data.run.jobId}/cancel`))).statusCode, 200);
  });

  test('changes need the console origin and the CSRF token; an API key is never accepted', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: CREDITS });
    const login = await signInAs(ctx, t.user.id);
    const other = await signInAs(ctx, t.user.id);
    const jobId = await queuedJob(ctx, login, t);
    const base = ws(t.workspace.id);
    const changes: [string, object | undefined][] = [
      [`${base}/estimates`, { keyId: t.key.id, operationId: 'image.generate', input: IMAGE }],
      [`${base}/runs`, { keyId: t.key.id, operationId: 'image.generate', input: IMAGE }],
      [tm(`${base}/jobs/${jobId}/cancel`), undefined],
      [tm(`${base}/jobs/${jobId}/retry`), { keyId: t.key.id }],
    ];
    for (const [url, body] of changes) {
      const headers = { 'idempotency-key': randomUUID() };
      for (const origin of [null, 'https://evil.example']) assertError(await consoleCall(ctx, login, 'POST', url, { body, origin, headers }), 403, 'FORBIDDEN_ORIGIN');
      for (const csrfToken of [null, other.csrfToken]) assertError(await consoleCall(ctx, login, 'POST', url, { body, csrfToken, headers }), 403, 'FORBIDDEN');
      assertError(await consoleCall(ctx, undefined, 'POST', url, { body, headers }), 401, 'UNAUTHENTICATED');
    }
    for (const url of [tm(`${base}/jobs`), tm(`${base}/jobs/${jobId}`), tm(`${base}/jobs/${jobId}/output`), `${base}/tools?keyId=${t.key.id}`]) {
      assertError(await consoleCall(ctx, login, 'GET', url, { headers: { authorization: `Bearer ${t.secret}` } }), 401, 'UNAUTHENTICATED');
      assertError(await consoleCall(ctx, undefined, 'GET', url), 401, 'UNAUTHENTICATED');
    }
    assert.equal((await getJob(ctx, t, jobId)).status, 'pending', 'nothing was cancelled');
    assert.equal((await call(ctx, 'GET', '/v1/jobs', { secret: t.secret, workspaceId: t.workspace.id })).json().data.items.length, 1, 'nothing more was run');
  });

  test("another user's workspace, keys and jobs are never reachable: every run and job endpoint answers 404", async () => {
    const ctx = get();
    const mine = await seedTenant(ctx.deps, { mode: 'test', credits: CREDITS });
    const theirs = await seedTenant(ctx.deps, { mode: 'test', credits: CREDITS });
    const login = await signInAs(ctx, mine.user.id);
    const theirJob = (await run(ctx, theirs, 'image.generate', IMAGE)).json().data.jobId as string;
    await drain(ctx);
    const failedTheirs = (await run(ctx, theirs, 'image.generate', { ...IMAGE, prompt: 'x [sim:delay=0][sim:fail=PROVIDER_ERROR]' })).json().data.jobId as string;
    await drain(ctx);
    const pendingTheirs = (await run(ctx, theirs, 'image.generate', IMAGE)).json().data.jobId as string;
    const missing = '0190a000-0000-7000-8000-000000000000';
    const op = (keyId: string) => ({ keyId, operationId: 'image.generate', input: IMAGE });
    const probes: ['GET' | 'POST', string, object | undefined][] = [];
    for (const [w, k] of [[theirs.workspace.id, theirs.key.id], [theirs.workspace.id, mine.key.id], [missing, mine.key.id]] as const) {
      probes.push(
        ['GET', `${ws(w)}/tools?keyId=${k}`, undefined],
        ['POST', `${ws(w)}/estimates`, op(k)],
        ['POST', `${ws(w)}/runs`, op(k)],
        ['GET', tm(`${ws(w)}/jobs`), undefined],
        ['GET', tm(`${ws(w)}/jobs?status=completed`), undefined],
        ['GET', tm(`${ws(w)}/jobs/${theirJob}`), undefined],
        ['GET', tm(`${ws(w)}/jobs/${theirJob}/output`), undefined],
        ['POST', tm(`${ws(w)}/jobs/${pendingTheirs}/cancel`), undefined],
        ['POST', tm(`${ws(w)}/jobs/${failedTheirs}/retry`), { keyId: k }],
      );
    }
    // Their key or their jobs through my workspace's path.
    probes.push(
      ['GET', `${ws(mine.workspace.id)}/tools?keyId=${theirs.key.id}`, undefined],
      ['POST', `${ws(mine.workspace.id)}/estimates`, op(theirs.key.id)],
      ['POST', `${ws(mine.workspace.id)}/runs`, op(theirs.key.id)],
      ['GET', tm(`${ws(mine.workspace.id)}/jobs/${theirJob}`), undefined],
      ['GET', tm(`${ws(mine.workspace.id)}/jobs/${theirJob}/output`), undefined],
      ['POST', tm(`${ws(mine.workspace.id)}/jobs/${pendingTheirs}/cancel`), undefined],
      ['POST', tm(`${ws(mine.workspace.id)}/jobs/${failedTheirs}/retry`), { keyId: mine.key.id }],
      ['GET', tm(`${ws(mine.workspace.id)}/jobs/${missing}`), undefined],
    );
    // The same job probes in live mode (the default) as well; not the retries, which a test key
    // in live mode is refused before any job is looked up (400, console-jobs-test-mode.test.ts).
    for (const [method, url, body] of [...probes]) if (url.endsWith('mode=test') && !url.includes('/retry')) probes.push([method, url.replace(/[?&]mode=test$/, ''), body]);
    for (const [method, url, body] of probes) {
      const res = await consoleCall(ctx, login, method, url, { body, headers: { 'idempotency-key': randomUUID() } });
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
      assert.equal(res.json().code, 'NOT_FOUND');
      assert.equal(res.body.includes(theirJob), false);
    }
    assert.equal((await getJob(ctx, theirs, pendingTheirs)).status, 'pending', 'their job was not cancelled');
    assert.equal((await getJob(ctx, theirs, failedTheirs)).status, 'failed', 'nor retried');
    const mineJobs = (await call(ctx, 'GET', '/v1/jobs', { secret: mine.secret, workspaceId: mine.workspace.id })).json().data.items;
    assert.equal(mineJobs.length, 0, 'and nothing ran in my workspace');
  });
}, testKeySuite());
