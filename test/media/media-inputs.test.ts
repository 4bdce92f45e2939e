/**
 * Media as operation inputs and outputs, on every database and both storage backends:
 * checkMediaInputs (each referenced id exists in the workspace and has an accepted kind, else
 * INVALID_INPUT with JSON pointers), findMediaItems, and storeGeneratedMedia (blob first, then row
 * and media.created event in one transaction; nothing left if that fails).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, describeEachDatabase, type TestContext } from '../support/harness.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { isAppError } from '../../src/http/errors.js';
import { newId } from '../../src/lib/ids.js';
import { findOperation } from '../../src/operations/registry.js';
import type { MediaField } from '../../src/operations/contract.js';
import { checkMediaInputs, findMediaItems, storeGeneratedMedia } from '../../src/modules/media/service.js';
import { storageKeyFor } from '../../src/modules/media/blob-store.js';
import { backendOptions, footprint, glb, png, sha256, startTestS3, upload, wav, type BackendName } from '../support/media.js';
import { checkRefusals } from '../support/openapi-responses.js';

const s3 = await startTestS3();
after(() => s3.close());

async function uploadedId(ctx: TestContext, t: Tenant, bytes: Buffer, type: string): Promise<string> {
  const res = await upload(ctx, t, bytes, { type, filename: 'f' });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.id;
}

async function invalidInput(promise: Promise<unknown>): Promise<{ pointer: string; message: string }[]> {
  try {
    await promise;
  } catch (err) {
    assert.ok(isAppError(err), String(err));
    assert.equal(err.code, 'INVALID_INPUT');
    assert.equal(err.status, 400);
    return (err.details as { errors: { pointer: string; message: string }[] }).errors;
  }
  assert.fail('the input was accepted');
}

const IMAGES: MediaField = { field: 'referenceMediaIds', multiple: true, kinds: ['image'] };
const ONE_VIDEO: MediaField = { field: 'mediaId', multiple: false, kinds: ['video'] };

function inputsSuite(backend: BackendName) {
  describeEachDatabase(
    `media as operation inputs and outputs [${backend}]`,
    (get) => {
    // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
    before(() => checkRefusals(get().app));
      test('checkMediaInputs accepts ids of the workspace with an accepted kind, and absent optional fields', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const a = await uploadedId(ctx, t, await png(), 'image/png');
        const b = await uploadedId(ctx, t, await png(4, 4), 'image/png');
        await checkMediaInputs(ctx.deps, t.workspace.id, [IMAGES], { prompt: 'x', referenceMediaIds: [a, b] });
        await checkMediaInputs(ctx.deps, t.workspace.id, [IMAGES], { prompt: 'x' });
        await checkMediaInputs(ctx.deps, t.workspace.id, [IMAGES], { referenceMediaIds: [a.toUpperCase()] });
      });

      test('checkMediaInputs: an unknown id, another workspace\'s id and a wrong kind are INVALID_INPUT with one pointer each', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const other = await seedTenant(ctx.deps);
        const image = await uploadedId(ctx, t, await png(), 'image/png');
        const audio = await uploadedId(ctx, t, wav(), 'audio/wav');
        const foreign = await uploadedId(ctx, other, await png(), 'image/png');
        const errors = await invalidInput(
          checkMediaInputs(ctx.deps, t.workspace.id, [IMAGES], { referenceMediaIds: [image, newId(), foreign, audio] }),
        );
        assert.deepEqual(
          errors.map((e) => e.pointer),
          ['/input/referenceMediaIds/1', '/input/referenceMediaIds/2', '/input/referenceMediaIds/3'],
        );
        assert.match(errors[0]!.message, /no media item/i);
        assert.equal(errors[1]!.message, errors[0]!.message, 'another workspace\'s id reads exactly like an unknown one');
        assert.match(errors[2]!.message, /expected image/i);
      });

      test('checkMediaInputs: a single-id field reports its own pointer', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const image = await uploadedId(ctx, t, await png(), 'image/png');
        const errors = await invalidInput(checkMediaInputs(ctx.deps, t.workspace.id, [ONE_VIDEO], { mediaId: image }));
        assert.deepEqual(errors.map((e) => e.pointer), ['/input/mediaId']);
        assert.match(errors[0]!.message, /expected video/i);
      });

      test('checkMediaInputs with the real operation contracts: background.remove needs an image, three-d.rig a GLB, voice.clone audio', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const image = await uploadedId(ctx, t, await png(), 'image/png');
        const model = await uploadedId(ctx, t, glb(), 'model/gltf-binary');
        const audio = await uploadedId(ctx, t, wav(), 'audio/wav');
        const fields = (id: string) => findOperation(id)!.mediaFields;
        await checkMediaInputs(ctx.deps, t.workspace.id, fields('background.remove'), { mediaId: image });
        await checkMediaInputs(ctx.deps, t.workspace.id, fields('three-d.rig'), { mediaId: model });
        await checkMediaInputs(ctx.deps, t.workspace.id, fields('voice.clone'), { referenceMediaIds: [audio], name: 'v' });
        assert.deepEqual((await invalidInput(checkMediaInputs(ctx.deps, t.workspace.id, fields('three-d.rig'), { mediaId: image }))).map((e) => e.pointer), ['/input/mediaId']);
        assert.deepEqual(
          (await invalidInput(checkMediaInputs(ctx.deps, t.workspace.id, fields('voice.clone'), { referenceMediaIds: [audio, image], name: 'v' }))).map((e) => e.pointer),
          ['/input/referenceMediaIds/1'],
        );
      });

      test('findMediaItems returns the workspace\'s items in the order asked, skipping unknown, foreign and malformed ids', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const other = await seedTenant(ctx.deps);
        const a = await uploadedId(ctx, t, await png(), 'image/png');
        const b = await uploadedId(ctx, t, wav(), 'audio/wav');
        const foreign = await uploadedId(ctx, other, await png(), 'image/png');
        const items = await findMediaItems(ctx.deps, t.workspace.id, [b, newId(), foreign, 'nope', a, b]);
        assert.deepEqual(
          items.map((m) => [m.id, m.kind, m.workspaceId]),
          [
            [b, 'audio', t.workspace.id],
            [a, 'image', t.workspace.id],
          ],
        );
      });

      test('storeGeneratedMedia stores a job result: blob, row and a media.created event naming the job', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const bytes = await png(20, 20);
        const jobId = newId();
        const item = await storeGeneratedMedia(ctx.deps, { workspaceId: t.workspace.id, jobId, name: 'render/../out\u0000.png', mimeType: 'image/png', bytes });
        assert.deepEqual(
          { name: item.name, mimeType: item.mimeType, sizeBytes: item.sizeBytes, sha256: item.sha256, kind: item.kind, workspaceId: item.workspaceId },
          { name: 'out.png', mimeType: 'image/png', sizeBytes: bytes.length, sha256: sha256(bytes), kind: 'image', workspaceId: t.workspace.id },
        );
        const stream = await ctx.deps.blobs.read(storageKeyFor(t.workspace.id, item.id));
        const chunks: Buffer[] = [];
        for await (const c of stream) chunks.push(c as Buffer);
        assert.deepEqual(Buffer.concat(chunks), bytes);
        const event = await ctx.deps.db.selectFrom('events').selectAll().where('workspace_id', '=', t.workspace.id).executeTakeFirstOrThrow();
        assert.equal(event.type, 'media.created');
        const data = JSON.parse(event.data_json);
        assert.equal(data.jobId, jobId);
        assert.equal(data.media.id, item.id);
        const read = await call(ctx, 'GET', `/v1/media/${item.id}`, { secret: t.secret, workspaceId: t.workspace.id });
        assert.equal(read.statusCode, 200);
        assert.equal(read.json().data.sha256, sha256(bytes));
        const row = await ctx.deps.db.selectFrom('media').select('job_id').where('id', '=', item.id).executeTakeFirstOrThrow();
        assert.equal(row.job_id, jobId);
      });

      test('storeGeneratedMedia: a result becomes a valid input of the next operation', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const item = await storeGeneratedMedia(ctx.deps, { workspaceId: t.workspace.id, jobId: newId(), name: '', mimeType: 'model/gltf-binary', bytes: glb() });
        assert.equal(item.kind, 'model');
        assert.equal(item.name, 'media.glb', 'a result without a usable name gets one from its type');
        await checkMediaInputs(ctx.deps, t.workspace.id, findOperation('three-d.rig')!.mediaFields, { mediaId: item.id });
      });

      test('storeGeneratedMedia: when the row cannot be written, the blob is removed again', async () => {
        const ctx = get();
        const t = await seedTenant(ctx.deps);
        const missingWorkspace = newId();
        await assert.rejects(storeGeneratedMedia(ctx.deps, { workspaceId: missingWorkspace, jobId: newId(), name: 'x.png', mimeType: 'image/png', bytes: await png() }));
        assert.deepEqual(await ctx.deps.blobs.listKeys(`${missingWorkspace}/`), []);
        assert.deepEqual(await footprint(ctx, t.workspace.id), { rows: 0, events: 0, usedBytes: 0, blobs: 0, staged: 0 });
      });
    },
    backendOptions(backend, s3),
  );
}

inputsSuite('local');
inputsSuite('s3');
