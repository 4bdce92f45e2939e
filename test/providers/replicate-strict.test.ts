/**
 * Replicate as the real API behaves (issue 39, item 2), against the strict fake
 * (test/support/fake-replicate.ts): problem-details refusals, the `aborted` status (a prediction
 * that never started: nothing charged, the hold released), `metrics.total_time` beside the
 * billed `predict_time`, outputs as a bare URL string, and `Prefer: wait` answers. Each money test
 * ends with the ledger invariants.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeReplicate } from '../support/fake-replicate.js';
import { createTestContext, disposeTestContext, type TestContext } from '../support/harness.js';
import { testDatabaseNames } from '../support/databases.js';
import { balance, run, runQueuedToEnd } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { mediaCount, png, sha256 } from '../support/media.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { writeProvidersFile } from '../support/providers-file.js';

const TOKEN = 'r8_strict_token_0123456789abcdef';
const VERSION = 'a'.repeat(64);
/** perRunMillicents too: an aborted prediction must not even be charged the per-run price. */
const IMAGE_PRICE = { perRunMillicents: 500, perImageMillicents: 4000, perPredictSecondMillicents: 10 };
const CREDITS = 1_000_000;

function providersFile(fake: FakeReplicate, model = 'owner/img') {
  return {
    providers: { rep: { type: 'replicate', baseUrl: fake.baseUrl, apiKeyEnv: 'STRICT_TOKEN', privateNetwork: true, maxRetries: 0 } },
    operations: {
      'image.generate': { provider: 'rep', model, input: { prompt: '{{prompt}}', num_outputs: '{{count}}' }, price: IMAGE_PRICE, pollIntervalMs: 10 },
    },
  };
}

describe('strict fake Replicate: each rule of the API documentation', () => {
  let fake: FakeReplicate;
  before(async () => {
    fake = await FakeReplicate.start();
  });
  after(async () => fake?.close());
  beforeEach(() => fake.reset());

  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${fake.baseUrl}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, type: res.headers.get('content-type'), json: (await res.json()) as any };
  }

  test('fake replicate: refusals are problem details {title, detail, status} (422 invalid version or input, 404 unknown prediction)', async () => {
    for (const answer of [
      await call('POST', '/predictions', { version: 'not-a-version', input: {} }),
      await call('POST', '/models/owner/img/predictions', { input: 'a string' }),
      await call('GET', '/predictions/unknown'),
    ]) {
      assert.equal(answer.type, 'application/problem+json');
      assert.deepEqual(Object.keys(answer.json).sort(), ['detail', 'status', 'title']);
      assert.equal(answer.json.status, answer.status);
    }
    assert.deepEqual([(await call('POST', '/predictions', { version: 'x', input: {} })).status, (await call('GET', '/predictions/unknown')).status], [422, 404]);
  });

  test('fake replicate: an aborted prediction has no started_at and no predict_time; ended predictions report total_time beside predict_time', async () => {
    fake.next({ status: 'aborted', polls: 0 });
    const created = await call('POST', '/models/owner/img/predictions', { input: {} });
    const aborted = await call('GET', `/predictions/${created.json.id}`);
    assert.equal(aborted.json.status, 'aborted');
    assert.equal(aborted.json.started_at, null);
    assert.equal('predict_time' in aborted.json.metrics, false);
    assert.equal(typeof aborted.json.metrics.total_time, 'number');
    fake.next({ polls: 0, predictTime: 2, totalTime: 7, output: 'https://example.invalid/a.png' });
    const done = await call('GET', `/predictions/${(await call('POST', '/models/owner/img/predictions', { input: {} })).json.id}`);
    assert.deepEqual([done.json.status, done.json.metrics], ['succeeded', { predict_time: 2, total_time: 7 }]);
    assert.equal(done.json.output, 'https://example.invalid/a.png', 'a bare URL string output');
  });

  test('fake replicate: Prefer: wait answers the create with the ended prediction and its output; without it the prediction is still starting', async () => {
    fake.next({ polls: 5, output: ['https://example.invalid/w.png'] });
    const waited = await call('POST', '/models/owner/img/predictions', { input: {} }, { prefer: 'wait=5' });
    assert.deepEqual([waited.status, waited.json.status, waited.json.output], [201, 'succeeded', ['https://example.invalid/w.png']]);
    fake.next({ polls: 5 });
    assert.equal((await call('POST', '/models/owner/img/predictions', { input: {} })).json.status, 'starting');
    fake.next({ hold: true });
    assert.equal((await call('POST', '/models/owner/img/predictions', { input: {} }, { prefer: 'wait' })).json.status, 'starting', 'a held prediction is answered as it stands');
  });
});

