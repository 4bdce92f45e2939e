/**
 * Issue 37, item 5 (every adapter result checked): each operation an adapter serves, run end to
 * end through the worker on that adapter (the OpenAI-compatible adapter for chat, images and
 * speech; the Replicate adapter for every operation a Replicate model can serve, headshot,
 * three-d.generate, three-d.rig and voice.clone among them), produces a complete output its
 * contract's resultSchema accepts, names the provider and model of the route, and is charged
 * within its maximum. The providers are the strict fakes of test/support (the real wire formats).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileStrict } from '../../src/http/validation.js';
import { findOperation } from '../../src/operations/registry.js';
import type { OperationId } from '../../src/operations/ids.js';
import { testDatabaseNames } from '../support/databases.js';
import { createTestContext, disposeTestContext, type TestContext } from '../support/harness.js';
import { drain, readCompleteOutput, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { glb, mp4, png, wav } from '../support/media.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { operationInputs } from '../support/operation-inputs.js';
import { FakeOpenAi } from '../support/fake-openai.js';
import { FakeReplicate } from '../support/fake-replicate.js';

const CREDITS = 100_000_000;
const PRICE = { perRunMillicents: 100 };

/** What each Replicate-served operation's model returns: a file of the operation's kind. */
const REPLICATE_OUTPUTS: Partial<Record<OperationId, { name: string; bytes: () => Promise<Buffer> | Buffer }>> = {
  'image.generate': { name: 'image.png', bytes: () => png(256, 256) },
  'headshot.generate': { name: 'headshot.png', bytes: () => png(64, 64) },
  'background.remove': { name: 'cutout.png', bytes: () => png(32, 32) },
  'video.generate': { name: 'clip.mp4', bytes: mp4 },
  'music.generate': { name: 'music.wav', bytes: () => wav(8000) },
  'speech.generate': { name: 'speech.wav', bytes: () => wav(8000) },
  'three-d.generate': { name: 'model.glb', bytes: glb },
  'three-d.rig': { name: 'rigged.glb', bytes: glb },
  'voice.clone': { name: 'sample.wav', bytes: () => wav(8000) },
};

function writeFile(dir: string, name: string, json: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(json));
  return path;
}

