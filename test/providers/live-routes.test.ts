/**
 * Live keys never run simulated work (issue 34 item 4; docs/decisions.md "Test mode"): without a
 * providers file and without SIMULATE_LIVE, a live key's tools are exactly link.preview and the
 * local engines whose programs this machine has (ffmpeg: video.edit, espeak-ng: speech.generate,
 * the scanner: security.scan, the rigger: three-d.rig); every other operation is 400 OPERATION_UNAVAILABLE (estimates,
 * runs). A test key on the same server gets all fourteen, simulated. Ledger invariants after each.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testScopeOf } from '../../src/lib/livemode.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { assertError, assertOk } from '../support/assertions.js';
import { call, describeEachDatabase, type TestContext } from '../support/harness.js';
import { run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';

type Caller = Pick<Tenant, 'secret' | 'workspace'>;

async function toolIds(ctx: TestContext, t: Caller): Promise<string[]> {
  const items = assertOk(await call(ctx, 'GET', '/v1/tools', { secret: t.secret, workspaceId: t.workspace.id })).data.items;
  return items.flatMap((tool: { operations: { operationId: string }[] }) => tool.operations.map((o) => o.operationId)).sort();
}

/** What this machine can really do, from the programs the service found at start-up. */
function machineOperations(ctx: TestContext): string[] {
  const engines = ctx.deps.providers.engines;
  const ops = ['link.preview', 'security.scan', 'three-d.rig'];
  if (engines.ffmpeg && engines.ffprobe) ops.push('video.edit');
  if (engines.espeak) ops.push('speech.generate');
  return ops.sort();
}

describeEachDatabase(
  'live keys without a providers file',
  (getCtx) => {
    test('rule "live keys never run simulated work": the tools list is link.preview plus the installed engines; chat.generate is OPERATION_UNAVAILABLE; a test key gets all fourteen', async () => {
      const ctx = getCtx();
      if (process.env.CI === 'true') {
        // CI installs ffmpeg and espeak-ng (.ci/run): the machine's list is then known in full.
        assert.deepEqual(machineOperations(ctx), ['link.preview', 'security.scan', 'speech.generate', 'three-d.rig', 'video.edit']);
      }
      const live = await seedTenant(ctx.deps, { credits: 100_000 });
      const { key, secret } = await seedKey(ctx.deps, live.user.id, [live.workspace.id], { mode: 'test' });
      const tk = { ...live, key, secret };
      assert.deepEqual(await toolIds(ctx, live), machineOperations(ctx));
      assert.deepEqual(await toolIds(ctx, tk), [...OPERATION_IDS].sort());

      const chat = { messages: [{ role: 'user', content: 'hi' }], maxTokens: 10 };
      const refused = assertError(await run(ctx, live, 'chat.generate', chat), 400, 'OPERATION_UNAVAILABLE');
      assert.deepEqual(refused.details, { operationId: 'chat.generate' });
      assertError(await call(ctx, 'POST', '/v1/estimates', { secret: live.secret, workspaceId: live.workspace.id, body: { operationId: 'image.generate', input: { prompt: 'a cat' } } }), 400, 'OPERATION_UNAVAILABLE');
      const balance = assertOk(await call(ctx, 'GET', '/v1/balance', { secret: live.secret, workspaceId: live.workspace.id })).data;
      assert.equal(balance.totalMillicents, 100_000, 'nothing was charged');

      // The same request with a test key runs, simulated, on the test balance.
      const simulated = await run(ctx, tk, 'chat.generate', chat);
      assert.equal(simulated.statusCode, 200, simulated.body);
      assert.equal(simulated.json().data.result.provider, 'simulated');
      await assertLedgerInvariants(ctx.deps, live.workspace.id);
      await assertLedgerInvariants(ctx.deps, testScopeOf(live.workspace.id));
    });

    test('rule "the machine\'s engines are real": speech.generate with a live key runs on espeak-ng when it is installed', async (t) => {
      const ctx = getCtx();
      if (!ctx.deps.providers.engines.espeak) {
        if (process.env.CI === 'true') assert.fail('espeak-ng is missing on CI');
        t.skip('espeak-ng is not installed here');
        return;
      }
      const live = await seedTenant(ctx.deps, { credits: 1_000_000 });
      const res = await run(ctx, live, 'speech.generate', { text: 'Hello there', format: 'wav' });
      assert.ok(res.statusCode === 200 || res.statusCode === 202, res.body);
      const route = ctx.deps.providers.route('speech.generate', 'live')!;
      assert.deepEqual([route.providerName, route.spec?.engine], ['local', 'espeak-ng']);
      await assertLedgerInvariants(ctx.deps, live.workspace.id);
    });
  },
  { env: { SIMULATE_LIVE: 'false' } },
);
