/**
 * The openai provider type against a local OpenAI-compatible server (test/support/fake-openai.ts)
 * speaking the real wire format (decisions.md section 5): the model and limits sent, the operator's
 * key or the workspace's own, usage-based costs at the file's prices, files stored with their
 * bytes, and provider failures mapped onto job error codes.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import sharp from 'sharp';
import { admin, call, createTestContext, disposeTestContext, type TestContext } from '../support/harness.js';
import { testDatabaseNames } from '../support/databases.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { balance, drain, getJob, readCompleteOutput, run, runQueuedToEnd } from '../support/jobs.js';
import { assertNothingPrivate, assertSnapshotShape, PRIVATE_KEYS } from '../support/snapshot.js';
import { FakeOpenAi, sha256 } from '../support/fake-openai.js';
import { png, upload } from '../support/media.js';
import { CHAT_TOKENS_PER_MESSAGE, CHAT_TOKENS_PER_REQUEST } from '../../src/operations/pricing.js';
import { makePng } from '../../src/providers/sim-files.js';
import { compileStrict } from '../../src/http/validation.js';
import { findOperation } from '../../src/operations/registry.js';
import { createEgress } from '../../src/egress/client.js';
import { runAdapter } from '../support/provider-run.js';

const OPERATOR_KEY = 'sk-operator-0123456789abcdefOPERATOR';
const PERSONAL_KEY = 'sk-personal-9876543210fedcba-Q7zXk3Wq';
const CHAT_PRICE = { baseMillicents: 20, inputTokenMillicents: 1, outputTokenMillicents: 3 };
const IMAGE_PRICE = { perImageMillicents: 4000 };
const SPEECH_PRICE = { perThousandCharactersMillicents: 5000 };
const CREDITS = 1_000_000;
/** The keyless provider's deadline per call (speech runs there). */
const KEYLESS_TIMEOUT_MS = 600;

function providersFile(fake: FakeOpenAi) {
  return {
    providers: {
      // An operator-keyed OpenAI-compatible API.
      fake: { type: 'openai', baseUrl: fake.baseUrl, apiKeyEnv: 'FAKE_OPENAI_KEY', privateNetwork: true, maxRetries: 2 },
      // A keyless local server (Ollama-like) with a short deadline.
      keyless: { type: 'openai', baseUrl: fake.baseUrl, privateNetwork: true, maxRetries: 0, requestTimeoutMs: KEYLESS_TIMEOUT_MS },
    },
    operations: {
      'chat.generate': { provider: 'fake', model: 'gpt-test-mini', price: CHAT_PRICE },
      'image.generate': { provider: 'fake', model: 'dall-e-2', price: IMAGE_PRICE },
      'speech.generate': { provider: 'keyless', model: 'tts-test', voice: 'nova', price: SPEECH_PRICE },
    },
  };
}

/** The maximum cost of a chat input at CHAT_PRICE: input tokens bounded by UTF-8 bytes. */
function chatMaximum(messages: { content: string }[], maxTokens: number): number {
  const inputBound = CHAT_TOKENS_PER_REQUEST + messages.reduce((sum, m) => sum + Buffer.byteLength(m.content, 'utf8') + CHAT_TOKENS_PER_MESSAGE, 0);
  return CHAT_PRICE.baseMillicents + CHAT_PRICE.inputTokenMillicents * inputBound + CHAT_PRICE.outputTokenMillicents * maxTokens;
}

/** The result has the operation's documented shape, whatever the provider. */
function assertResultShape(operationId: string, result: unknown): void {
  const validate = compileStrict(findOperation(operationId)!.resultSchema as object);
  assert.ok(validate(result), `${operationId} result ${JSON.stringify(result).slice(0, 400)}: ${JSON.stringify(validate.errors)}`);
}

/** Every log line the service writes, at every level. */
function capturingLogger(lines: string[]): Logger {
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return pino({ level: 'trace' }, sink);
}

