/**
 * POST /v1/media/upload, GET /v1/media and GET /v1/media/{id} on every database and on both
 * storage backends (local files and S3-compatible): uploads with real files, every hostile upload
 * with its documented 4xx and nothing left behind, size limit and storage quota, and workspace
 * isolation.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, describeEachDatabase, type TestContext } from '../support/harness.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { createWorkspace } from '../../src/modules/accounts/service.js';
import { newId } from '../../src/lib/ids.js';
import { storageKeyFor } from '../../src/modules/media/blob-store.js';
import { MEDIA_PLAN_LIMITS } from '../../src/modules/media/limits.js';
import * as mediaStore from '../../src/modules/media/store.js';
import { checkRefusals } from '../support/openapi-responses.js';
import { assertError } from '../support/assertions.js';
import {
  backendOptions,
  ELF,
  footprint,
  glb,
  jpeg,
  multipartBuffer,
  pixelBombPng,
  png,
  sha256,
  startTestS3,
  SVG,
  upload,
  uploadForm,
  wav,
  wavHeader,
  withJpegComment,
  zipArchive,
  type BackendName,
} from '../support/media.js';

const s3 = await startTestS3();
after(() => s3.close());

/** The shared error-envelope assertion, and the refusal's `details.reason` when given. */
function assertRefused(res: Parameters<typeof assertError>[0], status: number, code: string, reason?: string) {
  const body = assertError(res, status, code);
  if (reason) assert.equal(body.details?.reason, reason, JSON.stringify(body));
}

