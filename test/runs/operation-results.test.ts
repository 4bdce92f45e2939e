/**
 * Each operation's result shape lives in its contract (`resultSchema`), whatever provider runs it:
 * every one of the 14 operations, run end to end on the simulated provider, produces a complete
 * output that its schema accepts (with a test key), and /openapi.json publishes each input and
 * result schema. Also the providers file's routing without a remote provider for live keys: on a
 * staging server (SIMULATE_LIVE=true, the only way such a file starts; test keys ignore the file)
 * `"simulated": "fallback"` offers unmapped operations and an operation mapped to "simulated" with
 * prices is charged at the file's prices; on a production server (SIMULATE_LIVE off) a file's
 * unmapped operations are left out.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileStrict } from '../../src/http/validation.js';
import { OPERATIONS } from '../../src/operations/registry.js';
import { assertError, assertOk } from '../support/assertions.js';
import { testDatabaseNames } from '../support/databases.js';
import { admin, call, createTestContext, describeEachDatabase, disposeTestContext, testKeySuite, type TestContext } from '../support/harness.js';
import { drain, readCompleteOutput, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { scopeOf, seedTenant, type Tenant } from '../support/seed.js';
import { operationInputs } from '../support/operation-inputs.js';

function validator(schema: unknown) {
  return compileStrict(schema as object);
}

/** Every operation's input; image.generate with two images and a reference, security.scan on a domain verified here. */
async function sampleInputs(ctx: TestContext, t: Tenant): Promise<Record<string, Record<string, unknown>>> {
  // security.scan targets only a hostname verified in the workspace.
  assert.equal((await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains`, { hostname: 'scan.example.com' })).statusCode, 200);
  assert.equal((await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains/scan.example.com/verify`, { method: 'operator' })).statusCode, 200);
  const { inputs, media } = await operationInputs(ctx, t);
  return { ...inputs, 'image.generate': { prompt: 'a cat', width: 256, height: 256, count: 2, referenceMediaIds: [media.image] } };
}


describeEachDatabase('operation results', (get) => {
  test('operation results: every operation’s complete output satisfies its contract’s resultSchema (simulated provider)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000_000, mode: 'test' });
    const inputs = await sampleInputs(ctx, t);
    for (const op of OPERATIONS) {
      if (op.id === 'link.preview') continue; // a real fetch: test/runs/link-preview-run.test.ts
      const res = await run(ctx, t, op.id, inputs[op.id]!);
      assert.ok(res.statusCode === 200 || res.statusCode === 202, `${op.id}: ${res.body}`);
      const body = res.json().data;
      let result: unknown;
      if (body.kind === 'result') {
        assert.equal(body.status, 'completed', `${op.id}: ${res.body}`);
        result = body.result;
      } else {
        await drain(ctx);
        result = JSON.parse((await readCompleteOutput(ctx, t, body.jobId)).bytes.toString('utf8'));
      }
      const validate = validator(op.resultSchema);
      assert.ok(validate(result), `${op.id} result ${JSON.stringify(result).slice(0, 400)}: ${JSON.stringify(validate.errors)}`);
      assert.equal((result as { provider?: string }).provider, 'simulated', op.id);
    }
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('operation results: a result missing its operation’s field, or carrying an unknown one, fails the schema', () => {
    const chat = OPERATIONS.find((o) => o.id === 'chat.generate')!;
    const validate = validator(chat.resultSchema);
    assert.equal(validate({ provider: 'x', model: 'm' }), false);
    assert.equal(validate({ message: { role: 'assistant', content: 'hi' }, secretSetting: 1 }), false);
    assert.equal(validate({ message: { role: 'assistant', content: 'hi' }, finishReason: 'stop', provider: 'x', model: 'm' }), true);
  });

  test('operation results: /openapi.json publishes each operation’s input and result schema', async () => {
    const ctx = get();
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const fieldsOf = (schema: { properties?: object; required?: string[] }) => ({ properties: Object.keys(schema.properties ?? {}).sort(), required: schema.required });
    for (const op of OPERATIONS) {
      assert.deepEqual(fieldsOf(doc.components.schemas[`${op.id}.input`]), fieldsOf(op.inputSchema as never), op.id);
      assert.deepEqual(fieldsOf(doc.components.schemas[`${op.id}.result`]), fieldsOf(op.resultSchema as never), op.id);
    }
  });
}, testKeySuite());

function writeProvidersFile(dir: string, name: string, json: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(json));
  return path;
}