for (const dbName of testDatabaseNames()) {
  describe(`replicate as the real API behaves [${dbName}]`, () => {
    let fake: FakeReplicate;
    let ctx: TestContext;
    let versioned: TestContext;
    let dir: string;

    before(async () => {
      fake = await FakeReplicate.start();
      dir = mkdtempSync(join(tmpdir(), 'was-replicate-strict-'));
      [ctx, versioned] = await Promise.all([
        createTestContext(dbName, { env: { PROVIDERS_FILE: writeProvidersFile(dir, 'p.json', providersFile(fake)), STRICT_TOKEN: TOKEN } }),
        createTestContext(dbName, { env: { PROVIDERS_FILE: writeProvidersFile(dir, 'v.json', providersFile(fake, `owner/img:${VERSION}`)), STRICT_TOKEN: TOKEN } }),
      ]);
    });

    after(async () => {
      await Promise.all([ctx, versioned].filter(Boolean).map((c) => disposeTestContext(c)));
      await fake?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    beforeEach(() => fake.reset());

    async function usage(c: TestContext, jobId: string) {
      return (await c.deps.db.selectFrom('credit_transactions').select(['type', 'amount_mc']).where('job_id', '=', jobId).execute()).map((r) => [r.type, Number(r.amount_mc)]);
    }

    test('aborted: a prediction aborted before it started fails the job PROVIDER_ERROR, charges nothing (not even the per-run price), releases the hold and stores nothing', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.next({ status: 'aborted', polls: 1 });
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'never ran', count: 1 });
      assert.deepEqual([job.status, job.errorCode, job.costMillicents], ['failed', 'PROVIDER_ERROR', 0]);
      assert.equal(fake.cancels.length, 0, 'an ended prediction is not cancelled');
      assert.equal(await mediaCount(ctx, t), 0);
      const b = await balance(ctx, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS, 0], 'no hold remains, nothing spent');
      assert.deepEqual((await usage(ctx, job.id)).filter(([, amount]) => amount !== 0), [], 'no charge in the ledger');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('aborted: an aborted prediction that reports prediction time after all is charged that time (and the per-run price), within the hold', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.next({ status: 'aborted', polls: 1, predictTime: 2.2 });
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'ran a little', count: 1 });
      const cost = IMAGE_PRICE.perRunMillicents + 3 * IMAGE_PRICE.perPredictSecondMillicents;
      assert.deepEqual([job.status, job.errorCode, job.costMillicents], ['failed', 'PROVIDER_ERROR', cost]);
      const b = await balance(ctx, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS - cost, 0]);
      assert.deepEqual(await usage(ctx, job.id), [['usage', -cost]]);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('metrics.total_time: the job is charged predict_time, never total_time (queue time is not billed)', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      fake.next({ output: [fake.putFile('timed.png', await png(20, 20))], predictTime: 1.2, totalTime: 30 });
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'timed', count: 1 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(job.costMillicents, IMAGE_PRICE.perRunMillicents + IMAGE_PRICE.perImageMillicents + 2 * IMAGE_PRICE.perPredictSecondMillicents);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('string outputs: an output that is a bare URL string is stored as the one image', async () => {
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const bytes = await png(18, 12);
      fake.next({ output: fake.putFile('bare.png', bytes), predictTime: 0.5 });
      const job = await runQueuedToEnd(ctx, t, 'image.generate', { prompt: 'bare', count: 1 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(job.output.images.length, 1);
      assert.equal(job.output.images[0].sha256, sha256(bytes));
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('problem details: a 422 refusal of the create fails the job PROVIDER_REJECTED, charging nothing', async () => {
      const t = await seedTenant(versioned.deps, { credits: CREDITS });
      fake.answer('create', { status: 422, json: { title: 'Invalid version or not permitted', detail: 'The specified version does not exist (or perhaps you don\'t have permission to use it?)', status: 422 } });
      const job = await runQueuedToEnd(versioned, t, 'image.generate', { prompt: 'refused', count: 1 });
      assert.deepEqual([job.status, job.errorCode, job.costMillicents], ['failed', 'PROVIDER_REJECTED', 0]);
      assert.equal(fake.creations, 0);
      const b = await balance(versioned, t);
      assert.deepEqual([b.totalMillicents, b.reservedMillicents], [CREDITS, 0]);
      await assertLedgerInvariants(versioned.deps, t.workspace.id);
    });

    test('problem details: a versioned model the fake accepts (64 hex digits) is created through POST /predictions and completes', async () => {
      const t = await seedTenant(versioned.deps, { credits: CREDITS });
      fake.next({ output: [fake.putFile('v.png', await png(10, 10))], predictTime: 1 });
      const job = await runQueuedToEnd(versioned, t, 'image.generate', { prompt: 'versioned', count: 1 });
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(fake.calls('create')[0]!.json.version, VERSION);
      await assertLedgerInvariants(versioned.deps, t.workspace.id);
    });
  });
}
