/**
 * sprite.generate on the `sprites` local engine (issue 15): frames drawn one per checkpointed step
 * (by an openai provider of the file: test/support/fake-openai.ts, or a replicate one), packed with sharp
 * into an atlas (maxrects-packer), horizontal strips and the engine exports. Each export is parsed
 * as its engine would read it (Phaser 3 atlas JSON, Godot 4 SpriteFrames .tres, TexturePacker
 * JSON, generic JSON) and every region it names is checked against the atlas: inside it, apart
 * from the others by the padding, and holding exactly its frame's pixels.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { compileStrict } from '../../src/http/validation.js';
import { findOperation } from '../../src/operations/registry.js';
import { drawingSize } from '../../src/providers/local/sprite-draw-remote.js';
import { imageRulesFor } from '../../src/providers/openai-models.js';
import { makePng } from '../../src/providers/sim-files.js';
import { call, createTestContext, disposeTestContext, type TestContext } from '../support/harness.js';
import { testDatabaseNames } from '../support/databases.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { balance, drain, getJob, readCompleteOutput, run } from '../support/jobs.js';
import { FakeOpenAi } from '../support/fake-openai.js';
import { FakeReplicate } from '../support/fake-replicate.js';
import { writeProvidersFile } from '../support/providers-file.js';
import { JobWorker } from '../../src/worker/job-worker.js';
import { claimJobs } from '../../src/worker/job-claim.js';
import { executeJob } from '../../src/modules/jobs/executor.js';

const PRICE = { perRunMillicents: 700, perFrameMillicents: 250 };
const CREDITS = 1_000_000;

interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

interface FileRef {
  mediaId: string;
  name: string;
  mimeType: string;
  url: string;
}

interface SpriteResult {
  frames: FileRef[];
  atlas: FileRef;
  strips: FileRef[];
  exports: Record<string, { format: string; fileName: string; imageFileName: string; content: any; frames: { index: number; x: number; y: number; width: number; height: number }[] }>;
  provider: string;
  model: string | null;
  frameMode?: string;
}

async function rawPixels(png: Buffer, region?: Rect): Promise<{ data: Buffer; width: number; height: number }> {
  let image = sharp(png);
  if (region) image = image.extract({ left: region.x, top: region.y, width: region.w, height: region.h });
  const { data, info } = await image.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** The regions a Phaser 3 atlas JSON names, in animation order, and the atlas size it states. */
function phaserRegions(json: any): { rects: Rect[]; size: { w: number; h: number }; image: string } {
  const texture = json.textures[0];
  const byName = new Map<string, Rect>(texture.frames.map((f: any) => [f.filename, f.frame]));
  for (const f of texture.frames) {
    assert.equal(f.rotated, false);
    assert.equal(f.trimmed, false);
    assert.deepEqual(f.spriteSourceSize, { x: 0, y: 0, w: f.frame.w, h: f.frame.h });
    assert.deepEqual(f.sourceSize, { w: f.frame.w, h: f.frame.h });
  }
  // The animation plays the atlas frames in order.
  const anim = json.anims[0];
  assert.equal(anim.repeat, -1);
  assert.ok(anim.frameRate > 0);
  const rects = anim.frames.map((f: any) => {
    const rect = byName.get(f.frame);
    assert.ok(rect, `anims names frame ${f.frame} of the atlas`);
    return rect!;
  });
  assert.equal(rects.length, texture.frames.length);
  return { rects, size: texture.size, image: texture.image };
}

