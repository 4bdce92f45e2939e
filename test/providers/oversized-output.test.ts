/**
 * Oversized and excessive provider output through every remote adapter (issue 39, item 3): a chat
 * answer over its bound, a declared or streamed file over the file bound, a Replicate output over
 * 16 MiB, more images than asked. Each fails the job PROVIDER_ERROR, charges only the work the
 * provider reports as done, stores nothing and leaves no hold; the ledger invariants hold after
 * each. Memory stays bounded: the fakes count what they wrote before the service stopped reading,
 * which must stay below what they had to send.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPENAI_MAX_BYTES } from '../../src/providers/openai.js';
import { MAX_PROVIDER_FILE_BYTES } from '../../src/providers/provider-files.js';
import { MAX_OUTPUT_TEXT_BYTES } from '../../src/providers/replicate-output.js';
import { FakeOpenAi } from '../support/fake-openai.js';
import { FakeReplicate } from '../support/fake-replicate.js';
import { createTestContext, disposeTestContext, type TestContext } from '../support/harness.js';
import { testDatabaseNames } from '../support/databases.js';
import { balance, run, runQueuedToEnd } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { png, upload } from '../support/media.js';
import { seedTenant, type Tenant } from '../support/seed.js';

const MiB = 1024 * 1024;
const CHAT_PRICE = { baseMillicents: 20, inputTokenMillicents: 1, outputTokenMillicents: 3 };
const IMAGE_PRICE = { perImageMillicents: 4000 };
const SPEECH_PRICE = { perThousandCharactersMillicents: 5000 };
const REPLICATE_PRICE = { perImageMillicents: 4000, perPredictSecondMillicents: 10 };
const CREDITS = 1_000_000;

for (const dbName of testDatabaseNames()) {
  describe(`oversized and excessive provider output [${dbName}]`, () => {
    let openai: FakeOpenAi;
    let replicate: FakeReplicate;
    let ctx: TestContext;
    let dir: string;

    before(async () => {
      openai = await FakeOpenAi.start();
      replicate = await FakeReplicate.start();
      dir = mkdtempSync(join(tmpdir(), 'was-oversized-'));
      const file = join(dir, 'providers.json');
      writeFileSync(
        file,
        JSON.stringify({
          providers: {
            openai: { type: 'openai', baseUrl: openai.baseUrl, apiKeyEnv: 'OVERSIZED_OPENAI', privateNetwork: true, maxRetries: 0 },
            rep: { type: 'replicate', baseUrl: replicate.baseUrl, apiKeyEnv: 'OVERSIZED_REPLICATE', privateNetwork: true, maxRetries: 0 },
          },
          operations: {
            'chat.generate': { provider: 'openai', model: 'gpt-4o-mini', price: CHAT_PRICE },
            'image.generate': { provider: 'openai', model: 'dall-e-2', price: IMAGE_PRICE },
            'speech.generate': { provider: 'openai', model: 'tts-1', price: SPEECH_PRICE },
            'headshot.generate': { provider: 'rep', model: 'owner/headshots', input: { images: '{{referenceMediaIds}}', num_outputs: '{{count}}' }, price: REPLICATE_PRICE, pollIntervalMs: 10 },
          },
        }),
      );
      ctx = await createTestContext(dbName, { env: { PROVIDERS_FILE: file, OVERSIZED_OPENAI: 'sk-oversized-0123456789', OVERSIZED_REPLICATE: 'r8_oversized_0123456789' } });
    });

    after(async () => {
      if (ctx) await disposeTestContext(ctx);
      await openai?.close();
      await replicate?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    beforeEach(() => {
      openai.reset();
      replicate.reset();
    });

    /** The job failed PROVIDER_ERROR at `cost`; nothing of it is stored; no hold remains; the ledger holds. */
    async function assertFailedCleanly(t: Tenant, job: { id: string; status: string; errorCode: string; costMillicents: number }, cost: number, before: number) {
      assert.deepEqual([job.status, job.errorCode, job.costMillicents], ['failed', 'PROVIDER_ERROR', cost]);
      const media = await ctx.deps.db.selectFrom('media').select('id').where('job_id', '=', job.id).execute();
      assert.equal(media.length, 0, 'nothing stored');
      const b = await balance(ctx, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [before - cost, 0], 'charged only the consumed work; no hold remains');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    }

    async function uploaded(t: Tenant): Promise<string> {
      const res = await upload(ctx, t, await png(16, 16));
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.id as string;
    }

    test('chat answer over its cap: a declared length over 4 MiB fails PROVIDER_ERROR uncharged, without reading the body', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      openai.script('/v1/chat/completions', { stream: { bytes: 64 * MiB, declareLength: true } });
      const res = await run(ctx, t, 'chat.generate', { messages: [{ role: 'user', content: 'long' }], maxTokens: 16 });
      assert.equal(res.statusCode, 200, res.body);
      await assertFailedCleanly(t, res.json().data, 0, CREDITS);
      assert.ok(openai.streamedBytes < OPENAI_MAX_BYTES.chat, `the body was not read (${openai.streamedBytes} bytes written)`);
    });

    test('chat answer over its cap: a streamed answer past 4 MiB fails PROVIDER_ERROR uncharged, read no further than the cap', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      openai.script('/v1/chat/completions', { stream: { bytes: 64 * MiB } });
      const res = await run(ctx, t, 'chat.generate', { messages: [{ role: 'user', content: 'long' }], maxTokens: 16 });
      assert.equal(res.statusCode, 200, res.body);
      await assertFailedCleanly(t, res.json().data, 0, CREDITS);
      assert.ok(openai.streamedBytes < 16 * MiB, `reading stopped near the cap (${openai.streamedBytes} bytes written of 64 MiB)`);
    });

    test('file over the file cap: an image URL whose declared length passes 256 MiB fails PROVIDER_ERROR, charged the image the provider made, nothing stored', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const url = openai.streamFile('huge.png', { bytes: MAX_PROVIDER_FILE_BYTES + MiB, declareLength: true });
      openai.script('/v1/images/generations', { json: { created: 1, data: [{ url }] } });
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'huge', width: 256, height: 256, count: 1 });
      await assertFailedCleanly(t, job, IMAGE_PRICE.perImageMillicents, CREDITS);
      assert.ok(openai.streamedBytes < 16 * MiB, `the body was not read (${openai.streamedBytes} bytes written)`);
    });

    test('file over the file cap: speech audio streamed past 64 MiB fails PROVIDER_ERROR, charged its characters, nothing stored', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      openai.script('/v1/audio/speech', { stream: { bytes: 2 * OPENAI_MAX_BYTES.speech, contentType: 'audio/mpeg' } });
      const job = await runQueuedToEnd(ctx, t, 'speech.generate', { text: 'twelve chars' });
      await assertFailedCleanly(t, job, Math.ceil((SPEECH_PRICE.perThousandCharactersMillicents * 12) / 1000), CREDITS);
      assert.ok(openai.streamedBytes < 2 * OPENAI_MAX_BYTES.speech, `reading stopped at the cap (${openai.streamedBytes} bytes written)`);
    });

    test('more images than asked: an OpenAI answer with 3 images for n=2 fails PROVIDER_ERROR, charged the 2 asked for, nothing stored', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const image = (await png(256, 256)).toString('base64');
      openai.script('/v1/images/generations', { json: { created: 1, data: [{ b64_json: image }, { b64_json: image }, { b64_json: image }] } });
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'two', width: 256, height: 256, count: 2 });
      await assertFailedCleanly(t, job, 2 * IMAGE_PRICE.perImageMillicents, CREDITS);
    });

    test('file over the file cap: a Replicate file whose declared length passes 256 MiB fails PROVIDER_ERROR, charged its prediction time, nothing stored', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const ref = await uploaded(t);
      replicate.next({ output: [replicate.putStream('huge.png', { bytes: MAX_PROVIDER_FILE_BYTES + MiB, declareLength: true })], predictTime: 2.5 });
      const job = await runQueuedToEnd(ctx, t, 'headshot.generate', { referenceMediaIds: [ref], count: 1 });
      await assertFailedCleanly(t, job, 3 * REPLICATE_PRICE.perPredictSecondMillicents, CREDITS);
      assert.ok(replicate.streamedBytes < 16 * MiB, `the body was not read (${replicate.streamedBytes} bytes written)`);
    });

    test('file over the file cap: a Replicate file streamed past 256 MiB fails PROVIDER_ERROR, charged its prediction time, read no further than the cap', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const ref = await uploaded(t);
      const total = MAX_PROVIDER_FILE_BYTES + 64 * MiB;
      replicate.next({ output: [replicate.putStream('endless.png', { bytes: total })], predictTime: 1 });
      const job = await runQueuedToEnd(ctx, t, 'headshot.generate', { referenceMediaIds: [ref], count: 1 });
      await assertFailedCleanly(t, job, REPLICATE_PRICE.perPredictSecondMillicents, CREDITS);
      assert.ok(replicate.streamedBytes < total, `reading stopped at the cap (${replicate.streamedBytes} bytes written of ${total})`);
      assert.equal(replicate.calls('file').length, 1, 'an oversized file is not downloaded again');
    });

    test('Replicate text output over 16 MiB fails PROVIDER_ERROR, charged its prediction time, nothing downloaded or stored', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const ref = await uploaded(t);
      replicate.next({ output: [replicate.putFile('fine.png', await png(8, 8)), 'x'.repeat(MAX_OUTPUT_TEXT_BYTES)], predictTime: 4 });
      const job = await runQueuedToEnd(ctx, t, 'headshot.generate', { referenceMediaIds: [ref], count: 1 });
      await assertFailedCleanly(t, job, 4 * REPLICATE_PRICE.perPredictSecondMillicents, CREDITS);
      assert.equal(replicate.calls('file').length, 0, 'nothing downloaded');
    });

    test('more images than asked: a Replicate prediction with 3 files for count 2 fails PROVIDER_ERROR, charged its prediction time only, nothing downloaded or stored', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const ref = await uploaded(t);
      const files = await Promise.all([1, 2, 3].map(async (i) => replicate.putFile(`extra-${i}.png`, await png(8 + i, 8))));
      replicate.next({ output: files, predictTime: 1.5 });
      const job = await runQueuedToEnd(ctx, t, 'headshot.generate', { referenceMediaIds: [ref], count: 2 });
      await assertFailedCleanly(t, job, 2 * REPLICATE_PRICE.perPredictSecondMillicents, CREDITS);
      assert.equal(replicate.calls('file').length, 0, 'nothing downloaded');
    });
  });
}
