/**
 * GET /v1/media/{id}/download and the signed URLs it returns, on every database and both storage
 * backends: the URL serves the exact bytes with the right Content-Type and Content-Length without
 * an API key, supports Range requests, and is refused after expiry or when any part of it is
 * altered. The S3 backend is served by a local S3-compatible server that enforces presigned
 * signatures (test/support/media.ts); the local backend by the service itself.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { call, describeEachDatabase, type TestContext } from '../support/harness.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import { signedMediaUrl, getMediaItem } from '../../src/modules/media/service.js';
import { backendOptions, png, sha256, startTestS3, upload, wav } from '../support/media.js';
import { checkRefusals } from '../support/openapi-responses.js';

const s3 = await startTestS3();
after(() => s3.close());

async function uploaded(ctx: TestContext, t: Tenant, bytes: Buffer, type = 'image/png') {
  const res = await upload(ctx, t, bytes, { type, filename: type === 'image/png' ? 'picture.png' : 'tone.wav' });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { id: string; sha256: string; mimeType: string; sizeBytes: number };
}

async function downloadOf(ctx: TestContext, t: Tenant, mediaId: string) {
  const res = await call(ctx, 'GET', `/v1/media/${mediaId}/download`, { secret: t.secret, workspaceId: t.workspace.id });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { mediaId: string; url: string; expiresAt: string };
}

/** Fetches a signed URL of the local store through the app (no API key, no workspace header). */
async function fetchLocal(ctx: TestContext, url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') {
  const u = new URL(url);
  return ctx.app.inject({ method, url: `${u.pathname}${u.search}`, headers });
}

