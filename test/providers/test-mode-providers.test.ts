/**
 * Test keys never reach a provider (issue 34; docs/decisions.md "Test mode"): with a providers file
 * that maps every operation it can to the OpenAI and Replicate fakes, video.edit and
 * speech.generate to the local ffmpeg and espeak-ng engines (through shims that count every start
 * of the real programs) and security.scan to the local scanner, each of the fourteen operations
 * run with a test key completes on the simulated provider, the fakes count zero requests, no engine
 * program is started, and the live balance does not move; the same file's live routes do reach
 * the fakes and the engines (so the counts of zero mean something). Ledger invariants in both modes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { operationInputs } from '../support/operation-inputs.js';
import { writeProvidersFile } from '../support/providers-file.js';
import { seedKey, seedTenant } from '../support/seed.js';
import { verifyHost } from '../support/webhook-hosts.js';
import { installedEngines, missingPrograms } from '../support/engines.js';
import { waitUntil } from '../support/wait.js';

/**
 * A shim in `dir` that appends a line to `<dir>/<name>.calls` each time it is started, then runs
 * the real program with the same arguments (no shell parses them: "$@").
 */
function spyProgram(dir: string, name: string, real: string): { path: string; calls: () => string[] } {
  const path = join(dir, name);
  const log = join(dir, `${name}.calls`);
  writeFileSync(path, `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`);
  chmodSync(path, 0o755);
  return { path, calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) };
}

const skipEngines = await missingPrograms('ffmpeg', 'ffprobe', 'espeak');

const PRICE = { perRunMillicents: 100 };
const ON_REPLICATE: OperationId[] = ['headshot.generate', 'background.remove', 'video.generate', 'music.generate', 'three-d.generate', 'three-d.rig', 'voice.clone'];

for (const dbName of testDatabaseNames()) {
  describe(`test keys never reach a provider [${dbName}]`, { skip: skipEngines }, () => {
    let dir: string;
    let openai: FakeOpenAi;
    let replicate: FakeReplicate;
    let ctx: TestContext;
    let programs: Record<'ffmpeg' | 'ffprobe' | 'espeak', ReturnType<typeof spyProgram>>;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'was-test-mode-providers-'));
      const engines = await installedEngines();
      programs = {
        ffmpeg: spyProgram(dir, 'ffmpeg', engines.ffmpeg!.path),
        ffprobe: spyProgram(dir, 'ffprobe', engines.ffprobe!.path),
        espeak: spyProgram(dir, 'espeak-ng', engines.espeak!.path),
      };
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
          'speech.generate': { provider: 'here', engine: 'espeak-ng', price: { perThousandCharactersMillicents: 1500 } },
          'video.edit': { provider: 'here', engine: 'ffmpeg', price: { perSecondMillicents: 100 } },
          'security.scan': { provider: 'here', engine: 'scanner', price: PRICE },
          ...Object.fromEntries(ON_REPLICATE.map((op) => [op, { provider: 'rep', model: `owner/${op.replace('.', '-')}`, pollIntervalMs: 10, price: PRICE }])),
        },
      });
      ctx = await createTestContext(dbName, {
        env: { PROVIDERS_FILE: file, OA_KEY: 'sk-test-mode-0123456789', REP_TOKEN: 'r8-test-mode-0123456789', FFMPEG_PATH: programs.ffmpeg.path, FFPROBE_PATH: programs.ffprobe.path, ESPEAK_NG_PATH: programs.espeak.path },
      });
    });

    after(async () => {
      if (ctx) await disposeTestContext(ctx);
      if (openai) await openai.close();
      if (replicate) await replicate.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });


    test('rule "nothing a test key does reaches a provider": all fourteen operations run simulated, the fakes count zero requests, live credits stay', async () => {
      const live = await seedTenant(ctx.deps, { credits: 1_000_000 });
      const { key, secret } = await seedKey(ctx.deps, live.user.id, [live.workspace.id], { mode: 'test' });
      const t = { ...live, key, secret };
      const host = await verifyHost(ctx, live.workspace.id);
      const { inputs: byOp } = await operationInputs(ctx, t, host);
      openai.reset();
      replicate.requests.length = 0;
      // Program starts from here on (the uploads above may have run ffprobe to inspect a file):
      // a test key's runs may start none.
      const count = () => Object.values(programs).reduce((n, p) => n + p.calls().length, 0);
      const before = count();
      const started = () => count() - before;
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
      assert.equal(started(), 0, 'no engine program was started (ffmpeg, ffprobe, espeak-ng)');
      assert.deepEqual(assertOk(await call(ctx, 'GET', '/v1/balance', { secret: live.secret, workspaceId: live.workspace.id })).data, liveBalance);
      // The live route of the same deployment does reach the fake.
      const liveChat = await run(ctx, live, 'chat.generate', byOp['chat.generate']);
      assert.equal(liveChat.statusCode, 200, liveChat.body);
      assert.equal(liveChat.json().data.result.provider, 'oa');
      assert.ok(openai.requests.length >= 1, 'a live run reaches the provider');
      // And the live routes of the local engines start their programs.
      const speech = await run(ctx, live, 'speech.generate', byOp['speech.generate']);
      assert.ok(speech.statusCode === 200 || speech.statusCode === 202, speech.body);
      await drain(ctx);
      await waitUntil(async () => programs.espeak.calls().filter((line) => !/-version/.test(line)).length, (n) => n >= 1, 'a live speech run to start espeak-ng', 10_000);
      await assertLedgerInvariants(ctx.deps, live.workspace.id);
      await assertLedgerInvariants(ctx.deps, testScopeOf(live.workspace.id));
    });
  });
}
