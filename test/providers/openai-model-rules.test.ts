/**
 * What OpenAI's models accept (issue 39, items 1 and 2), against the strict fake
 * (test/support/fake-openai.ts): image sizes and counts per model family, delivered at exactly the
 * size asked for; `max_completion_tokens` for reasoning chat models; what a model cannot honour
 * refused at admission, before anything is reserved. The accepted sizes below are copied by hand
 * from the OpenAI API reference ("Create image", https://platform.openai.com/docs/api-reference/images/create),
 * independently of src/providers/openai-models.ts.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { createEgress } from '../../src/egress/client.js';
import type { Egress } from '../../src/egress/types.js';
import { findOperation } from '../../src/operations/registry.js';
import { compileStrict } from '../../src/http/validation.js';
import { imageRulesFor, planImages } from '../../src/providers/openai-models.js';
import { FakeOpenAi } from '../support/fake-openai.js';
import { createTestContext, disposeTestContext, type TestContext } from '../support/harness.js';
import { testDatabaseNames } from '../support/databases.js';
import { balance, run, runQueuedToEnd } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { mediaCount, png, upload } from '../support/media.js';
import { runAdapter } from '../support/provider-run.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { writeProvidersFile } from '../support/providers-file.js';

/** The API reference's sizes and `n` bounds, per image model. */
const ACCEPTED: Record<string, { sizes: string[]; maxN: number }> = {
  'dall-e-2': { sizes: ['256x256', '512x512', '1024x1024'], maxN: 10 },
  'dall-e-3': { sizes: ['1024x1024', '1792x1024', '1024x1792'], maxN: 1 },
  'gpt-image-1': { sizes: ['1024x1024', '1536x1024', '1024x1536'], maxN: 10 },
  'gpt-image-1-mini': { sizes: ['1024x1024', '1536x1024', '1024x1536'], maxN: 10 },
};
const SIDES = [256, 512, 768, 1024, 1536, 2048];
const KEY = 'sk-rules-0123456789abcdef';
const IMAGE_PRICE = { perImageMillicents: 4000 };
const CHAT_PRICE = { baseMillicents: 20, inputTokenMillicents: 1, outputTokenMillicents: 3 };
const CREDITS = 1_000_000;

const parse = (s: string) => s.split('x').map(Number) as [number, number];
const aspectGap = (a: [number, number], b: [number, number]) => Math.abs(Math.log(a[0] / a[1]) - Math.log(b[0] / b[1]));

function fileFor(fake: FakeOpenAi, image: Record<string, unknown>, chatModel = 'gpt-4o-mini') {
  return {
    providers: { openai: { type: 'openai', baseUrl: fake.baseUrl, apiKeyEnv: 'RULES_KEY', privateNetwork: true, maxRetries: 0 } },
    operations: {
      'image.generate': { provider: 'openai', price: IMAGE_PRICE, ...image },
      'chat.generate': { provider: 'openai', model: chatModel, price: CHAT_PRICE },
    },
  };
}

async function dimensions(bytes: Buffer): Promise<[number, number]> {
  const meta = await sharp(bytes).metadata();
  return [meta.width!, meta.height!];
}

