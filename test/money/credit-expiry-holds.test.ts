/**
 * Credit expiry under open holds (src/modules/billing/expiry.ts): an allocation that expires while
 * a job admitted before its expiry still holds credits keeps exactly the part that job can need,
 * so settlement charges the full actual cost (no money lost), a job admitted after the expiry
 * cannot spend those kept credits (no expired credits spent), and what the job leaves expires when
 * it settles. The balance stays exact throughout: total = unexpired credits + kept parts,
 * reserved = open holds, spendable ≥ 0; every money test ends with the ledger invariants. The
 * tenants use test keys: their credits are grants to the test balance and their jobs run on the
 * simulated provider.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { planExpiry } from '../../src/modules/billing/expiry.js';
import { grantCredits, sweepExpirations } from '../../src/modules/billing/service.js';
import { findOperation } from '../../src/operations/registry.js';
import { runMaintenanceOnce } from '../../src/worker/maintenance.js';
import { JobWorker } from '../../src/worker/job-worker.js';
import { admin, call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { balance, drain, getJob, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { scopeOf, seedTenant, type Tenant } from '../support/seed.js';
import { checkRefusals } from '../support/openapi-responses.js';

const HOUR = 3_600_000;
const MUSIC = (directives: string) => ({ prompt: `a calm tune ${directives}`, durationSeconds: 10 });
const MUSIC_MAX = findOperation('music.generate')!.price(MUSIC('')).maximumMillicents;
/** A chat run whose actual cost is its whole maximum (the simulated cost is capped there). */
const CHAT = { messages: [{ role: 'user', content: 'Hello [sim:delay=0][sim:cost=99999999]' }], maxTokens: 100 };
const CHAT_MAX = findOperation('chat.generate')!.price(CHAT).maximumMillicents;

async function remaining(ctx: TestContext, allocationId: string): Promise<number> {
  const r = await ctx.deps.db.selectFrom('credit_allocations').select('remaining_mc').where('id', '=', allocationId).executeTakeFirstOrThrow();
  return Number(r.remaining_mc);
}

async function ledger(ctx: TestContext, t: Tenant): Promise<[string, number][]> {
  const rows = await ctx.deps.db
    .selectFrom('credit_transactions')
    .select(['type', 'amount_mc'])
    .where('workspace_id', '=', scopeOf(t))
    .orderBy('id')
    .execute();
  return rows.map((r) => [r.type, Number(r.amount_mc)]);
}

async function admitMusic(ctx: TestContext, t: Tenant, directives: string): Promise<string> {
  const res = await run(ctx, t, 'music.generate', MUSIC(`[sim:delay=0]${directives}`));
  assert.equal(res.statusCode, 202, res.body);
  return res.json().data.jobId;
}

test('planExpiry: due credits back the open holds admitted before each expiry, earliest expiry first', () => {
  const due = (id: string, remaining: number, expiresAt: number, settled: number | null = null) => ({ id, remaining, expiresAt, expirySettledAt: settled });
  const step = (s: ReturnType<typeof planExpiry>[number]) => [s.allocation.id, s.keep, s.expire];
  assert.deepEqual(planExpiry([due('a', 800, 10)], []).map(step), [['a', 0, 800]], 'no open hold: everything expires');
  assert.deepEqual(planExpiry([due('a', 800, 10)], [{ createdAt: 5, amount: 300 }]).map(step), [['a', 300, 500]], 'only what the hold needs is kept');
  assert.deepEqual(planExpiry([due('a', 800, 10)], [{ createdAt: 10, amount: 300 }]).map(step), [['a', 0, 800]], 'a hold admitted at or after the expiry was never promised these credits');
  assert.deepEqual(
    planExpiry([due('a', 200, 10), due('b', 500, 20)], [{ createdAt: 5, amount: 300 }, { createdAt: 15, amount: 400 }]).map(step),
    [['a', 200, 0], ['b', 500, 0]],
    'the older hold draws on the earlier allocation first; the later allocation covers the rest of both',
  );
  assert.deepEqual(
    planExpiry([due('a', 1000, 10), due('b', 1000, 20)], [{ createdAt: 15, amount: 300 }]).map(step),
    [['a', 0, 1000], ['b', 300, 700]],
    'a hold admitted between the two expiries is backed by the later one only',
  );
  assert.deepEqual(planExpiry([due('a', 300, 10, 7)], [{ createdAt: 5, amount: 300 }]), [], 'an already processed allocation that is still needed is left alone');
  assert.deepEqual(planExpiry([due('a', 300, 10, 7)], []).map(step), [['a', 0, 300]], 'once its holds are gone, what was kept expires');
});

