/**
 * The job snapshot (GET /v1/jobs/{id}) against the contract: exactly its fields in every status,
 * never a worker checkpoint, a storage location or the job's input, and its inline projection within
 * the bounds of spec "Size and paging bounds" (ordinary result fields 48 KB, the whole projection
 * with file links 60 KB), the rest named in omittedFields and served by the complete output.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { scopeOf, seedTenant, type Tenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { drain, readCompleteOutput, run } from '../support/jobs.js';
import { gateAdapter } from '../support/gates.js';
import { assertNothingPrivate, assertSnapshotShape, PRIVATE_KEYS } from '../support/snapshot.js';
import { claimJobs } from '../../src/worker/job-claim.js';
import { executeJob } from '../../src/modules/jobs/executor.js';
import { checkRefusals } from '../support/openapi-responses.js';

const KB = 1024;

async function read(ctx: TestContext, t: Tenant, jobId: string) {
  const res = await call(ctx, 'GET', `/v1/jobs/${jobId}`, { secret: t.secret, workspaceId: t.workspace.id });
  assert.equal(res.statusCode, 200, res.body);
  return { text: res.body, snapshot: res.json().data };
}

/**
 * What the service holds for the job that must stay inside: its checkpoint, its input, its worker,
 * and where its files live (the local store's directory; a storage key itself is made of the
 * public workspace and media ids, so its property name is what is checked, see PRIVATE_KEYS).
 */
async function privateValues(ctx: TestContext, jobId: string): Promise<string[]> {
  const job = await ctx.deps.db.selectFrom('jobs').select(['checkpoint_json', 'input_json', 'lease_owner']).where('id', '=', jobId).executeTakeFirstOrThrow();
  const values = [ctx.dataDir];
  if (job.checkpoint_json) values.push(String(job.checkpoint_json));
  if (job.lease_owner) values.push(String(job.lease_owner));
  values.push(String(job.input_json));
  return values;
}

describeEachDatabase('job snapshot: fields and bounds', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('exactly the snapshot fields in every status (pending, processing, completed, failed, cancelled); no checkpoint, storage key, lease or input', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 10_000_000, mode: 'test' });
    const sprite = (directives: string) => ({ prompt: `a knight ${directives}`, frames: 3, frameWidth: 16, frameHeight: 16 });
    const queued = async (input: Record<string, unknown>) => {
      const res = await run(ctx, t, 'sprite.generate', input);
      assert.equal(res.statusCode, 202, res.body);
      return res.json().data.jobId as string;
    };
    const check = async (jobId: string, status: string) => {
      const { text, snapshot } = await read(ctx, t, jobId);
      assertSnapshotShape(snapshot, status);
      assert.equal(snapshot.status, status);
      assertNothingPrivate(text, `the ${status} snapshot`, { secrets: await privateValues(ctx, jobId), keys: PRIVATE_KEYS });
      return snapshot;
    };

    // pending, then processing held between two checkpoints (a checkpoint with files is stored).
    const held = await queued(sprite(''));
    await check(held, 'pending');
    const [claimed] = await claimJobs(ctx.deps, 'snapshot-test', 1);
    const gate = gateAdapter(ctx.deps, 'sprite.generate', { after: 'checkpoint', step: 1 }, 'test');
    try {
      const attempt = executeJob(ctx.deps, claimed!, new AbortController().signal);
      await gate.reached;
      const row = await ctx.deps.db.selectFrom('jobs').select('checkpoint_json').where('id', '=', held).executeTakeFirstOrThrow();
      assert.ok(row.checkpoint_json, 'a checkpoint is stored');
      await check(held, 'processing');
      gate.open();
      assert.equal((await attempt).status, 'completed');
    } finally {
      gate.restore();
    }
    const completed = await check(held, 'completed');
    assert.ok(Array.isArray(completed.output.frames) && completed.output.atlas, 'the output holds the file links');
    const whole = await readCompleteOutput(ctx, t, held);
    assertNothingPrivate(whole.bytes.toString('utf8'), 'the complete output', { secrets: await privateValues(ctx, held), keys: PRIVATE_KEYS });

    // failed after a checkpoint (its checkpoint stays stored for a retry), and cancelled.
    const failed = await queued(sprite('[sim:failAt=1]'));
    await drain(ctx);
    await check(failed, 'failed');
    const cancelled = await queued(sprite(''));
    assert.equal((await call(ctx, 'POST', `/v1/jobs/${cancelled}/cancel`, { secret: t.secret, workspaceId: t.workspace.id })).statusCode, 200);
    await check(cancelled, 'cancelled');
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('the inline projection: ordinary result fields within 48 KB stay inline; past it they are omitted, named in omittedFields, and served by the complete output; the whole projection stays within 60 KB', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 10_000_000, mode: 'test' });
    const result = async (bytes: number) => {
      const res = await run(ctx, t, 'music.generate', { prompt: `a tune [sim:outputBytes=${bytes}]`, durationSeconds: 5 });
      assert.equal(res.statusCode, 202, res.body);
      const jobId = res.json().data.jobId as string;
      await drain(ctx);
      const { snapshot } = await read(ctx, t, jobId);
      assertSnapshotShape(snapshot, `${bytes} bytes of text`);
      assert.equal(snapshot.status, 'completed');
      const { audio, omittedFields, ...ordinary } = snapshot.output;
      assert.ok(audio?.url, 'the file link is inline');
      assert.ok(Buffer.byteLength(JSON.stringify(ordinary)) <= 48 * KB, `ordinary fields within 48 KB: ${Buffer.byteLength(JSON.stringify(ordinary))}`);
      assert.ok(Buffer.byteLength(JSON.stringify(snapshot.output)) <= 60 * KB, `the projection within 60 KB: ${Buffer.byteLength(JSON.stringify(snapshot.output))}`);
      const complete = JSON.parse((await readCompleteOutput(ctx, t, jobId)).bytes.toString('utf8'));
      return { snapshot, omittedFields, complete };
    };
    // 40,000 bytes is inside the bound however a KB is counted; 50,000 is past it either way.
    const small = await result(40_000);
    assert.equal(small.omittedFields, undefined);
    assert.equal(small.snapshot.output.text, small.complete.text);
    const large = await result(50_000);
    assert.deepEqual(large.omittedFields, ['text']);
    assert.equal(large.snapshot.output.text, undefined);
    assert.equal(Buffer.byteLength(large.complete.text), 50_000, 'the complete output holds the omitted field');
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });
}, testKeySuite());