test('image sizes: every model family is sent a size and n the API reference accepts, of the requested shape where the family has it, covering the request where it can', () => {
  for (const [model, accepted] of Object.entries(ACCEPTED)) {
    const rules = imageRulesFor(model);
    for (const w of SIDES) {
      for (const h of SIDES) {
        for (let count = 1; count <= 4; count++) {
          const plan = planImages(rules, { width: w, height: h }, count);
          const sent = `${plan.generated.width}x${plan.generated.height}`;
          assert.ok(accepted.sizes.includes(sent), `${model} ${w}x${h}: ${sent} is accepted`);
          assert.equal(plan.batches.reduce((a, b) => a + b, 0), count, `${model}: the requests make ${count} images`);
          assert.ok(plan.batches.every((n) => n >= 1 && n <= accepted.maxN), `${model}: n within 1..${accepted.maxN} (${plan.batches.join(',')})`);
          assert.equal(plan.batches.length, Math.ceil(count / accepted.maxN), `${model}: as few requests as the n bound allows`);
          const bestGap = Math.min(...accepted.sizes.map((s) => aspectGap(parse(s), [w, h])));
          assert.ok(aspectGap(parse(sent), [w, h]) - bestGap < 1e-9, `${model} ${w}x${h}: ${sent} is of the nearest shape`);
          const covering = accepted.sizes.filter((s) => aspectGap(parse(s), [w, h]) - bestGap < 1e-9 && parse(s)[0] >= w && parse(s)[1] >= h);
          if (covering.length > 0) assert.ok(covering.includes(sent), `${model} ${w}x${h}: ${sent} covers the request`);
        }
      }
    }
  }
});

test('image sizes: a providers-file entry lists the sizes and the n bound of a model the table does not know; without them the size is sent as asked', () => {
  const entry = { sizes: [{ width: 512, height: 512 }, { width: 768, height: 512 }], maxImagesPerRequest: 2 };
  const plan = planImages(imageRulesFor('local-sdxl', entry), { width: 600, height: 400 }, 3);
  assert.deepEqual([plan.generated, plan.batches], [{ width: 768, height: 512 }, [2, 1]]);
  const free = planImages(imageRulesFor('local-sdxl'), { width: 600, height: 400 }, 3);
  assert.deepEqual([free.generated, free.batches], [{ width: 600, height: 400 }, [3]]);
});