async function readBlob(ctx: TestContext, workspaceId: string, mediaId: string): Promise<Buffer> {
  const stream = await ctx.deps.blobs.read(storageKeyFor(workspaceId, mediaId));
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Fills the workspace's storage with a (blob-less) row so that only `free` bytes remain. */
async function fillQuota(ctx: TestContext, t: Tenant, free: number): Promise<void> {
  const quota = MEDIA_PLAN_LIMITS[t.workspace.plan].storageQuotaBytes;
  const id = newId();
  await mediaStore.insertMedia(ctx.deps.db, {
    id,
    workspaceId: t.workspace.id,
    name: 'filler.bin',
    mimeType: 'video/mp4',
    sizeBytes: quota - free,
    sha256: '0'.repeat(64),
    kind: 'video',
    createdAt: ctx.clock.now(),
    storageKey: storageKeyFor(t.workspace.id, id),
    jobId: null,
  });
}

function uploadSuite(backend: BackendName) {
  describeEachDatabase(
    `media upload and library [${backend}]`,
    (get) => {
    // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
    before(() => checkRefusals(get().app));
      test('upload stores the exact bytes and returns the Media item with sha256 and a null downloadUrl', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const bytes = await png(32, 24);
        const res = await upload(ctx, t, bytes, { filename: 'cat.png' });
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json();
        assert.equal(body.success, true);
        assert.equal(body.code, 'PUBLIC_MEDIA_UPLOAD');
        const item = body.data;
        assert.match(item.id, /^[0-9a-f-]{36}$/);
        assert.deepEqual(
          { ...item, id: undefined },
          {
            id: undefined,
            workspaceId: t.workspace.id,
            livemode: true,
            name: 'cat.png',
            mimeType: 'image/png',
            sizeBytes: bytes.length,
            sha256: sha256(bytes),
            createdAt: new Date(ctx.clock.now()).toISOString(),
            downloadUrl: null,
          },
        );
        assert.deepEqual(await readBlob(ctx, t.workspace.id, item.id), bytes);
        assert.deepEqual(await footprint(ctx, t.workspace.id), { rows: 1, events: 1, usedBytes: bytes.length, blobs: 1, staged: 0 });
      });

      test('upload writes a media.created event holding the item', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const res = await upload(ctx, t, wav(), { type: 'audio/wav', filename: 'tone.wav' });
        assert.equal(res.statusCode, 200, res.body);
        const event = await ctx.deps.db.selectFrom('events').selectAll().where('workspace_id', '=', t.workspace.id).executeTakeFirstOrThrow();
        assert.equal(event.type, 'media.created');
        assert.deepEqual(JSON.parse(event.data_json), { media: res.json().data });
      });

      test('upload accepts audio and 3D files and stores the canonical MIME type of an alias', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const w = await upload(ctx, t, wav(), { type: 'audio/x-wav', filename: 'a.wav' });
        assert.equal(w.statusCode, 200, w.body);
        assert.equal(w.json().data.mimeType, 'audio/wav');
        const g = await upload(ctx, t, glb(), { type: 'model/gltf-binary', filename: 'm.glb' });
        assert.equal(g.statusCode, 200, g.body);
        assert.equal(g.json().data.mimeType, 'model/gltf-binary');
        const j = await upload(ctx, t, await jpeg(), { type: 'image/jpg', filename: 'p.jpg' });
        assert.equal(j.json().data.mimeType, 'image/jpeg');
      });

      test('name is the uploaded filename stripped of path and control characters', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const cases: [string, string][] = [
          ['../../etc/pass\u0000wd.png', 'passwd.png'],
          ['C:\\Windows\\sys\u0007tem\u202e.png', 'system.png'],
          ['dir/sub/x\ty.png', 'xy.png'],
          ['/', 'media.png'],
        ];
        for (const [filename, expected] of cases) {
          const res = await upload(ctx, t, await png(), { filename });
          assert.equal(res.statusCode, 200, res.body);
          assert.equal(res.json().data.name, expected, JSON.stringify(filename));
        }
      });

      test('GET /v1/media/{id} reads the item; an unknown id is 404 and a malformed id 400', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const up = (await upload(ctx, t, await png())).json().data;
        const res = await call(ctx, 'GET', `/v1/media/${up.id}`, { secret: t.secret, workspaceId: t.workspace.id });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().code, 'PUBLIC_MEDIA_GET');
        assert.deepEqual(res.json().data, up);
        assertError(await call(ctx, 'GET', `/v1/media/${newId()}`, { secret: t.secret, workspaceId: t.workspace.id }), 404, 'NOT_FOUND');
        assertError(await call(ctx, 'GET', '/v1/media/not-a-uuid', { secret: t.secret, workspaceId: t.workspace.id }), 400, 'INVALID_REQUEST');
      });

      test('GET /v1/media pages the library newest first with opaque cursors', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) {
          ctx.clock.advance(1000);
          ids.push((await upload(ctx, t, await png(8 + i, 8))).json().data.id);
        }
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 3; page++) {
          const res = await call(ctx, 'GET', '/v1/media', { secret: t.secret, workspaceId: t.workspace.id, query: { limit: '2', ...(cursor ? { cursor } : {}) } });
          assert.equal(res.statusCode, 200, res.body);
          const data = res.json().data;
          seen.push(...data.items.map((m: { id: string }) => m.id));
          cursor = data.nextCursor ?? undefined;
          if (page < 2) assert.ok(cursor, 'more pages');
        }
        assert.equal(cursor, undefined);
        assert.deepEqual(seen, [...ids].reverse());
        const other = await seedTenant(ctx.deps);
        const foreign = await call(ctx, 'GET', '/v1/media', { secret: t.secret, workspaceId: t.workspace.id, query: { limit: '2' } });
        const res = await call(ctx, 'GET', '/v1/media', { secret: other.secret, workspaceId: other.workspace.id, query: { cursor: foreign.json().data.nextCursor } });
        assertError(res, 400, 'INVALID_CURSOR');
      });

      // Hostile uploads: each gets its documented 4xx and leaves nothing behind (no row, blob,
      // staged file, event or quota use).
      const hostile: [string, () => Promise<{ bytes: Buffer; type?: string; filename?: string }>, number, string, string?][] = [
        ['a declared type that does not match the content', async () => ({ bytes: await png(), type: 'image/jpeg' }), 400, 'UNSUPPORTED_MEDIA', 'TYPE_MISMATCH'],
        ['a truncated file', async () => ({ bytes: (await png(64, 64)).subarray(0, 60) }), 400, 'UNSUPPORTED_MEDIA', 'MALFORMED'],
        ['a PNG/ZIP polyglot', async () => ({ bytes: Buffer.concat([await png(), zipArchive()]) }), 400, 'UNSUPPORTED_MEDIA', 'TRAILING_DATA'],
        ['a JPEG/HTML polyglot', async () => ({ bytes: withJpegComment(await jpeg(), '<script>alert(1)</script>'), type: 'image/jpeg' }), 400, 'UNSUPPORTED_MEDIA', 'EMBEDDED_MARKUP'],
        ['zero bytes', async () => ({ bytes: Buffer.alloc(0) }), 400, 'UNSUPPORTED_MEDIA', 'EMPTY'],
        ['a pixel bomb', async () => ({ bytes: pixelBombPng(20_000) }), 400, 'UNSUPPORTED_MEDIA', 'PIXEL_LIMIT'],
        ['an SVG', async () => ({ bytes: SVG, type: 'image/svg+xml', filename: 'x.svg' }), 400, 'UNSUPPORTED_MEDIA', 'SVG_NOT_ALLOWED'],
        ['an executable', async () => ({ bytes: ELF, type: 'application/octet-stream', filename: 'a.out' }), 400, 'UNSUPPORTED_MEDIA', 'EXECUTABLE'],
        ['a filename of path separators and control characters with bad content', async () => ({ bytes: SVG, filename: '../../\u0000x.png' }), 400, 'UNSUPPORTED_MEDIA', 'SVG_NOT_ALLOWED'],
      ];
      for (const [name, make, status, code, reason] of hostile) {
        test(`hostile upload, ${name}: ${status} ${code}${reason ? ` (${reason})` : ''} and nothing left behind`, async () => {
          const ctx = get();
          const t = await seedTenant(ctx.deps);
          const { bytes, type, filename } = await make();
          assertRefused(await upload(ctx, t, bytes, { type: type ?? 'image/png', filename: filename ?? 'x.png' }), status, code, reason);
          assert.deepEqual(await footprint(ctx, t.workspace.id), { rows: 0, events: 0, usedBytes: 0, blobs: 0, staged: 0 });
        });
      }

      test('hostile upload, missing file part (only a field, or a file under another name, or no part): 400 INVALID_REQUEST, nothing left behind', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const onlyField = new FormData();
        onlyField.append('note', 'hello');
        const wrongName = new FormData();
        wrongName.append('upload', new Blob([await png()], { type: 'image/png' }), 'x.png');
        for (const body of [onlyField, wrongName, new FormData()]) {
          assertError(await call(ctx, 'POST', '/v1/media/upload', { secret: t.secret, workspaceId: t.workspace.id, body }), 400, 'INVALID_REQUEST');
        }
        assertError(await call(ctx, 'POST', '/v1/media/upload', { secret: t.secret, workspaceId: t.workspace.id, body: { file: 'x' } }), 400, 'INVALID_REQUEST');
        assert.deepEqual(await footprint(ctx, t.workspace.id), { rows: 0, events: 0, usedBytes: 0, blobs: 0, staged: 0 });
      });

      test('hostile upload, two file parts or a file plus a field: 400 INVALID_REQUEST, nothing left behind', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const bytes = await png();
        const twoFiles = (form: FormData) => form.append('file', new Blob([bytes], { type: 'image/png' }), 'second.png');
        const plusField = (form: FormData) => form.append('name', 'x');
        for (const extra of [twoFiles, plusField]) {
          assertError(await upload(ctx, t, bytes, { extra }), 400, 'INVALID_REQUEST');
        }
        assert.deepEqual(await footprint(ctx, t.workspace.id), { rows: 0, events: 0, usedBytes: 0, blobs: 0, staged: 0 });
      });

      test('hostile upload, oversize while streaming (plan maximum + 1 byte): 413 PAYLOAD_TOO_LARGE, nothing left behind', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps, { plan: 'free' });
        const max = MEDIA_PLAN_LIMITS.free.maxUploadBytes;
        const header = await png();
        const big = Buffer.concat([header, Buffer.alloc(max + 1 - header.length)]);
        assertError(await upload(ctx, t, big), 413, 'PAYLOAD_TOO_LARGE');
        assert.deepEqual(await footprint(ctx, t.workspace.id), { rows: 0, events: 0, usedBytes: 0, blobs: 0, staged: 0 });
      });

      test('hostile upload, Content-Length over the plan maximum: 413 PAYLOAD_TOO_LARGE before the body is read', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps, { plan: 'free' });
        const { body, contentType } = multipartBuffer(Buffer.alloc(MEDIA_PLAN_LIMITS.free.maxUploadBytes + 1024 * 1024));
        const res = await ctx.app.inject({
          method: 'POST',
          url: '/v1/media/upload',
          headers: { authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id, 'content-type': contentType },
          payload: body,
        });
        assertError(res, 413, 'PAYLOAD_TOO_LARGE');
        // The rest of the body (within the unread-body bound of 64 MiB) is read and discarded before
        // the answer, so the connection stays usable (src/http/unread-body.ts; issue 32, item 2).
        assert.notEqual(res.headers.connection, 'close');
        assert.deepEqual(await footprint(ctx, t.workspace.id), { rows: 0, events: 0, usedBytes: 0, blobs: 0, staged: 0 });
      });

      test('an upload of exactly the plan maximum is accepted', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps, { plan: 'free' });
        const max = MEDIA_PLAN_LIMITS.free.maxUploadBytes;
        const bytes = Buffer.concat([wavHeader(max - 44), Buffer.alloc(max - 44)]);
        const res = await upload(ctx, t, bytes, { type: 'audio/wav', filename: 'max.wav' });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().data.sizeBytes, max);
      });

      test('storage quota: an upload that would exceed it is 413 STORAGE_QUOTA_EXCEEDED and leaves nothing; one that fits passes', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps, { plan: 'free' });
        const bytes = await png(1, 1);
        await fillQuota(ctx, t, bytes.length - 1);
        const before = await footprint(ctx, t.workspace.id);
        const res = await upload(ctx, t, bytes);
        assertError(res, 413, 'STORAGE_QUOTA_EXCEEDED');
        assert.equal(res.json().details.quotaBytes, MEDIA_PLAN_LIMITS.free.storageQuotaBytes);
        assert.deepEqual(await footprint(ctx, t.workspace.id), before);

        const roomy = await seedTenant(ctx.deps, { plan: 'free' });
        await fillQuota(ctx, roomy, bytes.length);
        const ok = await upload(ctx, roomy, bytes);
        assert.equal(ok.statusCode, 200, ok.body);
      });

      test('storage quota holds under concurrent uploads: of two that each fit but not together, exactly one is stored', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps, { plan: 'free' });
        const bytes = await png(1, 1);
        await fillQuota(ctx, t, bytes.length + 10);
        const before = await footprint(ctx, t.workspace.id);
        const results = await Promise.all([upload(ctx, t, bytes), upload(ctx, t, bytes), upload(ctx, t, bytes)]);
        const statuses = results.map((r) => r.statusCode).sort();
        assert.deepEqual(statuses, [200, 413, 413], results.map((r) => r.body).join('\n'));
        const afterwards = await footprint(ctx, t.workspace.id);
        assert.deepEqual(afterwards, { ...before, rows: before.rows + 1, events: 1, usedBytes: before.usedBytes + bytes.length, blobs: 1, staged: 0 });
      });

      test('isolation: another workspace\'s media id is 404 whatever the header, and lists show only the selected workspace', async () => {
        const ctx = get();
        const a = await seedTenant(ctx.deps);
        const b = await seedTenant(ctx.deps);
        const mine = (await upload(ctx, a, await png())).json().data;
        const theirs = (await upload(ctx, b, await png(9, 9))).json().data;
        for (const path of [`/v1/media/${theirs.id}`, `/v1/media/${theirs.id}/download`, `/v1/media/${theirs.id.toUpperCase()}`]) {
          assertError(await call(ctx, 'GET', path, { secret: a.secret, workspaceId: a.workspace.id }), 404, 'NOT_FOUND');
        }
        assertError(await call(ctx, 'GET', `/v1/media/${theirs.id}`, { secret: a.secret, workspaceId: b.workspace.id }), 403, 'FORBIDDEN_WORKSPACE');
        const list = await call(ctx, 'GET', '/v1/media', { secret: a.secret, workspaceId: a.workspace.id });
        assert.deepEqual(
          list.json().data.items.map((m: { id: string }) => m.id),
          [mine.id],
        );
      });

      test('isolation: a key for two workspaces reads each one\'s media only when it selects that workspace', async () => {
        const ctx = get();
        const a = await seedTenant(ctx.deps);
        const second = await createWorkspace(ctx.deps, { name: 'Second', plan: 'pro', ownerUserId: a.user.id });
        const key = await seedKey(ctx.deps, a.user.id, [a.workspace.id, second.id]);
        const inSecond = await call(ctx, 'POST', '/v1/media/upload', { secret: key.secret, workspaceId: second.id, body: uploadForm(await png()) });
        assert.equal(inSecond.statusCode, 200, inSecond.body);
        const id = inSecond.json().data.id;
        assert.equal((await call(ctx, 'GET', `/v1/media/${id}`, { secret: key.secret, workspaceId: second.id })).statusCode, 200);
        assertError(await call(ctx, 'GET', `/v1/media/${id}`, { secret: key.secret, workspaceId: a.workspace.id }), 404, 'NOT_FOUND');
        assertError(await call(ctx, 'GET', `/v1/media/${id}/download`, { secret: key.secret, workspaceId: a.workspace.id }), 404, 'NOT_FOUND');
      });
    },
    backendOptions(backend, s3),
  );
}

uploadSuite('local');
uploadSuite('s3');