for (const dbName of testDatabaseNames()) {
  describe(`adapter results against their contracts [${dbName}]`, () => {
    let dir: string;
    let openai: FakeOpenAi;
    let replicate: FakeReplicate;
    /** chat, image and speech on the OpenAI-compatible adapter; the rest on Replicate. */
    let mixed: TestContext;
    /** image and speech on Replicate (the operations both adapters serve). */
    let onReplicate: TestContext;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'was-adapter-results-'));
      openai = await FakeOpenAi.start();
      replicate = await FakeReplicate.start();
      const providers = {
        oa: { type: 'openai', baseUrl: openai.baseUrl, apiKeyEnv: 'OA_KEY', privateNetwork: true, maxRetries: 0 },
        rep: { type: 'replicate', baseUrl: replicate.baseUrl, apiKeyEnv: 'REP_TOKEN', privateNetwork: true, maxRetries: 0 },
      };
      const onRep = (opId: string) => ({ provider: 'rep', model: `owner/${opId.replace('.', '-')}`, pollIntervalMs: 10, price: PRICE });
      const replicateOps = ['headshot.generate', 'background.remove', 'video.generate', 'music.generate', 'three-d.generate', 'three-d.rig', 'voice.clone'];
      const mixedFile = writeFile(dir, 'mixed.json', {
        providers,
        operations: {
          'chat.generate': { provider: 'oa', model: 'gpt-4o-mini', price: { inputTokenMillicents: 1, outputTokenMillicents: 2 } },
          'image.generate': { provider: 'oa', model: 'gpt-image-1', price: { perImageMillicents: 1000 } },
          'speech.generate': { provider: 'oa', model: 'tts-1', price: { perThousandCharactersMillicents: 1500 } },
          ...Object.fromEntries(replicateOps.map((op) => [op, onRep(op)])),
        },
      });
      const replicateFile = writeFile(dir, 'replicate.json', {
        providers,
        operations: { 'image.generate': onRep('image.generate'), 'speech.generate': onRep('speech.generate') },
      });
      const env = { OA_KEY: 'sk-results-0123456789', REP_TOKEN: 'r8-results-0123456789' };
      [mixed, onReplicate] = await Promise.all([
        createTestContext(dbName, { env: { PROVIDERS_FILE: mixedFile, ...env } }),
        createTestContext(dbName, { env: { PROVIDERS_FILE: replicateFile, ...env } }),
      ]);
    });

    after(async () => {
      await Promise.all([mixed, onReplicate].filter(Boolean).map((c) => disposeTestContext(c)));
      if (openai) await openai.close();
      if (replicate) await replicate.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** Runs `opId` on `ctx` and returns its complete output, checked against the contract. */
    async function resultOf(ctx: TestContext, t: Tenant, opId: OperationId, input: Record<string, unknown>, provider: string): Promise<Record<string, unknown>> {
      const op = findOperation(opId)!;
      const output = REPLICATE_OUTPUTS[opId];
      if (provider === 'rep' && output) replicate.next({ output: [replicate.putFile(`${opId}-${output.name}`, await output.bytes())] });
      const res = await run(ctx, t, opId, input);
      assert.ok(res.statusCode === 200 || res.statusCode === 202, `${opId}: ${res.body}`);
      const body = res.json().data;
      let result: Record<string, unknown>;
      if (body.kind === 'result') {
        assert.equal(body.status, 'completed', `${opId}: ${res.body}`);
        result = body.result;
      } else {
        await drain(ctx);
        const job = (await ctx.app.inject({ method: 'GET', url: `/v1/jobs/${body.jobId}`, headers: { authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id } })).json().data;
        assert.equal(job.status, 'completed', `${opId} on ${provider}: ${JSON.stringify(job)}`);
        assert.ok(job.costMillicents <= job.maximumCostMillicents, `${opId}: charged within its maximum`);
        result = JSON.parse((await readCompleteOutput(ctx, t, body.jobId)).bytes.toString('utf8'));
      }
      const validate = compileStrict(op.resultSchema as object);
      assert.ok(validate(result), `${opId} on ${provider}: ${JSON.stringify(result).slice(0, 500)}: ${JSON.stringify(validate.errors)}`);
      assert.equal(result.provider, provider, `${opId}: the result names the route's provider`);
      return result;
    }

    test('adapter results: chat, image and speech on the OpenAI-compatible adapter, and every operation a Replicate model serves, match their contracts', async () => {
      const t = await seedTenant(mixed.deps, { credits: CREDITS });
      const { inputs } = await operationInputs(mixed, t);
      for (const opId of ['chat.generate', 'image.generate', 'speech.generate'] as const) {
        const result = await resultOf(mixed, t, opId, inputs[opId]!, 'oa');
        assert.equal(typeof result.model, 'string', opId);
      }
      for (const opId of ['headshot.generate', 'background.remove', 'video.generate', 'music.generate', 'three-d.generate', 'three-d.rig', 'voice.clone'] as const) {
        const result = await resultOf(mixed, t, opId, inputs[opId]!, 'rep');
        assert.equal(result.model, `owner/${opId.replace('.', '-')}`, opId);
      }
      await assertLedgerInvariants(mixed.deps, t.workspace.id);
    });

    test('adapter results: image and speech on the Replicate adapter match their contracts', async () => {
      const t = await seedTenant(onReplicate.deps, { credits: CREDITS });
      const { inputs } = await operationInputs(onReplicate, t);
      for (const opId of ['image.generate', 'speech.generate'] as const) await resultOf(onReplicate, t, opId, inputs[opId]!, 'rep');
      await assertLedgerInvariants(onReplicate.deps, t.workspace.id);
    });
  });
}