for (const dbName of testDatabaseNames()) {
  describe(`openai provider [${dbName}]`, () => {
    let fake: FakeOpenAi;
    let ctx: TestContext;
    let dir: string;
    const logLines: string[] = [];

    before(async () => {
      fake = await FakeOpenAi.start();
      dir = mkdtempSync(join(tmpdir(), 'was-openai-'));
      const file = join(dir, 'providers.json');
      writeFileSync(file, JSON.stringify(providersFile(fake)));
      // Every line the service writes is captured, request lines included.
      // A production set-up: live keys run only what the file maps (docs/decisions.md "Test mode").
      ctx = await createTestContext(dbName, { env: { PROVIDERS_FILE: file, FAKE_OPENAI_KEY: OPERATOR_KEY, SIMULATE_LIVE: 'false' }, log: capturingLogger(logLines), logRequests: true });
    });

    after(async () => {
      if (ctx) await disposeTestContext(ctx);
      if (fake) await fake.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    beforeEach(() => fake.reset());

    const tenant = () => seedTenant(ctx.deps, { credits: CREDITS });

    async function jobRow(id: string) {
      return ctx.deps.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    }

    async function mediaBytes(t: Tenant, url: string): Promise<Buffer> {
      const u = new URL(url);
      const res = await ctx.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
      assert.equal(res.statusCode, 200, `download ${res.statusCode}`);
      return res.rawPayload;
    }

    test('chat.generate sends the route model, the messages and max_tokens with the operator key, and charges the reported usage at the file prices', async () => {
      const t = await tenant();
      fake.chatUsage = { prompt_tokens: 23, completion_tokens: 11 };
      const messages = [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello there' },
      ];
      const res = await run(ctx, t, 'chat.generate', { messages, maxTokens: 100, temperature: 0.5 });
      assert.equal(res.statusCode, 200, res.body);
      const data = res.json().data;
      assert.equal(data.status, 'completed');
      assert.deepEqual(data.result.message, { role: 'assistant', content: fake.chatReply });
      assert.equal(data.result.finishReason, 'stop');
      assert.deepEqual(data.result.usage, { inputTokens: 23, outputTokens: 11 });
      assert.equal(data.result.provider, 'fake');
      assert.equal(data.result.model, 'gpt-test-mini');
      assertResultShape('chat.generate', data.result);

      const [req] = fake.seen('/v1/chat/completions');
      assert.ok(req);
      assert.equal(req.headers.authorization, `Bearer ${OPERATOR_KEY}`);
      assert.equal(req.json.model, 'gpt-test-mini');
      assert.deepEqual(req.json.messages, messages);
      assert.equal(req.json.max_tokens, 100);
      assert.equal(req.json.temperature, 0.5);
      assert.equal(fake.seen().length, 1, 'one request: the SDK does not retry on its own');

      const cost = CHAT_PRICE.baseMillicents + 23 * CHAT_PRICE.inputTokenMillicents + 11 * CHAT_PRICE.outputTokenMillicents;
      assert.equal(data.costMillicents, cost);
      assert.equal((await getJob(ctx, t, data.jobId)).costMillicents, cost);
      const b = await balance(ctx, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS - cost, 0]);
      const tx = (await call(ctx, 'GET', '/v1/transactions', { secret: t.secret, workspaceId: t.workspace.id })).json().data.items[0];
      assert.equal(tx.amountMillicents, -cost);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('the maximum cost of chat.generate bounds input tokens by UTF-8 bytes plus a per-message allowance, and output by maxTokens', async () => {
      const t = await tenant();
      const messages = [
        { role: 'system', content: 'Réponds en français. 日本語も' },
        { role: 'user', content: 'Grüße 🌍🌍 and a few ASCII words' },
      ];
      const res = await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'chat.generate', input: { messages, maxTokens: 300 } } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().data.maximumCostMillicents, chatMaximum(messages, 300));
      assert.ok(res.json().data.estimatedCostMillicents <= res.json().data.maximumCostMillicents);
      // Without maxTokens the provider is told the default bound, 512.
      const ran = await run(ctx, t, 'chat.generate', { messages });
      assert.equal(ran.statusCode, 200, ran.body);
      assert.equal(fake.seen('/v1/chat/completions')[0]!.json.max_tokens, 512);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a chat answer without usage is charged the bound (input bytes bound and maxTokens), never more than the maximum', async () => {
      const t = await tenant();
      fake.chatUsage = null;
      const messages = [{ role: 'user', content: 'How many tokens?' }];
      const res = await run(ctx, t, 'chat.generate', { messages, maxTokens: 40 });
      assert.equal(res.statusCode, 200, res.body);
      const data = res.json().data;
      assert.equal(data.status, 'completed');
      assert.equal(data.costMillicents, chatMaximum(messages, 40));
      assert.equal((await balance(ctx, t)).totalMillicents, CREDITS - data.costMillicents);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a chat usage above the bound is capped at the maximum cost', async () => {
      const t = await tenant();
      fake.chatUsage = { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 };
      const messages = [{ role: 'user', content: 'Hi' }];
      const res = await run(ctx, t, 'chat.generate', { messages, maxTokens: 10 });
      assert.equal(res.json().data.costMillicents, chatMaximum(messages, 10));
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a malformed chat answer (no choices) fails PROVIDER_ERROR, charged only for the usage it reports', async () => {
      const t = await tenant();
      fake.script('/v1/chat/completions', { json: { id: 'x', object: 'chat.completion', model: 'gpt-test-mini', choices: [], usage: { prompt_tokens: 5, completion_tokens: 0 } } });
      const res = await run(ctx, t, 'chat.generate', { messages: [{ role: 'user', content: 'Hi' }], maxTokens: 10 });
      assert.equal(res.statusCode, 200, res.body);
      const data = res.json().data;
      assert.deepEqual([data.status, data.errorCode], ['failed', 'PROVIDER_ERROR']);
      assert.equal(data.costMillicents, CHAT_PRICE.baseMillicents + 5);
      // Not JSON at all: nothing is charged.
      fake.script('/v1/chat/completions', { bytes: Buffer.from('<html>gateway</html>'), contentType: 'text/html' });
      const html = (await run(ctx, t, 'chat.generate', { messages: [{ role: 'user', content: 'Hi' }], maxTokens: 10 })).json().data;
      assert.deepEqual([html.status, html.errorCode, html.costMillicents], ['failed', 'PROVIDER_ERROR', 0]);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('image.generate on dall-e-2 asks for the accepted size covering the request (1024x1024 for 512x768), n 3 in one request, and delivers each image at exactly 512x768, cropped from the generated one, charged per image', async () => {
      const t = await tenant();
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'a red square', width: 512, height: 768, count: 3 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.deepEqual(fake.refusals, [], 'nothing the real API refuses was sent');
      const requests = fake.seen('/v1/images/generations');
      assert.equal(requests.length, 1, 'dall-e-2 makes up to 10 images per request');
      const [req] = requests;
      assert.deepEqual({ model: req!.json.model, prompt: req!.json.prompt, n: req!.json.n, size: req!.json.size, format: req!.json.response_format }, { model: 'dall-e-2', prompt: 'a red square', n: 3, size: '1024x1024', format: 'b64_json' });
      assert.equal(req!.headers.authorization, `Bearer ${OPERATOR_KEY}`);
      assert.equal(job.output.provider, 'fake');
      assert.equal(job.output.model, 'dall-e-2');
      assert.deepEqual(job.output.imageSize, { requested: '512x768', generated: '1024x1024', resize: 'cover', requests: 1 }, 'the result says how the size was made');
      assert.equal(job.output.images.length, 3);
      assertResultShape('image.generate', job.output);
      for (const [i, image] of job.output.images.entries()) {
        const stored = await mediaBytes(t, image.url);
        assert.equal(image.mimeType, 'image/png');
        assert.equal(image.sizeBytes, stored.length);
        assert.equal(image.sha256, sha256(stored));
        const meta = await sharp(stored).metadata();
        assert.deepEqual([meta.format, meta.width, meta.height], ['png', 512, 768], `image ${i + 1} has exactly the size asked for`);
        // The generated 1024x1024 image, scaled to cover 512x768 and cropped at the centre.
        const expected = await sharp(fake.lastImages[i]!).resize(512, 768, { fit: 'cover', position: 'centre' }).ensureAlpha().raw().toBuffer();
        assert.ok((await sharp(stored).ensureAlpha().raw().toBuffer()).equals(expected), `image ${i + 1} is generated image ${i + 1}, cropped`);
      }
      assert.equal(job.costMillicents, 3 * IMAGE_PRICE.perImageMillicents);
      assert.equal((await balance(ctx, t)).totalMillicents, CREDITS - 3 * IMAGE_PRICE.perImageMillicents);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('image.generate at a size the model accepts (256x256 on dall-e-2) sends it as asked and stores each image with its exact bytes', async () => {
      const t = await tenant();
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'a green square', width: 256, height: 256, count: 2 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(fake.seen('/v1/images/generations')[0]!.json.size, '256x256');
      assert.deepEqual(job.output.imageSize, { requested: '256x256', generated: '256x256', resize: 'none', requests: 1 });
      for (const [i, image] of job.output.images.entries()) {
        assert.equal(image.sizeBytes, fake.lastImages[i]!.length);
        assert.equal(sha256(await mediaBytes(t, image.url)), sha256(fake.lastImages[i]!), `image ${i + 1} is stored byte for byte`);
      }
      assert.equal(job.costMillicents, 2 * IMAGE_PRICE.perImageMillicents);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('the job snapshot and the complete output hold exactly the contract fields and none of the provider\'s private settings (key, key variable, base URL, providers file)', async () => {
      const t = await tenant();
      const res = await run(ctx, t, 'image.generate', { prompt: 'a blue square', width: 256, height: 256, count: 2 });
      assert.equal(res.statusCode, 202, res.body);
      const jobId = res.json().data.jobId as string;
      await drain(ctx);
      const read = await call(ctx, 'GET', `/v1/jobs/${jobId}`, { secret: t.secret, workspaceId: t.workspace.id });
      assert.equal(read.statusCode, 200, read.body);
      assertSnapshotShape(read.json().data, 'the snapshot');
      assert.equal(read.json().data.status, 'completed');
      const whole = (await readCompleteOutput(ctx, t, jobId)).bytes.toString('utf8');
      const secrets = [OPERATOR_KEY, fake.baseUrl, new URL(fake.baseUrl).host, 'FAKE_OPENAI_KEY', dir];
      assertNothingPrivate(read.body, 'the snapshot', { secrets, keys: PRIVATE_KEYS });
      assertNothingPrivate(whole, 'the complete output', { secrets, keys: PRIVATE_KEYS });
      assert.deepEqual([JSON.parse(whole).provider, JSON.parse(whole).model], ['fake', 'dall-e-2'], 'the provider by its name in the file, and the model');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('images answered by URL are downloaded from the provider origin with its key and stored', async () => {
      const t = await tenant();
      fake.imageMode = 'url';
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'by url', width: 256, height: 256, count: 2 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const downloads = fake.seen().filter((r) => r.method === 'GET');
      assert.equal(downloads.length, 2);
      for (const d of downloads) assert.equal(d.headers.authorization, `Bearer ${OPERATOR_KEY}`, 'the own origin gets the key');
      for (const [i, image] of job.output.images.entries()) assert.equal(sha256(await mediaBytes(t, image.url)), sha256(fake.lastImages[i]!));
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('fewer images than asked are charged for the images that came; none at all fails PROVIDER_ERROR uncharged', async () => {
      const t = await tenant();
      const one = makePng(8, 8, 42);
      fake.script('/v1/images/generations', { json: { created: 1, data: [{ b64_json: one.toString('base64') }] } });
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'two please', width: 256, height: 256, count: 2 });
      assert.equal(job.status, 'completed');
      assert.equal(job.output.images.length, 1);
      assert.equal(job.costMillicents, IMAGE_PRICE.perImageMillicents);
      fake.script('/v1/images/generations', { json: { created: 1, data: [] } });
      const none = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'none', width: 256, height: 256, count: 2 });
      assert.deepEqual([none.status, none.errorCode, none.costMillicents], ['failed', 'PROVIDER_ERROR', 0]);
      assert.equal((await balance(ctx, t)).totalMillicents, CREDITS - IMAGE_PRICE.perImageMillicents);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('reference images go to /images/edits as multipart files with their stored bytes', async () => {
      const t = await tenant();
      const refBytes = await png(32, 32);
      const up = await upload(ctx, t, refBytes);
      assert.equal(up.statusCode, 200, up.body);
      const mediaId = up.json().data.id as string;
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'like this', width: 256, height: 256, count: 1, referenceMediaIds: [mediaId] });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const [req] = fake.seen('/v1/images/edits');
      assert.ok(req?.form, 'a multipart request');
      assert.equal(req.form.fields.model, 'dall-e-2');
      assert.equal(req.form.fields.prompt, 'like this');
      assert.equal(req.form.fields.n, '1');
      assert.equal(req.form.files.length, 1);
      assert.equal(req.form.files[0]!.sha256, sha256(refBytes));
      assert.equal(req.form.files[0]!.type, 'image/png');
      assert.equal(req.headers.authorization, `Bearer ${OPERATOR_KEY}`);
      assert.equal(fake.seen('/v1/images/generations').length, 0);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('speech.generate stores the audio, sends the file voice, and charges per thousand characters; a keyless provider gets no Authorization', async () => {
      const t = await tenant();
      const text = 'Bonjour, ça va? 🎉';
      const job = await runQueuedToEnd(ctx, t, 'speech.generate', { text, format: 'wav' });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const [req] = fake.seen('/v1/audio/speech');
      assert.deepEqual(req!.json, { model: 'tts-test', input: text, voice: 'nova', response_format: 'wav' });
      assert.equal(req!.headers.authorization, undefined, 'no Authorization header to a keyless server');
      assert.equal(job.output.audio.mimeType, 'audio/wav');
      assert.equal(sha256(await mediaBytes(t, job.output.audio.url)), sha256(fake.lastSpeech!));
      assert.deepEqual({ provider: job.output.provider, model: job.output.model, format: job.output.format, durationSeconds: job.output.durationSeconds }, { provider: 'keyless', model: 'tts-test', format: 'wav', durationSeconds: 0.5 });
      assertResultShape('speech.generate', job.output);
      const characters = [...text].length;
      assert.equal(job.output.characters, characters);
      assert.equal(job.costMillicents, Math.ceil((SPEECH_PRICE.perThousandCharactersMillicents * characters) / 1000));
      // The input's voice wins over the file's; mp3 by default.
      const mp3Job = await runQueuedToEnd(ctx, t, 'speech.generate', { text: 'hi', voice: 'echo' });
      assert.equal(mp3Job.status, 'completed', JSON.stringify(mp3Job));
      assert.equal(fake.seen('/v1/audio/speech')[1]!.json.voice, 'echo');
      assert.equal(mp3Job.output.audio.mimeType, 'audio/mpeg');
      assert.equal(mp3Job.output.format, 'mp3');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a personal provider key is used instead of the operator key: no credits move, retry is 409 PERSONAL_PROVIDER_KEY, and the key appears nowhere', async () => {
      const t = await tenant();
      const set = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/provider-keys`, { provider: 'fake', apiKey: PERSONAL_KEY });
      assert.equal(set.statusCode, 200, set.body);
      const before = await balance(ctx, t);

      const ok = await run(ctx, t, 'image.generate', { prompt: 'mine', width: 256, height: 256, count: 1 });
      assert.equal(ok.statusCode, 202, ok.body);
      assert.equal((await balance(ctx, t)).reservedMillicents, 0, 'nothing is held');
      await drain(ctx);
      const done = await getJob(ctx, t, ok.json().data.jobId);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(fake.seen('/v1/images/generations')[0]!.headers.authorization, `Bearer ${PERSONAL_KEY}`);
      assert.equal((await jobRow(done.id)).funding, 'provider_key');

      // The provider refuses the key: the job fails PROVIDER_AUTH, and a notification is added.
      fake.script('/v1/images/generations', { status: 401, json: { error: { message: `Incorrect API key provided: ${PERSONAL_KEY.slice(0, 6)}***${PERSONAL_KEY.slice(-4)}. (${PERSONAL_KEY})`, type: 'invalid_request_error', code: 'invalid_api_key' } } });
      const bad = await run(ctx, t, 'image.generate', { prompt: 'refused', width: 256, height: 256, count: 1 });
      assert.equal(bad.statusCode, 202, bad.body);
      await drain(ctx);
      const failed = await getJob(ctx, t, bad.json().data.jobId);
      assert.deepEqual([failed.status, failed.errorCode], ['failed', 'PROVIDER_AUTH']);
      const retry = await call(ctx, 'POST', `/v1/jobs/${failed.id}/retry`, { secret: t.secret, workspaceId: t.workspace.id, headers: { 'idempotency-key': randomUUID() } });
      assert.equal(retry.statusCode, 409, retry.body);
      assert.equal(retry.json().code, 'PERSONAL_PROVIDER_KEY');
      const notes = await ctx.deps.db.selectFrom('notifications').selectAll().where('workspace_id', '=', t.workspace.id).execute();
      assert.ok(notes.some((n) => JSON.stringify(n).includes('fake')), 'the refused key is notified');

      const after = await balance(ctx, t);
      assert.deepEqual([after.totalMillicents, after.reservedMillicents], [before.totalMillicents, before.reservedMillicents], 'no credits moved');
      // The key is nowhere: job rows, outputs, results, events, notifications, logs.
      const rows = await ctx.deps.db.selectFrom('jobs').selectAll().where('workspace_id', '=', t.workspace.id).execute();
      const events = await ctx.deps.db.selectFrom('events').selectAll().where('workspace_id', '=', t.workspace.id).execute();
      assert.ok(logLines.length > 0, 'the requests were logged');
      const public_ = [JSON.stringify(done), JSON.stringify(failed), retry.body, ok.body, bad.body];
      for (const [what, text] of [
        ['job rows', JSON.stringify(rows)],
        ['events', JSON.stringify(events)],
        ['notifications', JSON.stringify(notes)],
        ['public answers', public_.join('\n')],
        ['logs', logLines.join('')],
      ] as const) {
        assert.equal(text.includes(PERSONAL_KEY), false, `the personal key is not in ${what}`);
        assert.equal(text.includes(PERSONAL_KEY.slice(-8)), false, `no part of the personal key is in ${what}`);
        assert.equal(text.includes(PERSONAL_KEY.slice(-4)), false, `not even the masked form the provider quoted is in ${what}`);
      }
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a provider 401 with the operator key fails the job PROVIDER_AUTH and releases the hold', async () => {
      const t = await tenant();
      fake.script('/v1/images/generations', { status: 401, json: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } });
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'x', width: 256, height: 256, count: 1 });
      assert.deepEqual([job.status, job.errorCode, job.costMillicents], ['failed', 'PROVIDER_AUTH', 0]);
      assert.equal(fake.seen('/v1/images/generations').length, 1, 'a refusal is not retried');
      const b = await balance(ctx, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS, 0]);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a provider 400 or 422 (refused input) fails PROVIDER_REJECTED', async () => {
      const t = await tenant();
      fake.script('/v1/images/generations', { status: 400, json: { error: { message: 'Your request was rejected by the safety system.', type: 'invalid_request_error', code: 'content_policy_violation' } } });
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'x', width: 256, height: 256, count: 1 });
      assert.deepEqual([job.status, job.errorCode], ['failed', 'PROVIDER_REJECTED']);
      fake.script('/v1/chat/completions', { status: 422, json: { detail: 'unprocessable' } });
      const chat = (await run(ctx, t, 'chat.generate', { messages: [{ role: 'user', content: 'Hi' }] })).json().data;
      assert.deepEqual([chat.status, chat.errorCode], ['failed', 'PROVIDER_REJECTED']);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('429 with Retry-After: 0 then success completes the job, with one retry seen at the provider', async () => {
      const t = await tenant();
      fake.script('/v1/images/generations', { status: 429, headers: { 'retry-after': '0' }, json: { error: { message: 'Rate limit reached', type: 'requests' } } });
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'again', width: 256, height: 256, count: 1 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      const tries = fake.seen('/v1/images/generations');
      assert.equal(tries.length, 2);
      assert.deepEqual(tries[1]!.json, tries[0]!.json, 'the same request is sent again');
      assert.equal(job.costMillicents, IMAGE_PRICE.perImageMillicents);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('429 that stays after the retries fails PROVIDER_RATE_LIMITED', async () => {
      const t = await tenant();
      const limited = { status: 429, headers: { 'retry-after': '0' }, json: { error: { message: 'Rate limit reached' } } };
      fake.script('/v1/images/generations', limited, limited, limited);
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'x', width: 256, height: 256, count: 1 });
      assert.deepEqual([job.status, job.errorCode, job.costMillicents], ['failed', 'PROVIDER_RATE_LIMITED', 0]);
      assert.equal(fake.seen('/v1/images/generations').length, 3);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('5xx on every try fails PROVIDER_ERROR after maxRetries + 1 requests (backoff without Retry-After)', async () => {
      const t = await tenant();
      const down = { status: 503, json: { error: { message: 'overloaded' } } };
      fake.script('/v1/chat/completions', down, down, down, down);
      const data = (await run(ctx, t, 'chat.generate', { messages: [{ role: 'user', content: 'Hi' }] })).json().data;
      assert.deepEqual([data.status, data.errorCode, data.costMillicents], ['failed', 'PROVIDER_ERROR', 0]);
      assert.equal(fake.seen('/v1/chat/completions').length, 3, 'maxRetries 2: three requests');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a provider slower than requestTimeoutMs fails PROVIDER_TIMEOUT', async () => {
      const t = await tenant();
      // The answer would come after a minute: a job that waited for it would complete, not fail
      // PROVIDER_TIMEOUT (the outcome shows the deadline cut it, not a stopwatch).
      fake.script('/v1/audio/speech', { delayMs: 60_000 });
      const job = await runQueuedToEnd(ctx, t, 'speech.generate', { text: 'slow' });
      assert.deepEqual([job.status, job.errorCode, job.costMillicents], ['failed', 'PROVIDER_TIMEOUT', 0]);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a file of the wrong kind fails PROVIDER_ERROR and is charged for the work the provider did', async () => {
      const t = await tenant();
      // An image where audio was asked for.
      fake.script('/v1/audio/speech', { bytes: makePng(8, 8, 1), contentType: 'audio/mpeg' });
      const speech = await runQueuedToEnd(ctx, t, 'speech.generate', { text: 'twelve chars' });
      assert.deepEqual([speech.status, speech.errorCode], ['failed', 'PROVIDER_ERROR']);
      assert.equal(speech.costMillicents, Math.ceil((SPEECH_PRICE.perThousandCharactersMillicents * 12) / 1000));
      // Text bytes where an image was asked for.
      fake.script('/v1/images/generations', { json: { created: 1, data: [{ b64_json: Buffer.from('not an image at all').toString('base64') }] } });
      const image = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'x', width: 256, height: 256, count: 1 });
      assert.deepEqual([image.status, image.errorCode, image.costMillicents], ['failed', 'PROVIDER_ERROR', IMAGE_PRICE.perImageMillicents]);
      assert.equal((await balance(ctx, t)).totalMillicents, CREDITS - speech.costMillicents - image.costMillicents);
      const media = await ctx.deps.db.selectFrom('media').selectAll().where('workspace_id', '=', t.workspace.id).execute();
      assert.equal(media.length, 0, 'nothing was stored');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('an operation the file does not map is OPERATION_UNAVAILABLE on estimates and runs, and GET /v1/tools omits it', async () => {
      const t = await tenant();
      const input = { prompt: 'a short film', durationSeconds: 5 };
      const estimate = await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'video.generate', input } });
      assert.equal(estimate.statusCode, 400, estimate.body);
      assert.equal(estimate.json().code, 'OPERATION_UNAVAILABLE');
      const ran = await run(ctx, t, 'video.generate', input);
      assert.equal(ran.statusCode, 400, ran.body);
      assert.equal(ran.json().code, 'OPERATION_UNAVAILABLE');
      const tools = await call(ctx, 'GET', '/v1/tools', { secret: t.secret, workspaceId: t.workspace.id });
      const ops = tools.json().data.items.flatMap((tool: any) => tool.operations.map((o: any) => o.operationId)).sort();
      assert.deepEqual(ops, ['chat.generate', 'image.generate', 'link.preview', 'speech.generate']);
      const b = await balance(ctx, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS, 0]);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('no provider key, the operator\'s or a workspace\'s, appears in any log line the service wrote', () => {
      assert.ok(logLines.length > 0);
      const all = logLines.join('');
      for (const key of [OPERATOR_KEY, PERSONAL_KEY]) {
        assert.equal(all.includes(key), false);
        assert.equal(all.includes(key.slice(-8)), false);
      }
    });
  });
}

describe('openai adapter: the attempt signal', () => {
  test('an attempt aborted by its caller (cancel, shutdown, deadline) rethrows the abort reason unchanged, not a ProviderError', async () => {
    const fake = await FakeOpenAi.start();
    const egress = createEgress({ allowCidrs: ['127.0.0.1/32'] });
    try {
      const abort = new AbortController();
      const reason = new DOMException('cancelled by the test', 'AbortError');
      fake.script('/v1/chat/completions', { delayMs: 60_000 });
      const input = { messages: [{ role: 'user', content: 'wait' }], maxTokens: 8 };
      const attempt = runAdapter({ file: providersFile(fake), env: { FAKE_OPENAI_KEY: OPERATOR_KEY }, operationId: 'chat.generate', input, egress, signal: abort.signal }).result;
      // The answer never comes in time (a minute): only the abort can end the attempt, with its reason.
      setTimeout(() => abort.abort(reason), 100);
      await assert.rejects(attempt, (err) => err === reason);
      assert.equal(fake.seen('/v1/chat/completions').length, 1, 'an aborted call is not retried');
    } finally {
      await egress.close();
      await fake.close();
    }
  });
});
