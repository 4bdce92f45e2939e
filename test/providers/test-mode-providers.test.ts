/**
 * Test keys never reach a provider (issue 34; docs/decisions.md "Test mode"): with a providers file
 * that maps every operation it can to the OpenAI and Replicate fakes and security.scan to the local
 * scanner, each of the fourteen operations run with a test key completes on the simulated provider,
 * the fakes count zero requests, and the live balance does not move; the same file's live routes do
 * reach the fakes (so the count of zero means something). Ledger invariants in both modes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testScopeOf } from '../../src/lib/livemode.js';
import { OPERATIONS } from '../../src/operations/registry.js';
import type { OperationId } from '../../src/operations/ids.js';
import { assertOk } from '../support/assertions.js';
import { testDatabaseNames } from '../support/databases.js';
import { FakeOpenAi } from '../support/fake-openai.js';
import { FakeReplicate } from '../support/fake-replicate.js';
import { call, createTestContext, disposeTestContext, type TestContext } from '../support/harness.js';
import { drain, readCompleteOutput, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { glb, mp4, png, upload, wav } from '../support/media.js';
import { writeProvidersFile } from '../support/providers-file.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { verifyHost } from '../support/webhook-hosts.js';

const PRICE = { perRunMillicents: 100 };
const ON_REPLICATE: OperationId[] = ['headshot.generate', 'background.remove', 'video.generate', 'music.generate', 'three-d.generate', 'three-d.rig', 'voice.clone'];

for (const dbName of testDatabaseNames()) {
  describe(`test keys never reach a provider [${dbName}]`, () => {
    let dir: string;
    let openai: FakeOpenAi;
    let replicate: FakeReplicate;
    let ctx: TestContext;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'was-test-mode-providers-'));
      openai = await FakeOpenAi.start();
      replicate = await FakeReplicate.start();
      const file = writeProvidersFile(dir, 'providers.json', {
        providers: {
          oa: { type: 'openai', baseUrl: openai.baseUrl, apiKeyEnv: 'OA_KEY', privateNetwork: true, maxRetries: 0 },
          rep: { type: 'replicate', baseUrl: replicate.baseUrl, apiKeyEnv: 'REP_TOKEN', privateNetwork: true, maxRetries: 0 },
          here: { type: 'local' },
        },
        operations: {
          'chat.generate': { provider: 'oa', model: 'gpt-4o-mini', price: { inputTokenMillicents: 1, outputTokenMillicents: 2 } },
          'image.generate': { provider: 'oa', model: 'gpt-image-1', price: { perImageMillicents: 1000 } },
          'speech.generate': { provider: 'oa', model: 'tts-1', price: { perThousandCharactersMillicents: 1500 } },
          'security.scan': { provider: 'here', engine: 'scanner', price: PRICE },
          ...Object.fromEntries(ON_REPLICATE.map((op) => [op, { provider: 'rep', model: `owner/${op.replace('.', '-')}`, pollIntervalMs: 10, price: PRICE }])),
        },
      });
      ctx = await createTestContext(dbName, { env: { PROVIDERS_FILE: file, OA_KEY: 'sk-test-mode-0123456789', REP_TOKEN: 'r8-test-mode-0123456789' } });
    });

    after(async () => {
      if (ctx) await disposeTestContext(ctx);
      if (openai) await openai.close();
      if (replicate) await replicate.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    async function inputs(t: Tenant, host: string): Promise<Record<OperationId, Record<string, unknown>>> {
      const id = async (bytes: Buffer, type: string, filename: string) => assertOk(await upload(ctx, t, bytes, { type, filename })).data.id as string;
      const image = await id(await png(64, 64), 'image/png', 'in.png');
      const audio = await id(wav(), 'audio/wav', 'in.wav');
      const model = await id(glb(), 'model/gltf-binary', 'in.glb');
      const video = await id(mp4(), 'video/mp4', 'in.mp4');
      return {
        'link.preview': { url: 'https://example.com/' },
        'chat.generate': { messages: [{ role: 'user', content: 'Hello' }], maxTokens: 16 },
        'speech.generate': { text: 'Hello there', format: 'wav' },
        'image.generate': { prompt: 'a cat', width: 256, height: 256, count: 1 },
        'headshot.generate': { referenceMediaIds: [image], count: 1 },
        'background.remove': { mediaId: image },
        'video.generate': { prompt: 'waves', durationSeconds: 2 },
        'video.edit': { mediaId: video, edits: [{ type: 'mute' }] },
        'music.generate': { prompt: 'calm piano', durationSeconds: 5 },
        'three-d.generate': { prompt: 'a chair' },
        'three-d.rig': { mediaId: model },
        'sprite.generate': { prompt: 'a walking knight', frames: 2, frameWidth: 64, frameHeight: 64 },
        'voice.clone': { referenceMediaIds: [audio], name: 'Narrator' },
        'security.scan': { url: `https://${host}/` },
      };
    }

    test('rule "nothing a test key does reaches a provider": all fourteen operations run simulated, the fakes count zero requests, live credits stay', async () => {
      const live = await seedTenant(ctx.deps, { credits: 1_000_000 });
      const { key, secret } = await seedKey(ctx.deps, live.user.id, [live.workspace.id], { mode: 'test' });
      const t = { ...live, key, secret };
      const host = await verifyHost(ctx, live.workspace.id);
      const byOp = await inputs(t, host);
      openai.reset();
      replicate.requests.length = 0;
      const liveBalance = assertOk(await call(ctx, 'GET', '/v1/balance', { secret: live.secret, workspaceId: live.workspace.id })).data;
      assert.equal(OPERATIONS.length, 14);
      for (const op of OPERATIONS) {
        const res = await run(ctx, t, op.id, byOp[op.id]);
        assert.ok(res.statusCode === 200 || res.statusCode === 202, `${op.id}: ${res.body}`);
        const data = res.json().data;
        let result: Record<string, unknown>;
        if (data.kind === 'result') result = data.result;
        else {
          await drain(ctx);
          const job = assertOk(await call(ctx, 'GET', `/v1/jobs/${data.jobId}`, { secret, workspaceId: live.workspace.id })).data;
          assert.equal(job.status, 'completed', `${op.id}: ${JSON.stringify(job)}`);
          assert.equal(job.livemode, false);
          result = JSON.parse((await readCompleteOutput(ctx, t, data.jobId)).bytes.toString('utf8'));
        }
        if (op.id !== 'link.preview') assert.equal(result.provider, 'simulated', `${op.id} ran on the simulated provider`);
      }
      assert.equal(openai.requests.length, 0, 'the OpenAI fake saw no request');
      assert.equal(replicate.requests.length, 0, 'the Replicate fake saw no request');
      assert.deepEqual(assertOk(await call(ctx, 'GET', '/v1/balance', { secret: live.secret, workspaceId: live.workspace.id })).data, liveBalance);
      // The live route of the same deployment does reach the fake.
      const liveChat = await run(ctx, live, 'chat.generate', byOp['chat.generate']);
      assert.equal(liveChat.statusCode, 200, liveChat.body);
      assert.equal(liveChat.json().data.result.provider, 'oa');
      assert.ok(openai.requests.length >= 1, 'a live run reaches the provider');
      await assertLedgerInvariants(ctx.deps, live.workspace.id);
      await assertLedgerInvariants(ctx.deps, testScopeOf(live.workspace.id));
    });
  });
}
