/**
 * The console's media endpoints (issue 35, item 7) over HTTP: an upload through the console is
 * checked exactly like POST /v1/media/upload (the same refusals, codes, reasons and statuses for the
 * same bytes, nothing stored when refused), lands in the library the public API lists, and comes
 * back with a signed URL that serves its bytes; every member may upload and read; another user's
 * workspace or media is 404 on every endpoint; the session, Origin and CSRF token are required.
 *
 * Runs with SIMULATE_LIVE off (testKeySuite, issue 34): it runs no operation with a live key, so
 * a production server answers it the same. Test mode (`mode=test`, the console's switch): the
 * test media a test key sees, each mode listing and downloading its own only.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as accounts from '../../src/modules/accounts/service.js';
import { MEDIA_PLAN_LIMITS } from '../../src/modules/media/limits.js';
import { MEDIA_FORMATS } from '../../src/modules/media/formats.js';
import { assertError, assertOk } from '../support/assertions.js';
import { assertEnvelope } from '../support/api-fuzz.js';
import { call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { backendOptions, ELF, footprint, multipartBuffer, png, sha256, startTestS3, SVG, upload, uploadForm, wav, zipArchive } from '../support/media.js';
import { consoleCsp } from '../../src/console/static.js';
import { consoleBuildMissing } from '../support/browser.js';
import { seedKey, seedTenant, uniqueEmail, type Tenant } from '../support/seed.js';
import { consoleCall, signInAs, type ConsoleLogin } from '../support/console.js';

const mediaUrl = (workspaceId: string) => `/console/api/workspaces/${workspaceId}/media`;

function consoleUpload(ctx: TestContext, login: ConsoleLogin | undefined, workspaceId: string, form: FormData | { body: Buffer; contentType: string }, o: { origin?: string | null; csrfToken?: string | null; headers?: Record<string, string> } = {}) {
  const isForm = form instanceof FormData;
  return consoleCall(ctx, login, 'POST', `${mediaUrl(workspaceId)}/upload`, {
    ...o,
    body: isForm ? form : form.body,
    headers: { ...o.headers, ...(isForm ? {} : { 'content-type': form.contentType }) },
  });
}

async function servedBytes(ctx: TestContext, signedUrl: string): Promise<{ status: number; type: string | undefined; body: Buffer }> {
  const u = new URL(signedUrl);
  const res = await ctx.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
  return { status: res.statusCode, type: res.headers['content-type'] as string | undefined, body: res.rawPayload };
}

describeEachDatabase('console media', (get) => {
  test('test mode (mode=test): uploads go to the test media a test key sees; each mode lists and downloads its own only', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test' });
    const liveKey = await seedKey(ctx.deps, t.user.id, [t.workspace.id]);
    const login = await signInAs(ctx, t.user.id);
    const testOne = assertOk(await consoleCall(ctx, login, 'POST', `${mediaUrl(t.workspace.id)}/upload?mode=test`, { body: uploadForm(await png(8, 8), { filename: 'test.png' }) })).data.media;
    assert.deepEqual({ workspaceId: testOne.workspaceId, livemode: testOne.livemode }, { workspaceId: t.workspace.id, livemode: false });
    const liveOne = assertOk(await consoleUpload(ctx, login, t.workspace.id, uploadForm(await png(9, 9), { filename: 'live.png' }))).data.media;
    assert.equal(liveOne.livemode, true);
    // The test key's library is the test mode's; the live key's the live one's; the console's lists follow the mode.
    assert.deepEqual(assertOk(await call(ctx, 'GET', '/v1/media', { secret: t.secret, workspaceId: t.workspace.id })).data.items.map((m: { id: string }) => m.id), [testOne.id]);
    assert.deepEqual(assertOk(await call(ctx, 'GET', '/v1/media', { secret: liveKey.secret, workspaceId: t.workspace.id })).data.items.map((m: { id: string }) => m.id), [liveOne.id]);
    const testList = assertOk(await consoleCall(ctx, login, 'GET', `${mediaUrl(t.workspace.id)}?mode=test`)).data;
    assert.deepEqual(testList.items.map((m: { id: string; livemode: boolean }) => [m.id, m.livemode]), [[testOne.id, false]]);
    assert.deepEqual(assertOk(await consoleCall(ctx, login, 'GET', mediaUrl(t.workspace.id))).data.items.map((m: { id: string }) => m.id), [liveOne.id]);
    // Its signed URL serves the bytes and names the scope as test-{live id}, never the twin's id.
    const served = await servedBytes(ctx, testList.items[0].downloadUrl);
    assert.equal(served.status, 200);
    assert.match(testList.items[0].downloadUrl, new RegExp(`/test-${t.workspace.id}/`));
    // Downloads: each mode's own; the other mode's id is 404.
    assert.equal(assertOk(await consoleCall(ctx, login, 'GET', `${mediaUrl(t.workspace.id)}/${testOne.id}/download?mode=test`)).data.mediaId, testOne.id);
    assertError(await consoleCall(ctx, login, 'GET', `${mediaUrl(t.workspace.id)}/${testOne.id}/download`), 404, 'NOT_FOUND');
    assertError(await consoleCall(ctx, login, 'GET', `${mediaUrl(t.workspace.id)}/${liveOne.id}/download?mode=test`), 404, 'NOT_FOUND');
    assertError(await consoleCall(ctx, login, 'GET', `${mediaUrl(t.workspace.id)}?mode=sandbox`), 400, 'INVALID_REQUEST');
  });

  test('an upload through the console is in the library of the public API; its signed URL serves the bytes', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, t.user.id);
    const bytes = await png(24, 16);
    const res = await consoleUpload(ctx, login, t.workspace.id, uploadForm(bytes, { filename: 'red.png' }));
    const body = assertOk(res);
    assert.equal(body.code, 'CONSOLE_MEDIA_UPLOAD');
    const media = body.data.media;
    assert.equal(media.name, 'red.png');
    assert.equal(media.mimeType, 'image/png');
    assert.equal(media.sizeBytes, bytes.length);
    assert.equal(media.sha256, sha256(bytes));
    assert.equal(media.workspaceId, t.workspace.id);

    const sound = assertOk(await consoleUpload(ctx, login, t.workspace.id, uploadForm(wav(), { type: 'audio/wav', filename: 'tone.wav' }))).data.media;
    const pub = assertOk(await call(ctx, 'GET', '/v1/media', { secret: t.secret, workspaceId: t.workspace.id }));
    assert.deepEqual(pub.data.items.map((m: { id: string }) => m.id), [sound.id, media.id]);

    const list = assertOk(await consoleCall(ctx, login, 'GET', mediaUrl(t.workspace.id)));
    assert.equal(list.code, 'CONSOLE_MEDIA_LIST');
    assert.deepEqual(list.data.items.map((m: { id: string }) => m.id), [sound.id, media.id]);
    assert.equal(list.data.maxUploadBytes, MEDIA_PLAN_LIMITS.pro.maxUploadBytes);
    assert.deepEqual(list.data.acceptedTypes.map((f: { mimeType: string }) => f.mimeType), Object.values(MEDIA_FORMATS).map((f) => f.mimeType));
    assert.equal(list.data.nextCursor, null);
    const item = list.data.items[1];
    assert.equal(item.sha256, media.sha256);
    assert.equal(Date.parse(item.downloadUrlExpiresAt), ctx.clock.now() + ctx.config.mediaUrlTtlS * 1000);
    const served = await servedBytes(ctx, item.downloadUrl);
    assert.equal(served.status, 200);
    assert.equal(served.type, 'image/png');
    assert.deepEqual(served.body, bytes);

    const download = assertOk(await consoleCall(ctx, login, 'GET', `${mediaUrl(t.workspace.id)}/${sound.id}/download`));
    assert.equal(download.code, 'CONSOLE_MEDIA_DOWNLOAD');
    assert.equal(download.data.mediaId, sound.id);
    assert.deepEqual((await servedBytes(ctx, download.data.url)).body, wav());

    const paged = assertOk(await consoleCall(ctx, login, 'GET', `${mediaUrl(t.workspace.id)}?limit=1`));
    assert.equal(paged.data.items.length, 1);
    assert.ok(paged.data.nextCursor);
    const next = assertOk(await consoleCall(ctx, login, 'GET', `${mediaUrl(t.workspace.id)}?limit=1&cursor=${encodeURIComponent(paged.data.nextCursor)}`));
    assert.deepEqual(next.data.items.map((m: { id: string }) => m.id), [media.id]);
  });

  test('every refusal of the public upload is the same refusal in the console, and nothing is stored', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { plan: 'free' });
    const login = await signInAs(ctx, t.user.id);
    const before = await footprint(ctx, t.workspace.id);
    const cases: { what: string; form: () => Promise<FormData | { body: Buffer; contentType: string }> }[] = [
      { what: 'empty file', form: async () => uploadForm(Buffer.alloc(0)) },
      { what: 'declared PNG, JPEG bytes', form: async () => uploadForm(await png(), { type: 'image/jpeg', filename: 'x.jpg' }) },
      { what: 'SVG', form: async () => uploadForm(SVG, { type: 'image/svg+xml', filename: 'x.svg' }) },
      { what: 'executable', form: async () => uploadForm(ELF, { type: 'application/octet-stream', filename: 'x' }) },
      { what: 'zip archive', form: async () => uploadForm(zipArchive(), { type: 'application/zip', filename: 'x.zip' }) },
      { what: 'text as PNG', form: async () => uploadForm(Buffer.from('not an image at all'), { type: 'image/png' }) },
      { what: 'wrong field name', form: async () => uploadForm(await png(), { field: 'upload' }) },
      { what: 'a second part', form: async () => uploadForm(await png(), { extra: (f) => f.append('note', 'hello') }) },
      { what: 'JSON instead of multipart', form: async () => ({ body: Buffer.from('{"file":"x"}'), contentType: 'application/json' }) },
      { what: 'over the plan\'s largest upload', form: async () => multipartBuffer(Buffer.alloc(MEDIA_PLAN_LIMITS.free.maxUploadBytes + 1, 1)) },
    ];
    for (const c of cases) {
      const viaApi = await (async () => {
        const form = await c.form();
        if (form instanceof FormData) return call(ctx, 'POST', '/v1/media/upload', { secret: t.secret, workspaceId: t.workspace.id, body: form });
        return call(ctx, 'POST', '/v1/media/upload', { secret: t.secret, workspaceId: t.workspace.id, body: form.body, headers: { 'content-type': form.contentType } });
      })();
      const viaConsole = await consoleUpload(ctx, login, t.workspace.id, await c.form());
      assert.ok(viaApi.statusCode >= 400 && viaApi.statusCode < 500, `${c.what}: API ${viaApi.statusCode} ${viaApi.body}`);
      const api = assertEnvelope(viaApi);
      const mine = assertEnvelope(viaConsole);
      assert.equal(viaConsole.statusCode, viaApi.statusCode, `${c.what}: ${viaConsole.body}`);
      assert.equal(mine.code, api.code, c.what);
      assert.equal(mine.message, api.message, c.what);
      assert.deepEqual(mine.details, api.details, c.what);
    }
    assert.deepEqual(await footprint(ctx, t.workspace.id), before, 'a refused upload leaves nothing');
  });

  test('members upload and read; another user\'s workspace and media are 404 on every endpoint', async () => {
    const ctx = get();
    const owner = await accounts.createUser(ctx.deps, { email: uniqueEmail(), name: 'Owner' });
    const member = await accounts.createUser(ctx.deps, { email: uniqueEmail(), name: 'Member' });
    const org = await accounts.createOrganization(ctx.deps, { name: 'Acme', ownerUserId: owner.id });
    await accounts.setMember(ctx.deps, org.id, { userId: member.id, role: 'member' });
    const workspace = await accounts.createWorkspace(ctx.deps, { name: 'Acme media', plan: 'pro', organizationId: org.id });
    const memberLogin = await signInAs(ctx, member.id);
    const uploaded = assertOk(await consoleUpload(ctx, memberLogin, workspace.id, uploadForm(await png()))).data.media;
    assert.equal(assertOk(await consoleCall(ctx, memberLogin, 'GET', mediaUrl(workspace.id))).data.items[0].id, uploaded.id);

    const other: Tenant = await seedTenant(ctx.deps);
    const theirs = assertOk(await upload(ctx, other, await png())).data;
    const foreign = await signInAs(ctx, other.user.id);
    const footprintBefore = await footprint(ctx, workspace.id);
    assertError(await consoleCall(ctx, foreign, 'GET', mediaUrl(workspace.id)), 404, 'NOT_FOUND');
    assertError(await consoleCall(ctx, foreign, 'GET', `${mediaUrl(workspace.id)}/${uploaded.id}/download`), 404, 'NOT_FOUND');
    assertError(await consoleUpload(ctx, foreign, workspace.id, uploadForm(await png())), 404, 'NOT_FOUND');
    assert.deepEqual(await footprint(ctx, workspace.id), footprintBefore);
    // Their own media through the member's workspace path, and an unknown workspace.
    assertError(await consoleCall(ctx, memberLogin, 'GET', `${mediaUrl(workspace.id)}/${theirs.id}/download`), 404, 'NOT_FOUND');
    const unknown = '0190a000-0000-7000-8000-00000000abcd';
    assertError(await consoleCall(ctx, memberLogin, 'GET', mediaUrl(unknown)), 404, 'NOT_FOUND');
    assertError(await consoleUpload(ctx, memberLogin, unknown, uploadForm(await png())), 404, 'NOT_FOUND');
    assertError(await consoleCall(ctx, memberLogin, 'GET', `${mediaUrl(unknown)}/${uploaded.id}/download`), 404, 'NOT_FOUND');
    // Malformed ids and queries are 400, never 500.
    assertError(await consoleCall(ctx, memberLogin, 'GET', mediaUrl('not-a-uuid')), 400, 'INVALID_REQUEST');
    assertError(await consoleCall(ctx, memberLogin, 'GET', `${mediaUrl(workspace.id)}/nope/download`), 400, 'INVALID_REQUEST');
    for (const q of ['limit=0', 'limit=101', 'limit=x', 'cursor=', 'other=1']) assertError(await consoleCall(ctx, memberLogin, 'GET', `${mediaUrl(workspace.id)}?${q}`), 400, 'INVALID_REQUEST');
    const badCursor = await consoleCall(ctx, memberLogin, 'GET', `${mediaUrl(workspace.id)}?cursor=garbage`);
    assert.equal(badCursor.statusCode, 400, badCursor.body);
    assertEnvelope(badCursor);
  });

  test('an upload needs the session, the console origin and the CSRF token, never an API key', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, t.user.id);
    const form = async () => uploadForm(await png());
    const before = await footprint(ctx, t.workspace.id);
    assertError(await consoleUpload(ctx, undefined, t.workspace.id, await form()), 401, 'UNAUTHENTICATED');
    assertError(await consoleUpload(ctx, login, t.workspace.id, await form(), { origin: null }), 403, 'FORBIDDEN_ORIGIN');
    assertError(await consoleUpload(ctx, login, t.workspace.id, await form(), { origin: 'https://evil.example' }), 403, 'FORBIDDEN_ORIGIN');
    assertError(await consoleUpload(ctx, login, t.workspace.id, await form(), { csrfToken: null }), 403, 'FORBIDDEN');
    assertError(await consoleUpload(ctx, login, t.workspace.id, await form(), { csrfToken: 'x'.repeat(43) }), 403, 'FORBIDDEN');
    assertError(await consoleUpload(ctx, login, t.workspace.id, await form(), { headers: { authorization: `Bearer ${t.secret}` } }), 401, 'UNAUTHENTICATED');
    assertError(await consoleCall(ctx, undefined, 'GET', mediaUrl(t.workspace.id), { headers: { authorization: `Bearer ${t.secret}` } }), 401, 'UNAUTHENTICATED');
    assert.deepEqual(await footprint(ctx, t.workspace.id), before);
    // The public upload never takes the session.
    const form2 = await form();
    assertError(await ctx.app.inject({ method: 'POST', url: '/v1/media/upload', headers: { cookie: login.cookie, 'x-service-workspace': t.workspace.id }, payload: form2 as unknown as object }), 401, 'UNAUTHENTICATED');
  });
}, testKeySuite());

const s3 = await startTestS3();
after(() => s3.close());

describeEachDatabase(
  'console media on S3',
  (get) => {
    test('previews and downloads are signed URLs of the bucket, whose origin the pages\' CSP allows for images and media', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const login = await signInAs(ctx, t.user.id);
      const bytes = await png(20, 10);
      const media = assertOk(await consoleUpload(ctx, login, t.workspace.id, uploadForm(bytes, { filename: 'bucket.png' }))).data.media;
      const item = assertOk(await consoleCall(ctx, login, 'GET', mediaUrl(t.workspace.id))).data.items[0];
      assert.equal(item.id, media.id);
      const origin = new URL(item.downloadUrl).origin;
      assert.equal(origin, new URL(s3.endpoint).origin);
      const served = await fetch(item.downloadUrl);
      assert.equal(served.status, 200);
      assert.deepEqual(Buffer.from(await served.arrayBuffer()), bytes);
      // The pages' policy (needs the console build, like test/console/console-pages.test.ts).
      if (consoleBuildMissing()) return;
      const page = await ctx.app.inject({ method: 'GET', url: '/console/media' });
      assert.equal(page.statusCode, 200);
      const csp = String(page.headers['content-security-policy']);
      assert.equal(csp, consoleCsp([origin]));
      assert.match(csp, new RegExp(`img-src 'self' data: ${origin.replace(/[.:/]/g, '\\$&')};`));
      assert.match(csp, new RegExp(`media-src 'self' ${origin.replace(/[.:/]/g, '\\$&')};`));
      assert.match(csp, /connect-src 'self';/, 'nothing else may come from the bucket');
    });
  },
  testKeySuite(backendOptions('s3', s3)),
);