for (const dbName of testDatabaseNames()) {
  describe(`providers file routing without remote providers [${dbName}]`, () => {
    let dir: string;
    let fallback: TestContext;
    let off: TestContext;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'was-providers-'));
      const fallbackFile = writeProvidersFile(dir, 'fallback.json', {
        simulated: 'fallback',
        operations: { 'music.generate': { provider: 'simulated', price: { perSecondMillicents: 7, perRunMillicents: 100 } } },
      });
      // Live keys on a staging server: a file that maps the simulated provider starts only with
      // SIMULATE_LIVE=true (config.ts), so these contexts name it rather than take the harness's default.
      fallback = await createTestContext(dbName, { env: { PROVIDERS_FILE: fallbackFile, SIMULATE_LIVE: 'true' } });
      // A production server's file ("simulated": "off", the default): one real route (the
      // scanner needs no program), SIMULATE_LIVE off, so nothing unmapped is simulated for live keys.
      const offFile = writeProvidersFile(dir, 'off.json', { providers: { here: { type: 'local' } }, operations: { 'security.scan': { provider: 'here', engine: 'scanner', price: { perRunMillicents: 100 } } } });
      off = await createTestContext(dbName, testKeySuite({ env: { PROVIDERS_FILE: offFile } }));
    });
    after(async () => {
      await disposeTestContext(fallback);
      await disposeTestContext(off);
      rmSync(dir, { recursive: true, force: true });
    });

    test('providers file: an operation’s prices in the file replace the built-in price book (estimate, reservation and charge)', async () => {
      const ctx = fallback;
      const t = await seedTenant(ctx.deps, { credits: 1_000_000 });
      const est = assertOk(await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'music.generate', input: { prompt: 'x', durationSeconds: 10 } } })).data;
      assert.equal(est.maximumCostMillicents, 100 + 7 * 10);
      const res = await run(ctx, t, 'music.generate', { prompt: 'x', durationSeconds: 10 });
      assert.equal(res.statusCode, 202, res.body);
      assert.equal(res.json().data.maximumCostMillicents, 170);
      await drain(ctx);
      const job = assertOk(await call(ctx, 'GET', `/v1/jobs/${res.json().data.jobId}`, { secret: t.secret, workspaceId: t.workspace.id })).data;
      assert.equal(job.status, 'completed');
      assert.equal(job.costMillicents, 170);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('providers file: with "simulated": "fallback" unmapped operations run on the simulated provider at the built-in prices', async () => {
      const ctx = fallback;
      const t = await seedTenant(ctx.deps, { credits: 1_000_000 });
      const tools = assertOk(await call(ctx, 'GET', '/v1/tools', { secret: t.secret, workspaceId: t.workspace.id })).data;
      assert.equal(tools.items.flatMap((tool: { operations: unknown[] }) => tool.operations).length, OPERATIONS.length);
      const est = assertOk(await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'three-d.generate', input: { prompt: 'x' } } })).data;
      assert.equal(est.maximumCostMillicents, 30_000, 'the built-in price book');
      const res = await run(ctx, t, 'three-d.generate', { prompt: 'x' });
      assert.equal(res.statusCode, 202, res.body);
      await drain(ctx);
      assert.equal(assertOk(await call(ctx, 'GET', `/v1/jobs/${res.json().data.jobId}`, { secret: t.secret, workspaceId: t.workspace.id })).data.status, 'completed');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('providers file: with "simulated": "off" an unmapped operation is left out of GET /v1/tools and refused with 400 OPERATION_UNAVAILABLE (estimates, runs), costing 1 point and nothing else', async () => {
      const ctx = off;
      const t = await seedTenant(ctx.deps, { credits: 1_000_000 });
      const tools = assertOk(await call(ctx, 'GET', '/v1/tools', { secret: t.secret, workspaceId: t.workspace.id })).data;
      const offered = tools.items.flatMap((tool: { operations: { operationId: string }[] }) => tool.operations.map((o) => o.operationId)).sort();
      assert.deepEqual(offered, ['link.preview', 'security.scan']);
      assertError(await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'three-d.generate', input: { prompt: 'x' } } }), 400, 'OPERATION_UNAVAILABLE');
      const before = assertOk(await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).data.points.minuteUsed as number;
      assertError(await run(ctx, t, 'three-d.generate', { prompt: 'x' }), 400, 'OPERATION_UNAVAILABLE');
      const usage = assertOk(await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).data.points.minuteUsed as number;
      assert.equal(usage - before, 1 + 1, 'the refused run cost 1 point (plus the usage read)');
      const jobs = await ctx.deps.db.selectFrom('jobs').select('id').where('workspace_id', '=', t.workspace.id).execute();
      assert.equal(jobs.length, 0, 'nothing was admitted');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });
  });
}