describeEachDatabase('credit expiry under open holds', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('an allocation expiring under a running job is charged in full at settlement; the unused rest then expires', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test' });
    const expiring = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: MUSIC_MAX, expiresAt: ctx.clock.now() + HOUR, mode: 'test' });
    const jobId = await admitMusic(ctx, t, '[sim:cost=3000]');

    ctx.clock.advance(HOUR + 1);
    assert.equal(await sweepExpirations(ctx.deps), 1);
    assert.deepEqual(await ledger(ctx, t), [['purchase', MUSIC_MAX]], 'nothing expires while the open hold needs all of it');
    let b = await balance(ctx, t);
    assert.deepEqual([b.totalMillicents, b.reservedMillicents, b.spendableMillicents], [MUSIC_MAX, MUSIC_MAX, 0], 'the kept credits still back the hold');
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
    assert.equal(await sweepExpirations(ctx.deps), 0, 'the kept allocation does not keep the sweep busy');

    assert.equal(await drain(ctx), 1);
    const job = await getJob(ctx, t, jobId);
    assert.equal(job.status, 'completed');
    assert.equal(job.costMillicents, 3000, 'settlement charged the full actual cost');
    assert.deepEqual(await ledger(ctx, t), [['purchase', MUSIC_MAX], ['usage', -3000], ['expiration', -(MUSIC_MAX - 3000)]]);
    assert.equal(await remaining(ctx, expiring.id), 0);
    b = await balance(ctx, t);
    assert.deepEqual([b.totalMillicents, b.reservedMillicents, b.spendableMillicents], [0, 0, 0]);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('expiry takes at once what the open holds do not need, and the balance counts the kept part', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test' });
    const expiring = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: MUSIC_MAX + 3000, expiresAt: ctx.clock.now() + HOUR, mode: 'test' });
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 1000, mode: 'test' });
    const jobId = await admitMusic(ctx, t, '');

    ctx.clock.advance(2 * HOUR);
    const b = await balance(ctx, t);
    assert.deepEqual([b.totalMillicents, b.reservedMillicents, b.spendableMillicents], [MUSIC_MAX + 1000, MUSIC_MAX, 1000]);
    const listed = (await call(ctx, 'GET', '/v1/balance', { secret: t.secret, workspaceId: t.workspace.id })).json().data.allocations;
    assert.deepEqual(
      listed.map((a: any) => a.remainingMillicents).reduce((x: number, y: number) => x + y, 0),
      b.totalMillicents,
      'the listed allocations add up to the total, the kept one included',
    );
    assert.deepEqual((await ledger(ctx, t)).filter(([type]) => type === 'expiration'), [['expiration', -3000]]);
    assert.equal(await remaining(ctx, expiring.id), MUSIC_MAX);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));

    assert.equal(await drain(ctx), 1);
    assert.equal((await getJob(ctx, t, jobId)).costMillicents, MUSIC_MAX);
    assert.equal(await remaining(ctx, expiring.id), 0, 'the job spent the expiring credits first');
    const after = await balance(ctx, t);
    assert.deepEqual([after.totalMillicents, after.reservedMillicents, after.spendableMillicents], [1000, 0, 1000]);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('a job admitted after an allocation expired cannot spend the credits kept for older holds', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test' });
    const expiring = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: MUSIC_MAX, expiresAt: ctx.clock.now() + HOUR, mode: 'test' });
    const later = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: CHAT_MAX, mode: 'test' });
    const jobId = await admitMusic(ctx, t, '[sim:cost=1000]');

    ctx.clock.advance(HOUR);
    const chat = await run(ctx, t, 'chat.generate', CHAT);
    assert.equal(chat.statusCode, 200, chat.body);
    assert.equal(chat.json().data.costMillicents, CHAT_MAX);
    assert.equal(await remaining(ctx, later.id), 0, 'the new job was paid from credits live at its admission');
    assert.equal(await remaining(ctx, expiring.id), MUSIC_MAX, 'the kept credits stay for the older job');
    const refused = await run(ctx, t, 'chat.generate', CHAT);
    assert.equal(refused.statusCode, 402, 'the kept credits are not spendable by new jobs');
    assert.equal(refused.json().code, 'INSUFFICIENT_CREDITS');

    assert.equal(await drain(ctx), 1);
    assert.equal((await getJob(ctx, t, jobId)).costMillicents, 1000);
    assert.deepEqual((await ledger(ctx, t)).filter(([type]) => type !== 'purchase'), [
      ['usage', -CHAT_MAX],
      ['usage', -1000],
      ['expiration', -(MUSIC_MAX - 1000)],
    ]);
    const b = await balance(ctx, t);
    assert.deepEqual([b.totalMillicents, b.reservedMillicents, b.spendableMillicents], [0, 0, 0]);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('cancelling a pending job whose credits expired meanwhile expires them all at once', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test' });
    const expiring = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: MUSIC_MAX + 500, expiresAt: ctx.clock.now() + HOUR, mode: 'test' });
    const jobId = await admitMusic(ctx, t, '');
    ctx.clock.advance(HOUR + 5);
    await runMaintenanceOnce(ctx.deps);
    assert.equal(await remaining(ctx, expiring.id), MUSIC_MAX);

    const cancelled = await call(ctx, 'POST', `/v1/jobs/${jobId}/cancel`, { secret: t.secret, workspaceId: t.workspace.id });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(cancelled.json().data.status, 'cancelled');
    assert.equal(await remaining(ctx, expiring.id), 0);
    assert.deepEqual(await ledger(ctx, t), [['purchase', MUSIC_MAX + 500], ['expiration', -500], ['expiration', -MUSIC_MAX]]);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('a failed job pays for its checkpointed steps from the expired allocation; a retry cannot use it', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test' });
    const expiring = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: MUSIC_MAX, expiresAt: ctx.clock.now() + HOUR, mode: 'test' });
    const jobId = await admitMusic(ctx, t, '[sim:steps=4][sim:failAt=2]');
    ctx.clock.advance(HOUR);
    assert.equal(await drain(ctx), 1);
    const failed = await getJob(ctx, t, jobId);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.costMillicents, MUSIC_MAX / 2, 'two of four steps charged');
    assert.equal(await remaining(ctx, expiring.id), 0, 'the unused rest expired when the hold settled');
    assert.deepEqual(await ledger(ctx, t), [['purchase', MUSIC_MAX], ['usage', -MUSIC_MAX / 2], ['expiration', -MUSIC_MAX / 2]]);

    const retry = await call(ctx, 'POST', `/v1/jobs/${jobId}/retry`, { secret: t.secret, workspaceId: t.workspace.id, headers: { 'idempotency-key': 'retry-after-expiry' } });
    assert.equal(retry.statusCode, 402, retry.body);
    assert.equal(retry.json().code, 'INSUFFICIENT_CREDITS');
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('settlements, sweeps and reads racing across an expiry still charge every job in full and expire only the rest', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test' });
    await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { runningJobs: 20, waitingJobs: 100, pointsPerMinute: 1_000_000 } });
    const costs = [1_000, 2_500, 5_000, 700, 4_200, 3_300];
    const expiring = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: costs.length * MUSIC_MAX, expiresAt: ctx.clock.now() + HOUR, mode: 'test' });
    const spare = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 1_000, mode: 'test' });
    const jobIds = [];
    for (const cost of costs) jobIds.push(await admitMusic(ctx, t, `[sim:cost=${cost}]`));

    ctx.clock.advance(HOUR);
    const reads = Array.from({ length: 8 }, (_, i) => (i % 2 ? balance(ctx, t) : call(ctx, 'GET', '/v1/transactions', { secret: t.secret, workspaceId: t.workspace.id })));
    const [ranA, ranB] = await Promise.all([
      new JobWorker(ctx.deps, { concurrency: 3 }).runOnce(),
      new JobWorker(ctx.deps, { concurrency: 3 }).runOnce(),
      sweepExpirations(ctx.deps),
      runMaintenanceOnce(ctx.deps),
      ...reads,
    ]);
    assert.equal((ranA as number) + (ranB as number), costs.length);
    for (const [i, id] of jobIds.entries()) assert.equal((await getJob(ctx, t, id)).costMillicents, costs[i], `job ${i} charged in full`);
    const spent = costs.reduce((x, y) => x + y, 0);
    const entries = await ledger(ctx, t);
    assert.equal(entries.filter(([type]) => type === 'usage').reduce((x, [, amount]) => x + amount, 0), -spent);
    assert.equal(entries.filter(([type]) => type === 'expiration').reduce((x, [, amount]) => x + amount, 0), -(costs.length * MUSIC_MAX - spent));
    assert.equal(await remaining(ctx, expiring.id), 0);
    assert.equal(await remaining(ctx, spare.id), 1_000, 'credits that had not expired were not needed');
    const b = await balance(ctx, t);
    assert.deepEqual([b.totalMillicents, b.reservedMillicents, b.spendableMillicents], [1_000, 0, 1_000]);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('the expiry sweep has a partial index on expires_at_ms over expiring allocations, and its predicate leaves remaining_mc out (settlements update allocations in place: migration 0008)', async () => {
    const ctx = get();
    if (ctx.dbName === 'sqlite') {
      const idx = await sql<{ sql: string }>`select sql from sqlite_master where name = 'credit_allocations_expiry_idx'`.execute(ctx.deps.db);
      assert.match(idx.rows[0]?.sql ?? '', /\(expires_at_ms\)\s+where expires_at_ms is not null/i);
      const plan = await sql<{ detail: string }>`explain query plan select distinct workspace_id from credit_allocations where remaining_mc > 0 and expires_at_ms <= ${Date.now()} and expiry_settled_at_ms is null limit 100`.execute(ctx.deps.db);
      assert.ok(plan.rows.some((r) => r.detail.includes('credit_allocations_expiry_idx')), JSON.stringify(plan.rows));
    } else {
      const idx = await sql<{ indexdef: string }>`select indexdef from pg_indexes where indexname = 'credit_allocations_expiry_idx'`.execute(ctx.deps.db);
      assert.match(idx.rows[0]?.indexdef ?? '', /\(expires_at_ms\) WHERE \(expires_at_ms IS NOT NULL\)/);
      assert.doesNotMatch(idx.rows[0]?.indexdef ?? '', /remaining_mc/);
    }
  });
}, testKeySuite());