describeEachDatabase('media download [local]', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('download returns {mediaId, url, expiresAt} with expiresAt = now + MEDIA_URL_TTL_S (900 s by default)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const item = await uploaded(ctx, t, await png());
    const res = await call(ctx, 'GET', `/v1/media/${item.id}/download`, { secret: t.secret, workspaceId: t.workspace.id });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().code, 'PUBLIC_MEDIA_DOWNLOAD');
    const data = res.json().data;
    assert.deepEqual(Object.keys(data).sort(), ['expiresAt', 'mediaId', 'url']);
    assert.equal(data.mediaId, item.id);
    assert.equal(data.expiresAt, new Date(ctx.clock.now() + 900_000).toISOString());
    assert.ok(data.url.startsWith(`${ctx.config.publicBaseUrl}/media-files/${t.workspace.id}/${item.id}?`), data.url);
  });

  test('the signed URL serves the exact bytes with Content-Type and Content-Length, without an API key', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const bytes = await png(50, 50);
    const item = await uploaded(ctx, t, bytes);
    const { url } = await downloadOf(ctx, t, item.id);
    const res = await fetchLocal(ctx, url);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.rawPayload, bytes);
    assert.equal(res.headers['content-type'], 'image/png');
    assert.equal(res.headers['content-length'], String(bytes.length));
    assert.equal(res.headers['accept-ranges'], 'bytes');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.match(String(res.headers['content-security-policy']), /sandbox/);
    assert.equal(sha256(res.rawPayload), item.sha256);
    const head = await fetchLocal(ctx, url, {}, 'HEAD');
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], String(bytes.length));
    assert.equal(head.rawPayload.length, 0);
    assert.equal(head.headers['content-type'], 'image/png');
    const headRange = await fetchLocal(ctx, url, { range: 'bytes=0-9' }, 'HEAD');
    assert.equal(headRange.statusCode, 206);
    assert.equal(headRange.headers['content-length'], '10');
  });

  test('the signed URL supports Range requests (206 with Content-Range; 416 when unsatisfiable)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const bytes = wav(3000);
    const item = await uploaded(ctx, t, bytes, 'audio/wav');
    const { url } = await downloadOf(ctx, t, item.id);
    const first = await fetchLocal(ctx, url, { range: 'bytes=0-11' });
    assert.equal(first.statusCode, 206);
    assert.deepEqual(first.rawPayload, bytes.subarray(0, 12));
    assert.equal(first.headers['content-range'], `bytes 0-11/${bytes.length}`);
    assert.equal(first.headers['content-length'], '12');
    assert.equal(first.headers['content-type'], 'audio/wav');
    const suffix = await fetchLocal(ctx, url, { range: 'bytes=-100' });
    assert.equal(suffix.statusCode, 206);
    assert.deepEqual(suffix.rawPayload, bytes.subarray(bytes.length - 100));
    const open = await fetchLocal(ctx, url, { range: `bytes=${bytes.length - 10}-` });
    assert.deepEqual(open.rawPayload, bytes.subarray(bytes.length - 10));
    const beyond = await fetchLocal(ctx, url, { range: `bytes=${bytes.length}-` });
    assert.equal(beyond.statusCode, 416);
    assert.equal(beyond.json().code, 'RANGE_NOT_SATISFIABLE');
    assert.match(String(beyond.headers['content-type']), /application\/json/);
    assert.equal(beyond.headers['content-range'], `bytes */${bytes.length}`);
    const stale = await fetchLocal(ctx, url, { range: 'bytes=0-11', 'if-range': '"0000"' });
    assert.equal(stale.statusCode, 200, 'a non-matching If-Range gets the whole body');
    assert.equal(stale.rawPayload.length, bytes.length);
  });

  test('the signed URL works until expiresAt and is refused from then on (403)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const item = await uploaded(ctx, t, await png());
    const { url, expiresAt } = await downloadOf(ctx, t, item.id);
    const start = ctx.clock.now();
    try {
      ctx.clock.set(Date.parse(expiresAt) - 1);
      assert.equal((await fetchLocal(ctx, url)).statusCode, 200);
      ctx.clock.set(Date.parse(expiresAt));
      const expired = await fetchLocal(ctx, url);
      assert.equal(expired.statusCode, 403);
      assert.equal(expired.json().code, 'FORBIDDEN');
      ctx.clock.advance(86_400_000);
      assert.equal((await fetchLocal(ctx, url)).statusCode, 403);
    } finally {
      ctx.clock.set(start);
    }
  });

  test('the signed URL is refused (403) when any part of it is altered', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const other = await seedTenant(ctx.deps);
    const item = await uploaded(ctx, t, await png());
    const sibling = await uploaded(ctx, t, await png(3, 3));
    const foreign = await uploaded(ctx, other, await png(4, 4));
    const { url } = await downloadOf(ctx, t, item.id);
    const u = new URL(url);
    const expires = u.searchParams.get('expires')!;
    const token = u.searchParams.get('token')!;
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const altered = [
      url.replace(item.id, sibling.id),
      url.replace(item.id, foreign.id),
      url.replace(t.workspace.id, other.workspace.id),
      url.replace(`expires=${expires}`, `expires=${Number(expires) + 1}`),
      url.replace(`expires=${expires}`, `expires=${Number(expires) + 86_400_000}`),
      url.replace(`token=${token}`, `token=${flip(token, 0)}`),
      url.replace(`token=${token}`, `token=${flip(token, token.length - 1)}`),
      url.replace(`token=${token}`, `token=${token.slice(0, -1)}`),
      url.replace(`&token=${token}`, ''),
      `${url}&download=1`,
      `${url}&token=${token}`,
      url.replace(item.id, item.id.toUpperCase()),
    ];
    for (const candidate of altered) {
      assert.notEqual(candidate, url);
      const res = await fetchLocal(ctx, candidate);
      assert.equal(res.statusCode, 403, candidate);
      assert.equal(res.json().code, 'FORBIDDEN');
    }
    assert.equal((await fetchLocal(ctx, url)).statusCode, 200, 'the URL as issued still works');
  });

  test('the signed URL works over a real socket', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const bytes = await png(64, 64);
    const item = await uploaded(ctx, t, bytes);
    const { url } = await downloadOf(ctx, t, item.id);
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.server.address() as AddressInfo;
    const u = new URL(url);
    const res = await fetch(`http://127.0.0.1:${port}${u.pathname}${u.search}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes);
  });

  for (const [path, code, points] of [
    ['', 'PUBLIC_MEDIA_GET', 1],
    ['/download', 'PUBLIC_MEDIA_DOWNLOAD', 2],
  ] as const) {
    test(`GET /v1/media/{id}${path}: shared route rules (401 without key, 403 without media:read or for another workspace, ${points} points, ${code})`, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const other = await seedTenant(ctx.deps);
      const item = await uploaded(ctx, t, await png());
      const url = `/v1/media/${item.id}${path}`;
      const first = await call(ctx, 'GET', url, { secret: t.secret, workspaceId: t.workspace.id });
      const second = await call(ctx, 'GET', url, { secret: t.secret, workspaceId: t.workspace.id });
      assert.equal(first.statusCode, 200);
      assert.equal(first.json().code, code);
      assert.equal(first.json().success, true);
      assert.ok(first.headers['ratelimit-limit']);
      assert.equal(Number(first.headers['ratelimit-remaining']) - Number(second.headers['ratelimit-remaining']), points);
      assert.equal((await call(ctx, 'GET', url, { workspaceId: t.workspace.id })).statusCode, 401);
      const noRead = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { scopes: SCOPES.filter((s) => s !== 'media:read') });
      const refused = await call(ctx, 'GET', url, { secret: noRead.secret, workspaceId: t.workspace.id });
      assert.equal(refused.statusCode, 403);
      assert.equal(refused.json().code, 'FORBIDDEN_SCOPE');
      const foreign = await call(ctx, 'GET', url, { secret: t.secret, workspaceId: other.workspace.id });
      assert.equal(foreign.json().code, 'FORBIDDEN_WORKSPACE');
      const noWrite = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { scopes: SCOPES.filter((s) => s !== 'media:write') });
      assert.equal((await call(ctx, 'GET', url, { secret: noWrite.secret, workspaceId: t.workspace.id })).statusCode, 200, 'reading needs media:read only');
    });
  }

  test('signedMediaUrl: the same (media, signing time) gives the byte-identical URL; expiresAt = signing time + TTL', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const item = await getMediaItem(ctx.deps, t.workspace.id, (await uploaded(ctx, t, await png())).id);
    const at = ctx.clock.now() - 12_345;
    const a = await signedMediaUrl(ctx.deps, item, at);
    const b = await signedMediaUrl(ctx.deps, { id: item.id, workspaceId: item.workspaceId }, at);
    assert.equal(a.url, b.url);
    assert.equal(a.expiresAt, at + 900_000);
    assert.notEqual((await signedMediaUrl(ctx.deps, item, at + 1)).url, a.url);
  });
});

describeEachDatabase(
  'media download [local, MEDIA_URL_TTL_S=60]',
  (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
    test('MEDIA_URL_TTL_S sets the lifetime of download URLs', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const item = await uploaded(ctx, t, await png());
      const { url, expiresAt } = await downloadOf(ctx, t, item.id);
      assert.equal(expiresAt, new Date(ctx.clock.now() + 60_000).toISOString());
      ctx.clock.advance(59_999);
      assert.equal((await fetchLocal(ctx, url)).statusCode, 200);
      ctx.clock.advance(1);
      assert.equal((await fetchLocal(ctx, url)).statusCode, 403);
    });
  },
  { env: { MEDIA_URL_TTL_S: '60' } },
);

describeEachDatabase(
  'media download [s3]',
  (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
    test('download returns a presigned URL of the bucket that serves the exact bytes with Content-Type and Content-Length, without an API key', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const bytes = await png(40, 40);
      const item = await uploaded(ctx, t, bytes);
      const { url, expiresAt } = await downloadOf(ctx, t, item.id);
      assert.ok(url.startsWith(`${s3.endpoint}/media-test/tenants/${t.workspace.id}/${item.id}?`), url);
      assert.equal(expiresAt, new Date(ctx.clock.now() + 900_000).toISOString());
      const res = await fetch(url);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'image/png');
      assert.equal(res.headers.get('content-length'), String(bytes.length));
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes);
    });

    test('the presigned URL supports Range requests', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const bytes = wav(2000);
      const item = await uploaded(ctx, t, bytes, 'audio/wav');
      const { url } = await downloadOf(ctx, t, item.id);
      const res = await fetch(url, { headers: { range: 'bytes=4-19' } });
      assert.equal(res.status, 206);
      assert.equal(res.headers.get('content-range'), `bytes 4-19/${bytes.length}`);
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes.subarray(4, 20));
    });

    test('the presigned URL is refused (403) when any part of it is altered, or with no signature at all', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const item = await uploaded(ctx, t, await png());
      const sibling = await uploaded(ctx, t, await png(5, 5));
      const { url } = await downloadOf(ctx, t, item.id);
      const u = new URL(url);
      const signature = u.searchParams.get('X-Amz-Signature')!;
      const expiresIn = u.searchParams.get('X-Amz-Expires')!;
      const altered = [
        url.replace(item.id, sibling.id),
        url.replace(`X-Amz-Expires=${expiresIn}`, `X-Amz-Expires=${Number(expiresIn) + 1}`),
        url.replace(`X-Amz-Signature=${signature}`, `X-Amz-Signature=${signature.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'))}`),
        url.replace(/X-Amz-Date=\d{8}T\d{6}Z/, (m) => m.replace(/\d{2}Z$/, (s) => `${String((Number(s.slice(0, 2)) + 1) % 60).padStart(2, '0')}Z`)),
        `${u.origin}${u.pathname}`,
      ];
      for (const candidate of altered) {
        assert.notEqual(candidate, url);
        const res = await fetch(candidate);
        assert.equal(res.status, 403, candidate);
        await res.arrayBuffer();
      }
      assert.equal((await fetch(url)).status, 200, 'the URL as issued still works');
    });

    test('the presigned URL is refused (403) after it expires', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const item = await getMediaItem(ctx.deps, t.workspace.id, (await uploaded(ctx, t, await png())).id);
      const stale = await signedMediaUrl(ctx.deps, item, Date.now() - 900_000 - 5_000);
      assert.ok(stale.expiresAt < Date.now());
      const res = await fetch(stale.url);
      assert.equal(res.status, 403);
      const fresh = await signedMediaUrl(ctx.deps, item, Date.now() - 900_000 + 30_000);
      assert.equal((await fetch(fresh.url)).status, 200, 'one still inside its lifetime works');
    });

    test('signedMediaUrl on S3: the same (media, signing time) gives the byte-identical URL', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const item = await getMediaItem(ctx.deps, t.workspace.id, (await uploaded(ctx, t, await png())).id);
      const at = Date.now() - 1_234;
      const a = await signedMediaUrl(ctx.deps, item, at);
      const b = await signedMediaUrl(ctx.deps, { id: item.id, workspaceId: item.workspaceId }, at);
      assert.equal(a.url, b.url);
      assert.equal(a.expiresAt, at + 900_000);
    });
  },
  backendOptions('s3', s3),
);
