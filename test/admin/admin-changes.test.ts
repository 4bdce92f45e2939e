/**
 * The operator's changes (decisions.md section 6, issue 19): key update, key roll (the replaced
 * secret works for the overlap the operator chose, then 401, cached or not) and credit
 * adjustments (ledger entries with reason and provenance; a debit never takes spendable credits
 * below zero). The ledger invariants (test/support/ledger.ts) are checked after every adjustment.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { refreshAuthEpoch } from '../../src/modules/auth/service.js';
import { admin, call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { assertError, expectOk } from '../support/assertions.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { balance, run } from '../support/jobs.js';
import { seedTenant, type Tenant } from '../support/seed.js';

const UNKNOWN_ID = '01890000-0000-7000-8000-000000000000';


const usage = (ctx: TestContext, secret: string, t: Tenant) => call(ctx, 'GET', '/v1/usage', { secret, workspaceId: t.workspace.id });

describeEachDatabase('admin changes', (get) => {
  test('key update: scopes, operations, transports, IP ranges, expiry and budgets change at once for requests; lists replace, budgets merge, null clears', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { key: { budgets: { dailyMillicents: 5000, monthlyMillicents: 90_000 } } });
    assert.equal((await usage(ctx, t.secret, t)).statusCode, 200, 'cached before the change');
    const url = `/admin/v1/keys/${t.key.id}/update`;
    const expiresAt = new Date(ctx.clock.now() + 86_400_000).toISOString();
    const d = expectOk(
      await admin(ctx, url, { scopes: ['jobs:read'], operations: ['link.preview'], transports: ['rest'], ipRanges: ['203.0.113.0/24'], expiresAt, budgets: { dailyMillicents: null, weeklyMillicents: 700 } }),
      'ADMIN_KEYS_UPDATE',
    );
    assert.deepEqual(d.key.scopes, ['jobs:read']);
    assert.deepEqual(d.key.operations, ['link.preview']);
    assert.deepEqual(d.key.transports, ['rest']);
    assert.deepEqual(d.key.ipRanges, ['203.0.113.0/24']);
    assert.equal(d.key.expiresAt, expiresAt);
    assert.deepEqual(d.key.budgets, { dailyMillicents: null, weeklyMillicents: 700, monthlyMillicents: 90_000 });
    // The cached key is gone: outside the range 403, inside it the lost scope is 403.
    assertError(await usage(ctx, t.secret, t), 403, 'FORBIDDEN_IP');
    assertError(await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id, remoteAddress: '203.0.113.9' }), 403, 'FORBIDDEN_SCOPE');
    assert.equal((await call(ctx, 'GET', '/v1/jobs', { secret: t.secret, workspaceId: t.workspace.id, remoteAddress: '203.0.113.9' })).statusCode, 200);
    // Back to no ranges and no expiry.
    const back = expectOk(await admin(ctx, url, { ipRanges: [], expiresAt: null, scopes: ['usage:read'] }), 'ADMIN_KEYS_UPDATE');
    assert.equal(back.key.expiresAt, null);
    assert.equal((await usage(ctx, t.secret, t)).statusCode, 200);
  });

  test('key update: bad changes are 400 and change nothing; unknown key 404; a revoked key 409 CONFLICT', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const url = `/admin/v1/keys/${t.key.id}/update`;
    const before = await ctx.deps.db.selectFrom('api_keys').selectAll().where('id', '=', t.key.id).executeTakeFirstOrThrow();
    for (const body of [
      {},
      { scopes: [] },
      { scopes: ['nope'] },
      { transports: [] },
      { operations: ['no.such'] },
      { ipRanges: ['10.0.0.0/33'] },
      { expiresAt: new Date(ctx.clock.now() - 1000).toISOString() },
      { expiresAt: '2027-12-31T23:59:60Z' },
      { budgets: { hourlyMillicents: 5 } },
      { budgets: { dailyMillicents: 0 } },
      { secret: 'wask_x' },
    ]) {
      assertError(await admin(ctx, url, body), 400, 'INVALID_REQUEST');
    }
    assert.deepEqual(await ctx.deps.db.selectFrom('api_keys').selectAll().where('id', '=', t.key.id).executeTakeFirstOrThrow(), before);
    assertError(await admin(ctx, `/admin/v1/keys/${UNKNOWN_ID}/update`, { scopes: ['jobs:read'] }), 404, 'NOT_FOUND');
    await admin(ctx, `/admin/v1/keys/${t.key.id}/revoke`);
    assertError(await admin(ctx, url, { scopes: ['jobs:read'] }), 409, 'CONFLICT');
    assertError(await admin(ctx, `/admin/v1/keys/${t.key.id}/roll`, { overlapSeconds: 0 }), 409, 'CONFLICT');
  });

  test('key roll: the new secret works at once; the old one works for the overlap (also from the auth cache) and is 401 from its end on', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    assert.equal((await usage(ctx, t.secret, t)).statusCode, 200);
    const rolled = expectOk(await admin(ctx, `/admin/v1/keys/${t.key.id}/roll`, { overlapSeconds: 60 }), 'ADMIN_KEYS_ROLL');
    assert.match(rolled.secret, /^wask_[A-Za-z0-9_-]{43}$/);
    assert.notEqual(rolled.secret, t.secret);
    assert.equal(rolled.key.id, t.key.id);
    assert.equal(rolled.key.prefix, rolled.secret.slice(0, 12));
    assert.equal(rolled.key.previousSecretExpiresAt, new Date(ctx.clock.now() + 60_000).toISOString());
    assert.ok(!JSON.stringify(rolled.key).includes(t.secret.slice(5)));
    assert.equal((await usage(ctx, rolled.secret, t)).statusCode, 200);
    assert.equal((await usage(ctx, t.secret, t)).statusCode, 200, 'old secret within the overlap (now cached)');
    ctx.clock.advance(59_999);
    assert.equal((await usage(ctx, t.secret, t)).statusCode, 200, 'last millisecond of the overlap');
    ctx.clock.advance(1);
    const refused = assertError(await usage(ctx, t.secret, t), 401, 'UNAUTHENTICATED');
    assert.match(refused.message, /rolled/);
    // Also after the cache is dropped (another process, or a restart).
    ctx.deps.authCache.clear();
    await refreshAuthEpoch(ctx.deps);
    assertError(await usage(ctx, t.secret, t), 401, 'UNAUTHENTICATED');
    assert.equal((await usage(ctx, rolled.secret, t)).statusCode, 200);
    // The key's metadata says when the old secret stopped.
    const d = expectOk(await ctx.app.inject({ method: 'GET', url: `/admin/v1/keys/${t.key.id}`, headers: { authorization: `Bearer ${ctx.config.adminToken}` } }), 'ADMIN_KEYS_GET');
    assert.equal(d.key.previousSecretExpiresAt, rolled.key.previousSecretExpiresAt);
  });

  test('key roll: overlap 0 refuses the old secret at once; a second roll ends the first overlap at once (at most two secrets); bad overlaps are 400', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const url = `/admin/v1/keys/${t.key.id}/roll`;
    const first = expectOk(await admin(ctx, url, { overlapSeconds: 3600 }), 'ADMIN_KEYS_ROLL');
    const second = expectOk(await admin(ctx, url, { overlapSeconds: 3600 }), 'ADMIN_KEYS_ROLL');
    assertError(await usage(ctx, t.secret, t), 401, 'UNAUTHENTICATED');
    assert.equal((await usage(ctx, first.secret, t)).statusCode, 200);
    assert.equal((await usage(ctx, second.secret, t)).statusCode, 200);
    const third = expectOk(await admin(ctx, url, { overlapSeconds: 0 }), 'ADMIN_KEYS_ROLL');
    assertError(await usage(ctx, second.secret, t), 401, 'UNAUTHENTICATED');
    assertError(await usage(ctx, first.secret, t), 401, 'UNAUTHENTICATED');
    assert.equal((await usage(ctx, third.secret, t)).statusCode, 200);
    for (const body of [{}, { overlapSeconds: -1 }, { overlapSeconds: 30 * 86400 + 1 }, { overlapSeconds: 1.5 }, { overlapSeconds: '60' }, { overlapSeconds: 60, extra: 1 }]) {
      assertError(await admin(ctx, url, body), 400, 'INVALID_REQUEST');
    }
    assertError(await admin(ctx, `/admin/v1/keys/${UNKNOWN_ID}/roll`, { overlapSeconds: 5 }), 404, 'NOT_FOUND');
    assert.equal((await usage(ctx, third.secret, t)).statusCode, 200, 'refused rolls changed nothing');
  });

  test('credit adjustments: a refund adds an allocation and an adjustment entry with reason and provenance; a debit takes credits in spending order; the public ledger shows both', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 10_000 });
    const url = `/admin/v1/workspaces/${t.workspace.id}/credits/adjust`;
    const refund = expectOk(await admin(ctx, url, { amountMillicents: 2500, reason: 'Refund for job 123 (provider outage)', provenance: 'refund' }), 'ADMIN_CREDITS_ADJUST');
    assert.equal(refund.adjustment.amountMillicents, 2500);
    assert.equal(refund.adjustment.allocation.provenance, 'refund');
    assert.equal(refund.adjustment.allocation.expiresAt, null);
    assert.deepEqual(refund.adjustment.transactions.map((e: any) => [e.type, e.amountMillicents, e.reason, e.provenance, e.allocationId]), [['adjustment', 2500, 'Refund for job 123 (provider outage)', 'refund', refund.adjustment.allocation.id]]);
    assert.deepEqual(refund.balance, { totalMillicents: 12_500, reservedMillicents: 0, spendableMillicents: 12_500 });
    await assertLedgerInvariants(ctx.deps, t.workspace.id);

    // A debit larger than one allocation spends the grant (never-expiring, older id) first, then the refund.
    const debit = expectOk(await admin(ctx, url, { amountMillicents: -11_000, reason: 'Chargeback' }), 'ADMIN_CREDITS_ADJUST');
    assert.equal(debit.adjustment.allocation, null);
    assert.equal(debit.adjustment.provenance, 'adjustment');
    assert.deepEqual(debit.adjustment.transactions.map((e: any) => e.amountMillicents), [-10_000, -1000]);
    assert.deepEqual(debit.balance, { totalMillicents: 1500, reservedMillicents: 0, spendableMillicents: 1500 });
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
    assert.equal((await balance(ctx, t)).totalMillicents, 1500);
    const pub = (await call(ctx, 'GET', '/v1/transactions', { secret: t.secret, workspaceId: t.workspace.id })).json().data.items;
    assert.deepEqual(pub.map((e: any) => [e.type, e.amountMillicents]), [['adjustment', -1000], ['adjustment', -10_000], ['adjustment', 2500], ['purchase', 10_000]]);
    // Adjustments are not spending: no budget counts them.
    const spent = await ctx.deps.db.selectFrom('credit_transactions').select('id').where('workspace_id', '=', t.workspace.id).where('type', '=', 'usage').execute();
    assert.equal(spent.length, 0);
  });

  test('credit adjustments: a debit never takes spendable credits below zero (reserved credits stay), 409 INSUFFICIENT_CREDITS writes nothing; bad bodies 400; unknown workspace 404', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000 });
    const url = `/admin/v1/workspaces/${t.workspace.id}/credits/adjust`;
    // A live job on a paid provider's fake (support/live-backend.ts), queued: its hold is reserved.
    const queued = await run(ctx, t, 'image.generate', { prompt: 'held' });
    assert.equal(queued.statusCode, 202, queued.body);
    const { reservedMillicents, spendableMillicents } = await balance(ctx, t);
    assert.ok(reservedMillicents > 0);
    const rows = async () => (await ctx.deps.db.selectFrom('credit_transactions').select('id').where('workspace_id', '=', t.workspace.id).execute()).length;
    const count = await rows();
    const refused = assertError(await admin(ctx, url, { amountMillicents: -(spendableMillicents + 1), reason: 'too much' }), 409, 'INSUFFICIENT_CREDITS');
    assert.equal(refused.details.spendableMillicents, spendableMillicents);
    assert.equal(await rows(), count);
    const exact = expectOk(await admin(ctx, url, { amountMillicents: -spendableMillicents, reason: 'all that is free' }), 'ADMIN_CREDITS_ADJUST');
    assert.deepEqual(exact.balance, { totalMillicents: reservedMillicents, reservedMillicents, spendableMillicents: 0 });
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
    assertError(await admin(ctx, url, { amountMillicents: -1, reason: 'one more' }), 409, 'INSUFFICIENT_CREDITS');
    for (const body of [
      { amountMillicents: 0, reason: 'zero' },
      { amountMillicents: 5 },
      { amountMillicents: 5, reason: '' },
      { amountMillicents: 5, reason: '   ' },
      { amountMillicents: 5, reason: 'x'.repeat(501) },
      { amountMillicents: 5, reason: 'nul \u0000' },
      { amountMillicents: 1.5, reason: 'frac' },
      { amountMillicents: -Number.MAX_SAFE_INTEGER - 1, reason: 'big' },
      { amountMillicents: 5, reason: 'r', provenance: 'Bad Provenance' },
      { amountMillicents: -5, reason: 'r', expiresAt: new Date(ctx.clock.now() + 86_400_000).toISOString() },
      { amountMillicents: 5, reason: 'r', expiresAt: new Date(ctx.clock.now() - 1).toISOString() },
      { amountMillicents: 5, reason: 'r', extra: true },
    ]) {
      assertError(await admin(ctx, url, body), 400, 'INVALID_REQUEST');
    }
    assertError(await admin(ctx, `/admin/v1/workspaces/${UNKNOWN_ID}/credits/adjust`, { amountMillicents: 5, reason: 'r' }), 404, 'NOT_FOUND');
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });
  // Credit adjustments have no test mode: the queued job is a live one on a paid provider's fake.
}, testKeySuite({ live: true }));