/** A Godot 4 text resource: sections, their attributes and their properties. */
function parseTres(text: string) {
  const sections: { tag: string; attrs: Record<string, string>; props: Record<string, string> }[] = [];
  let current: (typeof sections)[number] | undefined;
  let pendingKey: string | undefined;
  for (const line of text.split('\n')) {
    const header = /^\[(\w+)((?:\s+\w+=(?:"[^"]*"|\S+?))*)\]$/.exec(line);
    if (header) {
      const attrs: Record<string, string> = {};
      for (const m of header[2]!.matchAll(/(\w+)=("([^"]*)"|[^\s\]]+)/g)) attrs[m[1]!] = m[3] ?? m[2]!;
      current = { tag: header[1]!, attrs, props: {} };
      sections.push(current);
      pendingKey = undefined;
      continue;
    }
    const prop = /^(\w+) = (.*)$/.exec(line);
    if (prop && current) {
      current.props[prop[1]!] = prop[2]!;
      pendingKey = prop[1]!;
    } else if (pendingKey && current && line !== '') current.props[pendingKey] += `\n${line}`;
  }
  return sections;
}

function godotRegions(text: string): { rects: Rect[]; image: string } {
  const sections = parseTres(text);
  const head = sections[0]!;
  assert.equal(head.tag, 'gd_resource');
  assert.equal(head.attrs.type, 'SpriteFrames');
  assert.equal(head.attrs.format, '3');
  const ext = sections.filter((s) => s.tag === 'ext_resource');
  const subs = sections.filter((s) => s.tag === 'sub_resource');
  assert.equal(Number(head.attrs.load_steps), ext.length + subs.length + 1, 'load_steps counts every resource');
  assert.equal(ext.length, 1);
  assert.equal(ext[0]!.attrs.type, 'Texture2D');
  const byId = new Map<string, Rect>();
  for (const sub of subs) {
    assert.equal(sub.attrs.type, 'AtlasTexture');
    assert.equal(sub.props.atlas, `ExtResource("${ext[0]!.attrs.id}")`);
    const m = /^Rect2\((\d+), (\d+), (\d+), (\d+)\)$/.exec(sub.props.region ?? '');
    assert.ok(m, `region of ${sub.attrs.id}: ${sub.props.region}`);
    byId.set(sub.attrs.id!, { x: Number(m[1]), y: Number(m[2]), w: Number(m[3]), h: Number(m[4]) });
  }
  const resource = sections.find((s) => s.tag === 'resource')!;
  const animations = resource.props.animations!;
  assert.match(animations, /"loop": true/);
  assert.match(animations, /"name": &"default"/);
  assert.match(animations, /"speed": \d+\.\d+/);
  const rects = [...animations.matchAll(/SubResource\("([^"]+)"\)/g)].map((m) => {
    const rect = byId.get(m[1]!);
    assert.ok(rect, `animation frame ${m[1]} is an AtlasTexture`);
    return rect!;
  });
  return { rects, image: ext[0]!.attrs.path! };
}

function texturePackerRegions(json: any, count: number): { rects: Rect[]; size: { w: number; h: number }; image: string } {
  assert.equal(Object.keys(json.frames).length, count);
  const rects = Array.from({ length: count }, (_, i) => {
    const entry = json.frames[`frame-${String(i + 1).padStart(3, '0')}.png`];
    assert.ok(entry, `frame ${i + 1} is in the TexturePacker hash`);
    assert.equal(entry.rotated, false);
    assert.equal(entry.trimmed, false);
    assert.deepEqual(entry.sourceSize, { w: entry.frame.w, h: entry.frame.h });
    assert.deepEqual(entry.pivot, { x: 0.5, y: 0.5 });
    return entry.frame as Rect;
  });
  return { rects, size: json.meta.size, image: json.meta.image };
}

function genericRegions(json: any): { rects: Rect[]; size: { w: number; h: number }; image: string } {
  const rects = json.frames.map((f: any, i: number) => {
    assert.equal(f.index, i);
    return { x: f.x, y: f.y, w: f.width, h: f.height };
  });
  return { rects, size: { w: json.width, h: json.height }, image: json.image };
}

/** Two rectangles are at least `gap` pixels apart along x or along y. */
function apart(a: Rect, b: Rect, gap: number): boolean {
  return a.x + a.w + gap <= b.x || b.x + b.w + gap <= a.x || a.y + a.h + gap <= b.y || b.y + b.h + gap <= a.y;
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}

test('drawing sizes: OpenAI image models get the fixed size closest in shape; other models the frame shape scaled into 256..2048 in multiples of 64', () => {
  // The sizes each model takes come from its adapter (openai: openai-models.ts; none for others).
  const sizesOf = (model: string) => imageRulesFor(model).sizes;
  assert.deepEqual(drawingSize(sizesOf('gpt-image-1'), 64, 64), { width: 1024, height: 1024 });
  assert.deepEqual(drawingSize(sizesOf('gpt-image-1'), 128, 64), { width: 1536, height: 1024 });
  assert.deepEqual(drawingSize(sizesOf('dall-e-3'), 32, 96), { width: 1024, height: 1792 });
  assert.deepEqual(drawingSize(sizesOf('dall-e-2'), 64, 48), { width: 256, height: 256 });
  assert.deepEqual(drawingSize(sizesOf('dall-e-2'), 300, 100), { width: 512, height: 512 });
  assert.deepEqual(drawingSize(sizesOf('sdxl-turbo'), 64, 32), { width: 512, height: 256 });
  assert.deepEqual(drawingSize(undefined, 48, 48), { width: 256, height: 256 });
  assert.deepEqual(drawingSize(undefined, 16, 512), { width: 256, height: 2048 });
});

for (const dbName of testDatabaseNames()) {
  describe(`sprites engine [${dbName}]`, () => {
    let dir: string;
    let fake: FakeOpenAi;
    let replicate: FakeReplicate;
    /**
     * sprite.generate on the sprites engine, frames drawn by a keyless OpenAI-compatible server on
     * this machine (the fake OpenAI): the packing and export tests. Frames drawn on the simulated
     * provider would be simulated work for a live key, which only SIMULATE_LIVE allows.
     */
    let local: TestContext;
    /** sprite.generate on the sprites engine, frames drawn by the fake OpenAI provider. */
    let drawn: TestContext;
    /** sprite.generate on the sprites engine, frames drawn as predictions of the fake Replicate. */
    let predicted: TestContext;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'was-sprites-'));
      fake = await FakeOpenAi.start();
      replicate = await FakeReplicate.start();
      const localFile = writeProvidersFile(dir, 'local.json', {
        providers: {
          engines: { type: 'local' },
          server: { type: 'openai', baseUrl: fake.baseUrl, privateNetwork: true, maxRetries: 0 },
        },
        operations: { 'sprite.generate': { provider: 'engines', engine: 'sprites', frames: 'server', model: 'dall-e-2', price: PRICE } },
      });
      const drawnFile = writeProvidersFile(dir, 'drawn.json', {
        providers: {
          engines: { type: 'local' },
          painter: { type: 'openai', baseUrl: fake.baseUrl, apiKeyEnv: 'PAINTER_KEY', privateNetwork: true, maxRetries: 0 },
        },
        operations: { 'sprite.generate': { provider: 'engines', engine: 'sprites', frames: 'painter', model: 'dall-e-2', price: PRICE } },
      });
      const predictedFile = writeProvidersFile(dir, 'predicted.json', {
        providers: {
          engines: { type: 'local' },
          painter: { type: 'replicate', baseUrl: replicate.baseUrl, apiKeyEnv: 'PAINTER_TOKEN', privateNetwork: true, maxRetries: 0 },
        },
        operations: {
          'sprite.generate': {
            provider: 'engines',
            engine: 'sprites',
            frames: 'painter',
            model: 'owner/pixel-sprites',
            input: { prompt: '{{prompt}}', width: '{{width}}', height: '{{height}}', num_outputs: '{{count}}', style: 'pixel art' },
            pollIntervalMs: 10,
            price: PRICE,
          },
        },
      });
      [local, drawn, predicted] = await Promise.all([
        createTestContext(dbName, { env: { PROVIDERS_FILE: localFile } }),
        createTestContext(dbName, { env: { PROVIDERS_FILE: drawnFile, PAINTER_KEY: 'sk-painter-0123456789' } }),
        createTestContext(dbName, { env: { PROVIDERS_FILE: predictedFile, PAINTER_TOKEN: 'r8-painter-0123456789' } }),
      ]);
    });

    after(async () => {
      await Promise.all([local, drawn, predicted].filter(Boolean).map((c) => disposeTestContext(c)));
      if (fake) await fake.close();
      if (replicate) await replicate.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    beforeEach(() => {
      fake.reset();
      replicate.reset();
    });

    async function download(ctx: TestContext, url: string): Promise<Buffer> {
      const u = new URL(url);
      const res = await ctx.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
      assert.equal(res.statusCode, 200, `download ${res.statusCode}`);
      return res.rawPayload;
    }

    /** Runs a sprite job to its end and returns the job and its complete result. */
    async function sprite(ctx: TestContext, t: Tenant, input: Record<string, unknown>) {
      const res = await run(ctx, t, 'sprite.generate', input);
      assert.equal(res.statusCode, 202, res.body);
      const jobId = res.json().data.jobId as string;
      await drain(ctx);
      return finished(ctx, t, jobId);
    }

    async function finished(ctx: TestContext, t: Tenant, jobId: string) {
      const job = await getJob(ctx, t, jobId);
      if (job.status !== 'completed') return { job, result: undefined };
      const result = JSON.parse((await readCompleteOutput(ctx, t, jobId)).bytes.toString('utf8')) as SpriteResult;
      const validate = compileStrict(findOperation('sprite.generate')!.resultSchema as object);
      assert.ok(validate(result), JSON.stringify(validate.errors));
      return { job, result };
    }

    /**
     * Every export parsed as its engine reads it: the same regions in frame order, each inside
     * the atlas, `padding` apart from the others, holding exactly its frame's pixels.
     */
    async function checkSprite(ctx: TestContext, result: SpriteResult, o: { frames: number; frameWidth: number; frameHeight: number; padding: number }) {
      const atlasPng = await download(ctx, result.atlas.url);
      assert.equal(result.atlas.mimeType, 'image/png');
      const atlas = await sharp(atlasPng).metadata();
      assert.equal(atlas.format, 'png');
      const frames = await Promise.all(result.frames.map((f) => download(ctx, f.url)));
      assert.equal(frames.length, o.frames);
      const framePixels = [];
      for (const [i, png] of frames.entries()) {
        assert.equal(result.frames[i]!.name, `frame-${String(i + 1).padStart(3, '0')}.png`);
        const meta = await sharp(png).metadata();
        assert.deepEqual([meta.format, meta.width, meta.height], ['png', o.frameWidth, o.frameHeight], `frame ${i + 1} is a PNG of the frame size`);
        framePixels.push((await rawPixels(png)).data);
      }
      // The frames differ from each other, so matching a region to its frame means something.
      for (let i = 1; i < framePixels.length; i++) assert.ok(!framePixels[i]!.equals(framePixels[i - 1]!), `frames ${i} and ${i + 1} differ`);

      const parsed = {
        phaser: phaserRegions(result.exports.phaser!.content),
        godot: { ...godotRegions(result.exports.godot!.content), size: { w: atlas.width!, h: atlas.height! } },
        unity: texturePackerRegions(result.exports.unity!.content, o.frames),
        generic: genericRegions(result.exports.generic!.content),
      };
      for (const [engine, { rects, size, image }] of Object.entries(parsed)) {
        const exp = result.exports[engine]!;
        assert.equal(exp.format, engine);
        assert.equal(image, exp.imageFileName, `${engine} references the atlas as imageFileName`);
        assert.equal(exp.imageFileName, result.atlas.name);
        assert.deepEqual(size, { w: atlas.width, h: atlas.height }, `${engine} states the atlas size`);
        assert.equal(rects.length, o.frames, `${engine} names every frame`);
        assert.deepEqual(rects, exp.frames.map((f) => ({ x: f.x, y: f.y, w: f.width, h: f.height })), `${engine} content matches its frame list`);
        assert.deepEqual(rects, parsed.generic.rects, `${engine} names the same regions as the generic export`);
        for (const [i, r] of rects.entries()) {
          assert.deepEqual([r.w, r.h], [o.frameWidth, o.frameHeight], `${engine} frame ${i + 1} has the frame size`);
          assert.ok(r.x >= 0 && r.y >= 0 && r.x + r.w <= atlas.width! && r.y + r.h <= atlas.height!, `${engine} frame ${i + 1} lies inside the atlas`);
          for (let j = i + 1; j < rects.length; j++) assert.ok(apart(r, rects[j]!, o.padding), `${engine} frames ${i + 1} and ${j + 1} are ${o.padding} px apart`);
        }
      }
      for (const [i, r] of parsed.generic.rects.entries()) {
        assert.ok((await rawPixels(atlasPng, r)).data.equals(framePixels[i]!), `the atlas region of frame ${i + 1} holds its pixels`);
      }
      return { atlas: { width: atlas.width!, height: atlas.height! }, framePixels };
    }

    test('every engine export (Phaser 3 JSON, Godot 4 .tres, TexturePacker JSON, generic JSON) names, for every frame, a region inside the atlas, apart from the others, holding exactly that frame file’s pixels', async () => {
      const t = await seedTenant(local.deps, { credits: CREDITS });
      const { job, result } = await sprite(local, t, { prompt: 'a rolling ball', frames: 6, frameWidth: 40, frameHeight: 24 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.deepEqual(Object.keys(result!.exports).sort(), ['generic', 'godot', 'phaser', 'unity']);
      assert.deepEqual(
        Object.fromEntries(Object.entries(result!.exports).map(([e, x]) => [e, x.fileName])),
        { godot: 'sprite.tres', unity: 'sprite.unity.json', phaser: 'sprite.phaser.json', generic: 'sprite.json' },
      );
      assert.equal(result!.provider, 'engines');
      await checkSprite(local, result!, { frames: 6, frameWidth: 40, frameHeight: 24, padding: 2 });
      await assertLedgerInvariants(local.deps, t.workspace.id);
    });

    test('the engines input limits the exports to those asked for', async () => {
      const t = await seedTenant(local.deps, { credits: CREDITS });
      const { result } = await sprite(local, t, { prompt: 'a spinning coin', frames: 2, frameWidth: 16, frameHeight: 16, engines: ['godot', 'generic'] });
      assert.deepEqual(Object.keys(result!.exports).sort(), ['generic', 'godot']);
      await assertLedgerInvariants(local.deps, t.workspace.id);
    });

    test('powerOfTwo gives an atlas whose width and height are powers of two, and frames stay at least `padding` pixels apart', async () => {
      const t = await seedTenant(local.deps, { credits: CREDITS });
      const input = { prompt: 'a bat flapping', frames: 5, frameWidth: 30, frameHeight: 20, padding: 7, powerOfTwo: true };
      const { result } = await sprite(local, t, input);
      const { atlas } = await checkSprite(local, result!, { frames: 5, frameWidth: 30, frameHeight: 20, padding: 7 });
      assert.ok(isPowerOfTwo(atlas.width) && isPowerOfTwo(atlas.height), `${atlas.width}×${atlas.height}`);
      assert.equal(result!.exports.generic!.content.padding, 7);
      assert.equal(result!.exports.generic!.content.powerOfTwo, true);

      // Without it the atlas is as small as the packing allows; padding 0 packs frames edge to edge.
      const tight = await sprite(local, t, { prompt: 'a bat flapping', frames: 4, frameWidth: 30, frameHeight: 20, padding: 0 });
      const packed = await checkSprite(local, tight.result!, { frames: 4, frameWidth: 30, frameHeight: 20, padding: 0 });
      assert.equal(packed.atlas.width * packed.atlas.height, 4 * 30 * 20, 'four frames without padding fill the atlas');
      await assertLedgerInvariants(local.deps, t.workspace.id);
    });

    test('strips hold the frames side by side in order, split so that no strip is wider than 4096 pixels', async () => {
      const t = await seedTenant(local.deps, { credits: CREDITS });
      const { result } = await sprite(local, t, { prompt: 'a long worm', frames: 19, frameWidth: 512, frameHeight: 16, engines: ['generic'] });
      const frames = await Promise.all(result!.frames.map(async (f) => (await rawPixels(await download(local, f.url))).data));
      assert.deepEqual(result!.strips.map((s) => s.name), ['strip-1.png', 'strip-2.png', 'strip-3.png']);
      const expected = [[0, 8], [8, 16], [16, 19]];
      const listed = result!.exports.generic!.content.strips;
      for (const [s, strip] of result!.strips.entries()) {
        const png = await download(local, strip.url);
        const meta = await sharp(png).metadata();
        const [first, end] = expected[s]!;
        assert.deepEqual([meta.width, meta.height], [(end! - first!) * 512, 16], `strip ${s + 1} size`);
        assert.ok(meta.width! <= 4096);
        assert.deepEqual(listed[s].frames.map((f: { index: number }) => f.index), Array.from({ length: end! - first! }, (_, k) => first! + k));
        for (let k = 0; k < end! - first!; k++) {
          const region = await rawPixels(png, { x: k * 512, y: 0, w: 512, h: 16 });
          assert.ok(region.data.equals(frames[first! + k]!), `strip ${s + 1} position ${k} holds frame ${first! + k + 1}`);
        }
      }
      await assertLedgerInvariants(local.deps, t.workspace.id);
    });

    test('a sprite costs perRunMillicents plus perFrameMillicents per frame at the sprites entry’s prices, which is also its estimate and maximum', async () => {
      const t = await seedTenant(local.deps, { credits: CREDITS });
      const input = { prompt: 'a jumping frog', frames: 3, frameWidth: 16, frameHeight: 16 };
      const cost = PRICE.perRunMillicents + 3 * PRICE.perFrameMillicents;
      const estimate = await call(local, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'sprite.generate', input } });
      assert.equal(estimate.statusCode, 200, estimate.body);
      assert.equal(estimate.json().data.maximumCostMillicents, cost);
      const { job } = await sprite(local, t, input);
      assert.equal(job.costMillicents, cost);
      const b = await balance(local, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS - cost, 0]);
      await assertLedgerInvariants(local.deps, t.workspace.id);
    });

    test('frames drawn on an openai provider: one image request per frame with the entry’s model, a "frame i of n" prompt and a size the model accepts; each drawing is scaled into its frame', async () => {
      const t = await seedTenant(drawn.deps, { credits: CREDITS });
      // Known drawings, smaller than the frame and not of its shape: each is scaled to fit.
      const drawings = [0, 1, 2].map((i) => makePng(24, 18, 300 + i));
      const answers = drawings.map((png) => ({ json: { created: 1, data: [{ b64_json: png.toString('base64') }] } }));
      fake.script('/v1/images/generations', answers[0]!);
      fake.script('/v1/images/edits', ...answers.slice(1));
      const { job, result } = await sprite(drawn, t, { prompt: 'a knight walking', frames: 3, frameWidth: 32, frameHeight: 32 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const generations = fake.seen('/v1/images/generations');
      const edits = fake.seen('/v1/images/edits');
      assert.deepEqual([generations.length, edits.length], [1, 2], 'the first frame is generated, the others are edits of it');
      const sent = [generations[0]!.json, ...edits.map((r) => r.form!.fields)];
      for (const [i, req] of [...generations, ...edits].entries()) {
        assert.equal(req.headers.authorization, 'Bearer sk-painter-0123456789');
        assert.equal(sent[i].model, 'dall-e-2');
        assert.equal(sent[i].prompt, `a knight walking — frame ${i + 1} of 3`);
        assert.equal(String(sent[i].n), '1');
        assert.equal(sent[i].size, '256x256');
      }
      // Issue 37 (consistent sprites): every frame after the first was asked for with the first
      // frame's bytes (the stored 32×32 PNG, square as dall-e-2 needs) as its reference image.
      const first = createHash('sha256').update(await download(drawn, result!.frames[0]!.url)).digest('hex');
      for (const edit of edits) {
        const images = edit.form!.files.filter((f) => f.field.startsWith('image'));
        assert.deepEqual(images.map((f) => f.sha256), [first], 'the reference is the first frame');
      }
      assert.equal(result!.frameMode, 'first-frame-reference');
      assert.deepEqual([result!.provider, result!.model], ['engines', 'dall-e-2']);
      const { framePixels } = await checkSprite(drawn, result!, { frames: 3, frameWidth: 32, frameHeight: 32, padding: 2 });
      for (const [i, png] of drawings.entries()) {
        const scaled = await sharp(png).resize(32, 32, { fit: 'contain', background: { r: 0, g: 0, b: 0, alpha: 0 } }).ensureAlpha().raw().toBuffer();
        assert.ok(framePixels[i]!.equals(scaled), `frame ${i + 1} is drawing ${i + 1} scaled into the frame`);
      }
      // Charged at the sprites entry's prices, whatever the drawing provider would charge.
      assert.equal(job.costMillicents, PRICE.perRunMillicents + 3 * PRICE.perFrameMillicents);
      await assertLedgerInvariants(drawn.deps, t.workspace.id);
    });

    test('a failure while drawing frame k charges the k frames drawn; a retry resumes after them (not charged again) and packs all frames', async () => {
      const t = await seedTenant(drawn.deps, { credits: CREDITS });
      // Frames 1 and 2 are drawn (the second from the first); the provider refuses frame 3.
      fake.script('/v1/images/generations', {});
      fake.script('/v1/images/edits', {}, { status: 400, json: { error: { message: 'content policy', type: 'invalid_request_error', code: null } } });
      const res = await run(drawn, t, 'sprite.generate', { prompt: 'a dragon flying', frames: 4, frameWidth: 24, frameHeight: 24 });
      assert.equal(res.statusCode, 202, res.body);
      const jobId = res.json().data.jobId as string;
      await drain(drawn);
      const failed = await getJob(drawn, t, jobId);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.errorCode, 'PROVIDER_REJECTED');
      const firstCost = PRICE.perRunMillicents + 2 * PRICE.perFrameMillicents;
      assert.equal(failed.costMillicents, firstCost);
      assert.equal((await balance(drawn, t)).totalMillicents, CREDITS - firstCost);
      await assertLedgerInvariants(drawn.deps, t.workspace.id);

      const retry = await call(drawn, 'POST', `/v1/jobs/${jobId}/retry`, { secret: t.secret, workspaceId: t.workspace.id, headers: { 'idempotency-key': randomUUID() } });
      assert.equal(retry.statusCode, 202, retry.body);
      await drain(drawn);
      const { job, result } = await finished(drawn, t, jobId);
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const drawings = fake.seen().filter((r) => r.path.startsWith('/v1/images/'));
      assert.deepEqual(
        drawings.map((r) => [r.path, r.json?.prompt ?? r.form?.fields.prompt]),
        [1, 2, 3, 3, 4].map((i) => [i === 1 ? '/v1/images/generations' : '/v1/images/edits', `a dragon flying — frame ${i} of 4`]),
        'the retry draws frames 3 and 4 only, from the first frame the first attempt drew',
      );
      const first = createHash('sha256').update(await download(drawn, result!.frames[0]!.url)).digest('hex');
      for (const edit of drawings.slice(1)) assert.deepEqual(edit.form!.files.filter((f) => f.field.startsWith('image')).map((f) => f.sha256), [first]);
      const total = PRICE.perRunMillicents + 4 * PRICE.perFrameMillicents;
      assert.equal(job.costMillicents, total);
      const b = await balance(drawn, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS - total, 0]);
      // The frames of the first attempt are read back and packed with the new ones.
      await checkSprite(drawn, result!, { frames: 4, frameWidth: 24, frameHeight: 24, padding: 2 });
      await assertLedgerInvariants(drawn.deps, t.workspace.id);
    });

    test('frames drawn on a replicate provider: one prediction per frame from the entry’s input template, whose output file becomes the frame', async () => {
      const t = await seedTenant(predicted.deps, { credits: CREDITS });
      const drawings = [0, 1].map((i) => makePng(40, 40, 400 + i));
      for (const [i, png] of drawings.entries()) replicate.next({ output: [replicate.putFile(`drawing-${i}.png`, png)] });
      const { job, result } = await sprite(predicted, t, { prompt: 'a torch flickering', frames: 2, frameWidth: 20, frameHeight: 20 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const inputs = replicate.calls('create').map((r) => r.json.input);
      assert.deepEqual(inputs, [1, 2].map((i) => ({ prompt: `a torch flickering — frame ${i} of 2`, width: 256, height: 256, num_outputs: 1, style: 'pixel art' })));
      assert.ok(replicate.calls('create').every((r) => r.path === '/v1/models/owner/pixel-sprites/predictions' && r.headers.authorization === 'Bearer r8-painter-0123456789'));
      const { framePixels } = await checkSprite(predicted, result!, { frames: 2, frameWidth: 20, frameHeight: 20, padding: 2 });
      for (const [i, png] of drawings.entries()) {
        assert.ok(framePixels[i]!.equals(await sharp(png).resize(20, 20).ensureAlpha().raw().toBuffer()), `frame ${i + 1} is prediction ${i + 1}'s image`);
      }
      // Its input template takes no reference images: each frame is drawn on its own, and the result says so.
      assert.equal(result!.frameMode, 'independent');
      // Charged per frame at the sprites entry's prices: the prediction time plays no part.
      assert.equal(job.costMillicents, PRICE.perRunMillicents + 2 * PRICE.perFrameMillicents);
      await assertLedgerInvariants(predicted.deps, t.workspace.id);
    });

    test('frames that are not square, drawn on dall-e-2: the first frame is sent as the square PNG the model takes (the frame whole on a transparent square)', async () => {
      const t = await seedTenant(drawn.deps, { credits: CREDITS });
      const { job, result } = await sprite(drawn, t, { prompt: 'a banner waving', frames: 2, frameWidth: 40, frameHeight: 24 });
      // The strict fake refuses an edit whose image is not a square PNG, as OpenAI does.
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const [edit] = fake.seen('/v1/images/edits');
      const [image] = edit!.form!.files.filter((f) => f.field.startsWith('image'));
      const firstFrame = await download(drawn, result!.frames[0]!.url);
      assert.notEqual(image!.sha256, createHash('sha256').update(firstFrame).digest('hex'), 'the 40×24 frame was made square');
      assert.equal(image!.type, 'image/png');
      assert.equal(result!.frameMode, 'first-frame-reference');
      await assertLedgerInvariants(drawn.deps, t.workspace.id);
    });

    test('the prediction of the frame being drawn is saved in the job’s state at once, and cancelling the job cancels it, charging only the frames drawn', async () => {
      const t = await seedTenant(predicted.deps, { credits: CREDITS });
      replicate.next({ output: [replicate.putFile('first.png', makePng(20, 20, 500))] });
      replicate.next({ hold: true });
      const worker = new JobWorker(predicted.deps, { pollMs: 20 });
      worker.start();
      let jobId = '';
      try {
        const res = await run(predicted, t, 'sprite.generate', { prompt: 'a door opening', frames: 3, frameWidth: 16, frameHeight: 16 });
        assert.equal(res.statusCode, 202, res.body);
        jobId = res.json().data.jobId as string;
        await replicate.waitFor(() => replicate.creations === 2 && replicate.calls('get').length >= 3, 'the second frame’s prediction to be polled');
        const second = replicate.last!.id;
        const row = await predicted.deps.db.selectFrom('jobs').select(['checkpoint_json', 'steps_done']).where('id', '=', jobId).executeTakeFirstOrThrow();
        assert.equal(Number(row.steps_done), 1);
        assert.equal(JSON.parse(String(row.checkpoint_json)).state.drawing.frame, 1);
        assert.equal(JSON.parse(String(row.checkpoint_json)).state.drawing.state.predictionId, second, 'the prediction id is checkpointed before it ends');
        const cancel = await call(predicted, 'POST', `/v1/jobs/${jobId}/cancel`, { secret: t.secret, workspaceId: t.workspace.id });
        assert.equal(cancel.statusCode, 200, cancel.body);
        assert.ok(replicate.cancels.includes(second), 'the frame’s prediction was cancelled at the provider');
        assert.equal(cancel.json().data.status, 'cancelled');
        assert.equal(cancel.json().data.costMillicents, PRICE.perRunMillicents + PRICE.perFrameMillicents, 'one frame drawn');
      } finally {
        await worker.stop(2000);
      }
      assert.equal(replicate.creations, 2, 'no frame is drawn after the cancel');
      const job = await getJob(predicted, t, jobId);
      assert.equal(job.costMillicents, PRICE.perRunMillicents + PRICE.perFrameMillicents);
      assert.equal((await balance(predicted, t)).reservedMillicents, 0);
      await assertLedgerInvariants(predicted.deps, t.workspace.id);
    });

    test('a cancel wins over the attempt it stops: the attempt, told by the provider that its prediction was cancelled, is already fenced out and cannot fail the job first', async () => {
      const t = await seedTenant(predicted.deps, { credits: CREDITS });
      replicate.next({ output: [replicate.putFile('first.png', makePng(20, 20, 510))] });
      replicate.next({ hold: true });
      const res = await run(predicted, t, 'sprite.generate', { prompt: 'a lamp swinging', frames: 3, frameWidth: 16, frameHeight: 16 });
      assert.equal(res.statusCode, 202, res.body);
      const jobId = res.json().data.jobId as string;
      const [claimed] = await claimJobs(predicted.deps, 'worker-under-test', 1);
      assert.equal(claimed?.id, jobId);
      const attempt = executeJob(predicted.deps, claimed!, new AbortController().signal);
      await replicate.waitFor(() => replicate.creations === 2 && replicate.calls('get').some((r) => r.path.endsWith(replicate.last!.id)), 'the second frame’s prediction to be polled');
      // The provider answers the cancel only after the attempt has seen its prediction cancelled
      // and ended (the order a slow provider gives): the attempt's finish comes first.
      let attemptEnded: Awaited<typeof attempt> | undefined;
      replicate.beforeCancelAnswer = async () => {
        attemptEnded = await attempt;
      };
      const cancel = await call(predicted, 'POST', `/v1/jobs/${jobId}/cancel`, { secret: t.secret, workspaceId: t.workspace.id });
      assert.equal(cancel.statusCode, 200, cancel.body);
      assert.equal(cancel.json().data.status, 'cancelled');
      assert.equal(attemptEnded?.status, 'lost', 'the attempt could write nothing: it was fenced out before the provider was asked');
      const job = await getJob(predicted, t, jobId);
      assert.deepEqual([job.status, job.errorCode], ['cancelled', null]);
      assert.equal(job.costMillicents, PRICE.perRunMillicents + PRICE.perFrameMillicents, 'one frame drawn');
      assert.equal((await balance(predicted, t)).reservedMillicents, 0);
      await assertLedgerInvariants(predicted.deps, t.workspace.id);
    });
  });
}