describe('strict fake OpenAI: each rule of the API reference', () => {
  let fake: FakeOpenAi;
  before(async () => {
    fake = await FakeOpenAi.start();
  });
  after(async () => fake?.close());
  beforeEach(() => fake.reset());

  async function post(path: string, body: unknown) {
    const res = await fetch(`${fake.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as any };
  }

  function assertRefusal(answer: { status: number; json: any }, param: string) {
    assert.equal(answer.status, 400);
    assert.deepEqual(Object.keys(answer.json.error).sort(), ['code', 'message', 'param', 'type'], 'the error shape of the API');
    assert.equal(answer.json.error.type, 'invalid_request_error');
    assert.equal(answer.json.error.param, param);
    assert.equal(typeof answer.json.error.message, 'string');
  }

  test('fake openai: an image size the model does not take is refused (400, param size)', async () => {
    assertRefusal(await post('/images/generations', { model: 'dall-e-2', prompt: 'x', size: '512x768' }), 'size');
    assertRefusal(await post('/images/generations', { model: 'dall-e-3', prompt: 'x', size: '512x512' }), 'size');
    assertRefusal(await post('/images/generations', { model: 'gpt-image-1', prompt: 'x', size: '1792x1024' }), 'size');
    assert.equal((await post('/images/generations', { model: 'gpt-image-1', prompt: 'x', size: 'auto' })).status, 200, 'auto is a GPT image size');
  });

  test('fake openai: n above the model bound is refused (dall-e-3 takes 1, others 10)', async () => {
    assertRefusal(await post('/images/generations', { model: 'dall-e-3', prompt: 'x', n: 2, size: '1024x1024' }), 'n');
    assertRefusal(await post('/images/generations', { model: 'dall-e-2', prompt: 'x', n: 11, size: '256x256' }), 'n');
    assert.equal((await post('/images/generations', { model: 'dall-e-2', prompt: 'x', n: 10, size: '256x256', response_format: 'b64_json' })).json.data.length, 10);
  });

  test('fake openai: response_format is refused for GPT image models, which answer base64 with token usage; dall-e answers a URL unless asked for base64', async () => {
    assertRefusal(await post('/images/generations', { model: 'gpt-image-1', prompt: 'x', response_format: 'b64_json' }), 'response_format');
    const gpt = await post('/images/generations', { model: 'gpt-image-1', prompt: 'x', size: '1536x1024' });
    assert.equal(typeof gpt.json.data[0].b64_json, 'string');
    assert.deepEqual(await dimensions(Buffer.from(gpt.json.data[0].b64_json, 'base64')), [1536, 1024], 'an image of the size asked');
    assert.ok(Number.isInteger(gpt.json.usage.input_tokens) && Number.isInteger(gpt.json.usage.output_tokens) && Number.isInteger(gpt.json.usage.total_tokens), 'token usage');
    const dalle = await post('/images/generations', { model: 'dall-e-2', prompt: 'x', size: '256x256' });
    assert.match(dalle.json.data[0].url, /^http:/);
    assert.equal(dalle.json.usage, undefined);
  });

  test('fake openai: reasoning chat models refuse max_tokens and a temperature other than 1; other models take max_tokens', async () => {
    for (const model of ['o1', 'o3-mini', 'o4-mini', 'gpt-5', 'gpt-5-mini']) {
      const refused = await post('/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 });
      assertRefusal(refused, 'max_tokens');
      assert.equal(refused.json.error.code, 'unsupported_parameter');
      assertRefusal(await post('/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 10, temperature: 0.5 }), 'temperature');
      assert.equal((await post('/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 10 })).status, 200);
    }
    assert.equal((await post('/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, temperature: 0.5 })).status, 200);
  });

  test('fake openai: dall-e-3 has no image edits; dall-e-2 edits one square PNG', async () => {
    const form = (model: string, images: Buffer[]) => {
      const f = new FormData();
      f.set('model', model);
      f.set('prompt', 'x');
      f.set('size', '1024x1024');
      for (const bytes of images) f.append(images.length > 1 ? 'image[]' : 'image', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), 'i.png');
      return f;
    };
    const edit = async (f: FormData) => {
      const res = await fetch(`${fake.baseUrl}/images/edits`, { method: 'POST', body: f });
      return { status: res.status, json: (await res.json()) as any };
    };
    const square = await png(32, 32);
    assertRefusal(await edit(form('dall-e-3', [square])), 'model');
    assertRefusal(await edit(form('dall-e-2', [await png(40, 20)])), 'image');
    assertRefusal(await edit(form('dall-e-2', [square, square])), 'image');
    assert.equal((await edit(form('dall-e-2', [square]))).status, 200);
    assert.equal((await edit(form('gpt-image-1', [square, await png(40, 20)]))).status, 200);
  });
});

describe('openai adapter: only what the model accepts is sent, and the size asked for is delivered', () => {
  let fake: FakeOpenAi;
  let egress: Egress;
  before(async () => {
    fake = await FakeOpenAi.start();
    egress = createEgress({ allowCidrs: ['127.0.0.1/32'] });
  });
  after(async () => {
    await egress?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  const cases: { model: string; width: number; height: number; count: number }[] = [
    { model: 'dall-e-2', width: 300, height: 900, count: 4 },
    { model: 'dall-e-2', width: 512, height: 512, count: 1 },
    { model: 'dall-e-3', width: 2048, height: 1024, count: 2 },
    { model: 'dall-e-3', width: 256, height: 1024, count: 1 },
    { model: 'gpt-image-1', width: 640, height: 480, count: 4 },
    { model: 'gpt-image-1-mini', width: 1024, height: 2048, count: 1 },
  ];
  for (const c of cases) {
    test(`image sizes: ${c.model} asked for ${c.count} of ${c.width}x${c.height} sends only accepted requests and delivers ${c.count} images of exactly ${c.width}x${c.height}`, async () => {
      const { result } = runAdapter({ file: fileFor(fake, { model: c.model }), env: { RULES_KEY: KEY }, operationId: 'image.generate', input: { prompt: 'p', width: c.width, height: c.height, count: c.count }, egress });
      const { data, files, costMillicents } = await result;
      assert.deepEqual(fake.refusals, [], 'the fake refused nothing');
      const requests = fake.seen('/v1/images/generations');
      const accepted = ACCEPTED[c.model]!;
      assert.equal(requests.length, Math.ceil(c.count / accepted.maxN));
      for (const r of requests) assert.ok(accepted.sizes.includes(r.json.size), `${r.json.size} is accepted`);
      assert.equal(files.length, c.count);
      for (const f of files) assert.deepEqual(await dimensions(f.bytes), [c.width, c.height]);
      const resized = requests[0]!.json.size !== `${c.width}x${c.height}`;
      assert.deepEqual(data.imageSize, { requested: `${c.width}x${c.height}`, generated: requests[0]!.json.size, resize: resized ? 'cover' : 'none', requests: requests.length });
      assert.equal(costMillicents, c.count * IMAGE_PRICE.perImageMillicents);
    });
  }

  test('max_completion_tokens: a reasoning chat model is sent max_completion_tokens and no temperature; another model max_tokens', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const reasoning = await runAdapter({ file: fileFor(fake, { model: 'dall-e-2' }, 'o3-mini'), env: { RULES_KEY: KEY }, operationId: 'chat.generate', input: { messages, maxTokens: 64, temperature: 0.3 }, egress }).result;
    assert.equal(reasoning.data.message && (reasoning.data.message as { content: string }).content, fake.chatReply);
    const [sent] = fake.seen('/v1/chat/completions');
    assert.equal(sent!.json.max_completion_tokens, 64);
    assert.equal('max_tokens' in sent!.json, false);
    assert.equal('temperature' in sent!.json, false);
    fake.reset();
    await runAdapter({ file: fileFor(fake, { model: 'dall-e-2' }, 'gpt-4o-mini'), env: { RULES_KEY: KEY }, operationId: 'chat.generate', input: { messages, maxTokens: 64, temperature: 0.3 }, egress }).result;
    const [plain] = fake.seen('/v1/chat/completions');
    assert.deepEqual([plain!.json.max_tokens, plain!.json.temperature, 'max_completion_tokens' in plain!.json], [64, 0.3, false]);
    assert.deepEqual(fake.refusals, []);
  });

  test('more images than asked: an answer with more images than n fails PROVIDER_ERROR, charged the images asked for, nothing delivered', async () => {
    const three = [1, 2, 3].map(() => ({ b64_json: Buffer.from('x').toString('base64') }));
    fake.script('/v1/images/generations', { json: { created: 1, data: three } });
    const { result, maximumMillicents } = runAdapter({ file: fileFor(fake, { model: 'dall-e-2' }), env: { RULES_KEY: KEY }, operationId: 'image.generate', input: { prompt: 'p', width: 256, height: 256, count: 2 }, egress });
    await assert.rejects(result, (err: any) => err.code === 'PROVIDER_ERROR' && err.consumedMillicents === 2 * IMAGE_PRICE.perImageMillicents && /3 images where 2/.test(err.message));
    assert.equal(maximumMillicents, 2 * IMAGE_PRICE.perImageMillicents);
  });
});

for (const dbName of testDatabaseNames()) {
  describe(`openai model rules, end to end [${dbName}]`, () => {
    let fake: FakeOpenAi;
    let dir: string;
    /** image.generate on gpt-image-1, chat.generate on o3-mini. */
    let gpt: TestContext;
    /** image.generate on dall-e-3. */
    let dalle3: TestContext;
    /** image.generate on a model the table does not know, with the file's sizes. */
    let listed: TestContext;

    before(async () => {
      fake = await FakeOpenAi.start();
      dir = mkdtempSync(join(tmpdir(), 'was-openai-rules-'));
      const env = (file: string) => ({ env: { PROVIDERS_FILE: file, RULES_KEY: KEY } });
      [gpt, dalle3, listed] = await Promise.all([
        createTestContext(dbName, env(writeProvidersFile(dir, 'gpt.json', fileFor(fake, { model: 'gpt-image-1' }, 'o3-mini')))),
        createTestContext(dbName, env(writeProvidersFile(dir, 'dalle3.json', fileFor(fake, { model: 'dall-e-3' })))),
        createTestContext(dbName, env(writeProvidersFile(dir, 'listed.json', fileFor(fake, { model: 'local-sdxl', sizes: ['512x512', '768x512', '512x768'], maxImagesPerRequest: 2 })))),
      ]);
    });

    after(async () => {
      await Promise.all([gpt, dalle3, listed].filter(Boolean).map((c) => disposeTestContext(c)));
      await fake?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    beforeEach(() => fake.reset());

    async function stored(ctx: TestContext, url: string): Promise<Buffer> {
      const u = new URL(url);
      const res = await ctx.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
      assert.equal(res.statusCode, 200);
      return res.rawPayload;
    }

    function assertResult(output: unknown) {
      const validate = compileStrict(findOperation('image.generate')!.resultSchema as object);
      assert.ok(validate(output), JSON.stringify(validate.errors));
    }

    test('image sizes: gpt-image-1 asked for 3 of 512x768 gets one request n=3 at 1024x1536 without response_format, and the job delivers 3 images of exactly 512x768, charged per image', async () => {
      const t = await seedTenant(gpt.deps, { credits: CREDITS });
      const job = await runQueuedToEnd(gpt, t, 'image.generate', { prompt: 'tall', width: 512, height: 768, count: 3 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.deepEqual(fake.refusals, []);
      const [req, ...more] = fake.seen('/v1/images/generations');
      assert.equal(more.length, 0);
      assert.deepEqual([req!.json.size, req!.json.n, 'response_format' in req!.json], ['1024x1536', 3, false]);
      assertResult(job.output);
      assert.deepEqual(job.output.imageSize, { requested: '512x768', generated: '1024x1536', resize: 'cover', requests: 1 });
      for (const image of job.output.images) assert.deepEqual(await dimensions(await stored(gpt, image.url)), [512, 768]);
      assert.equal(job.costMillicents, 3 * IMAGE_PRICE.perImageMillicents);
      const b = await balance(gpt, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS - job.costMillicents, 0]);
      await assertLedgerInvariants(gpt.deps, t.workspace.id);
    });

    test('max_completion_tokens: chat.generate on o3-mini sends max_completion_tokens (never max_tokens) and is charged the reported usage', async () => {
      const t = await seedTenant(gpt.deps, { credits: CREDITS });
      fake.chatUsage = { prompt_tokens: 12, completion_tokens: 30 };
      const res = await run(gpt, t, 'chat.generate', { messages: [{ role: 'user', content: 'think' }], maxTokens: 200 });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().data.status, 'completed', res.body);
      assert.deepEqual(fake.refusals, []);
      const [sent] = fake.seen('/v1/chat/completions');
      assert.deepEqual([sent!.json.max_completion_tokens, 'max_tokens' in sent!.json], [200, false]);
      assert.equal(res.json().data.costMillicents, CHAT_PRICE.baseMillicents + 12 + 3 * 30);
      await assertLedgerInvariants(gpt.deps, t.workspace.id);
    });

    test('temperature on a reasoning model is refused at admission: 400 INVALID_INPUT, nothing sent, reserved or charged', async () => {
      const t = await seedTenant(gpt.deps, { credits: CREDITS });
      const res = await run(gpt, t, 'chat.generate', { messages: [{ role: 'user', content: 'hi' }], temperature: 0.2 });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().code, 'INVALID_INPUT');
      assert.match(res.body, /temperature/);
      assert.equal(fake.seen().length, 0);
      const b = await balance(gpt, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS, 0]);
      await assertLedgerInvariants(gpt.deps, t.workspace.id);
    });

    test('image sizes: dall-e-3 asked for 3 of 1200x600 gets three requests of n=1 at 1792x1024, and the job delivers 3 images of exactly 1200x600', async () => {
      const t = await seedTenant(dalle3.deps, { credits: CREDITS });
      const job = await runQueuedToEnd(dalle3, t, 'image.generate', { prompt: 'wide', width: 1200, height: 600, count: 3 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.deepEqual(fake.refusals, []);
      const requests = fake.seen('/v1/images/generations');
      assert.deepEqual(requests.map((r) => [r.json.n, r.json.size, r.json.response_format]), [[1, '1792x1024', 'b64_json'], [1, '1792x1024', 'b64_json'], [1, '1792x1024', 'b64_json']]);
      assertResult(job.output);
      assert.deepEqual(job.output.imageSize, { requested: '1200x600', generated: '1792x1024', resize: 'cover', requests: 3 });
      for (const image of job.output.images) assert.deepEqual(await dimensions(await stored(dalle3, image.url)), [1200, 600]);
      assert.equal(job.costMillicents, 3 * IMAGE_PRICE.perImageMillicents);
      await assertLedgerInvariants(dalle3.deps, t.workspace.id);
    });

    test('several requests: a refusal of the second request fails the job, charged the one image made before it; nothing is stored and no hold remains', async () => {
      const t = await seedTenant(dalle3.deps, { credits: CREDITS });
      fake.script('/v1/images/generations', {}, { status: 400, json: { error: { message: 'Your request was rejected by the safety system.', type: 'invalid_request_error', param: null, code: 'content_policy_violation' } } });
      const job = await runQueuedToEnd(dalle3, t, 'image.generate', { prompt: 'two', width: 1024, height: 1024, count: 2 });
      assert.deepEqual([job.status, job.errorCode, job.costMillicents], ['failed', 'PROVIDER_REJECTED', IMAGE_PRICE.perImageMillicents]);
      assert.equal(await mediaCount(dalle3, t), 0, 'nothing stored');
      const b = await balance(dalle3, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS - IMAGE_PRICE.perImageMillicents, 0]);
      await assertLedgerInvariants(dalle3.deps, t.workspace.id);
    });

    test('reference images on dall-e-3 (no edit endpoint) are refused at admission: 400 INVALID_INPUT, nothing sent or reserved; GET /v1/tools serves the narrower schema', async () => {
      const t = await seedTenant(dalle3.deps, { credits: CREDITS });
      const up = await upload(dalle3, t, await png(32, 32));
      assert.equal(up.statusCode, 200, up.body);
      const res = await run(dalle3, t, 'image.generate', { prompt: 'like this', referenceMediaIds: [up.json().data.id] });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().code, 'INVALID_INPUT');
      assert.match(res.body, /referenceMediaIds/);
      assert.equal(fake.seen().length, 0);
      assert.equal((await balance(dalle3, t)).reservedMillicents, 0);
      const tools = await dalle3.app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id } });
      const image = tools.json().data.items.flatMap((tool: any) => tool.operations).find((o: any) => o.operationId === 'image.generate');
      assert.equal('referenceMediaIds' in image.inputSchema.properties, false);
      await assertLedgerInvariants(dalle3.deps, t.workspace.id);
    });

    test('image sizes: an entry\'s own sizes and maxImagesPerRequest are honoured for a model the table does not know (3 of 600x400: n=2 then n=1 at 768x512)', async () => {
      const t = await seedTenant(listed.deps, { credits: CREDITS });
      const job = await runQueuedToEnd(listed, t, 'image.generate', { prompt: 'listed', width: 600, height: 400, count: 3 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.deepEqual(fake.seen('/v1/images/generations').map((r) => [r.json.n, r.json.size]), [[2, '768x512'], [1, '768x512']]);
      assert.deepEqual(job.output.imageSize, { requested: '600x400', generated: '768x512', resize: 'cover', requests: 2 });
      for (const image of job.output.images) assert.deepEqual(await dimensions(await stored(listed, image.url)), [600, 400]);
      assert.equal(job.costMillicents, 3 * IMAGE_PRICE.perImageMillicents);
      await assertLedgerInvariants(listed.deps, t.workspace.id);
    });
  });
}
