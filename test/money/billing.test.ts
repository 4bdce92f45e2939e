/**
 * Credits: GET /v1/balance, GET /v1/transactions, expirations, cursors of both lists and integer
 * money (spec Balance and Transaction, decisions.md: totalMillicents counts unexpired allocations,
 * opaque tamper-proof cursors, admin credit grants). Every test that moves money ends with the
 * ledger invariants.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Deps } from '../../src/deps.js';
import { AppError } from '../../src/http/errors.js';
import { newId } from '../../src/lib/ids.js';
import { grantCredits, sweepExpirations } from '../../src/modules/billing/service.js';
import * as billing from '../../src/modules/billing/store.js';
import { admin, call, describeEachDatabase, type TestContext } from '../support/harness.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { assertStatus } from '../support/assertions.js';

const HOUR = 3_600_000;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function get(ctx: TestContext, t: Tenant, url: string, query?: Record<string, string>) {
  return call(ctx, 'GET', url, { secret: t.secret, workspaceId: t.workspace.id, ...(query ? { query } : {}) });
}

async function balance(ctx: TestContext, t: Tenant, query?: Record<string, string>) {
  const res = await get(ctx, t, '/v1/balance', query);
  assertStatus(res, 200, 'PUBLIC_BALANCE_GET');
  return res.json().data;
}

async function transactions(ctx: TestContext, t: Tenant, query?: Record<string, string>) {
  const res = await get(ctx, t, '/v1/transactions', query);
  assertStatus(res, 200, 'PUBLIC_TRANSACTIONS_LIST');
  return res.json().data;
}

/** Every page of a list, following nextCursor; checks each cursor's length on the way. */
async function allPages(ctx: TestContext, t: Tenant, url: string, limit: number, key: 'items' | 'allocations') {
  const seen: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await get(ctx, t, url, { limit: String(limit), ...(cursor ? { cursor } : {}) });
    assertStatus(res, 200);
    const data = res.json().data;
    assert.ok(data[key].length <= limit);
    seen.push(...data[key]);
    cursor = data.nextCursor;
    if (cursor !== null) {
      assert.equal(typeof cursor, 'string');
      assert.ok(cursor.length <= 200, `cursor of ${cursor.length} characters`);
      assert.equal(data[key].length, limit, 'only the last page is short');
    }
    pages++;
    assert.ok(pages < 100, 'paging terminates');
  } while (cursor !== null);
  return { seen, pages };
}

/** A spend as the runs module will record it: the allocation shrinks and a usage entry is appended. */
async function recordSpend(
  deps: Deps,
  workspaceId: string,
  allocationId: string,
  amount: number,
  o: { type?: string; keyId?: string | null; createdAt?: number; toolSlug?: string | null; jobId?: string | null; executionOrigin?: string | null } = {},
) {
  await deps.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('credit_allocations').select('remaining_mc').where('id', '=', allocationId).executeTakeFirstOrThrow();
    await trx.updateTable('credit_allocations').set({ remaining_mc: Number(row.remaining_mc) - amount }).where('id', '=', allocationId).execute();
    await billing.appendLedger(trx, {
      id: newId(),
      workspaceId,
      type: o.type ?? 'usage',
      amountMillicents: -amount,
      allocationId,
      keyId: o.keyId ?? null,
      toolSlug: o.toolSlug ?? null,
      jobId: o.jobId ?? null,
      executionOrigin: o.executionOrigin ?? null,
      createdAt: o.createdAt ?? deps.clock.now(),
    });
  });
}

async function insertHold(deps: Deps, workspaceId: string, amount: number, o: { keyId?: string | null; released?: boolean } = {}) {
  const id = newId();
  await deps.db
    .insertInto('credit_holds')
    .values({
      id,
      workspace_id: workspaceId,
      job_id: newId(),
      key_id: o.keyId ?? null,
      amount_mc: amount,
      created_at_ms: deps.clock.now(),
      released_at_ms: o.released ? deps.clock.now() : null,
    })
    .execute();
  return id;
}

async function releaseHold(deps: Deps, id: string) {
  await deps.db.updateTable('credit_holds').set({ released_at_ms: deps.clock.now() }).where('id', '=', id).execute();
}

async function ledgerRows(deps: Deps, workspaceId: string) {
  return deps.db.selectFrom('credit_transactions').selectAll().where('workspace_id', '=', workspaceId).orderBy('id', 'desc').execute();
}

describeEachDatabase('balance and transactions', (get_) => {
  test('balance: totalMillicents is the sum of remaining over unexpired allocations', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    const a = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 10_000 });
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 2_500, expiresAt: ctx.clock.now() + HOUR });
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 700 });
    await recordSpend(ctx.deps, t.workspace.id, a.id, 1_000, { keyId: t.key.id });
    const data = await balance(ctx, t);
    assert.equal(data.workspaceId, t.workspace.id);
    assert.equal(data.totalMillicents, 9_000 + 2_500 + 700);
    assert.equal(data.reservedMillicents, 0);
    assert.equal(data.spendableMillicents, 12_200);
    assert.deepEqual(data.allocations.map((x: any) => x.remainingMillicents).sort((x: number, y: number) => x - y), [700, 2_500, 9_000]);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('balance: reservedMillicents is the sum of open credit_holds and spendable = total − reserved', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps, { credits: 20_000 });
    const other = await seedTenant(ctx.deps, { credits: 20_000 });
    await insertHold(ctx.deps, other.workspace.id, 9_999);
    await insertHold(ctx.deps, t.workspace.id, 5_000, { released: true });
    let data = await balance(ctx, t);
    assert.deepEqual([data.totalMillicents, data.reservedMillicents, data.spendableMillicents], [20_000, 0, 20_000], 'released holds and other workspaces do not count');

    const h1 = await insertHold(ctx.deps, t.workspace.id, 3_000, { keyId: t.key.id });
    data = await balance(ctx, t);
    assert.deepEqual([data.totalMillicents, data.reservedMillicents, data.spendableMillicents], [20_000, 3_000, 17_000]);

    await insertHold(ctx.deps, t.workspace.id, 1_200);
    data = await balance(ctx, t);
    assert.deepEqual([data.totalMillicents, data.reservedMillicents, data.spendableMillicents], [20_000, 4_200, 15_800]);

    await releaseHold(ctx.deps, h1);
    data = await balance(ctx, t);
    assert.deepEqual([data.totalMillicents, data.reservedMillicents, data.spendableMillicents], [20_000, 1_200, 18_800]);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
    await assertLedgerInvariants(ctx.deps, other.workspace.id);
  });

  test('balance: allocation fields are exactly id, remainingMillicents, expiresAt, provenance, createdAt', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    const expiresAt = ctx.clock.now() + 24 * HOUR;
    const granted = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/credits`, { amountMillicents: 4_000, expiresAt: new Date(expiresAt).toISOString(), provenance: 'promo' });
    assertStatus(granted, 200, 'ADMIN_CREDITS_GRANT');
    ctx.clock.advance(1_000);
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 1_000 });
    const data = await balance(ctx, t);
    assert.deepEqual(Object.keys(data).sort(), ['allocations', 'livemode', 'nextCursor', 'reservedMillicents', 'spendableMillicents', 'totalMillicents', 'workspaceId']);
    assert.equal(data.allocations.length, 2);
    for (const a of data.allocations) {
      assert.deepEqual(Object.keys(a).sort(), ['createdAt', 'expiresAt', 'id', 'livemode', 'provenance', 'remainingMillicents']);
      assert.match(a.id, UUID_RE);
      assert.ok(Number.isSafeInteger(a.remainingMillicents));
      assert.match(a.createdAt, ISO_RE);
    }
    const [promo, purchase] = data.allocations;
    assert.deepEqual(promo, {
      id: granted.json().data.allocation.id,
      remainingMillicents: 4_000,
      expiresAt: new Date(expiresAt).toISOString(),
      provenance: 'promo',
      createdAt: new Date(ctx.clock.now() - 1_000).toISOString(),
      livemode: true,
    });
    assert.equal(purchase.provenance, 'purchase');
    assert.equal(purchase.expiresAt, null);
    assert.equal(data.nextCursor, null);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('balance: allocations page with default limit 25, limit 1..100 and nextCursor', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    for (let i = 0; i < 30; i++) await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 100 + i });
    const first = await balance(ctx, t);
    assert.equal(first.allocations.length, 25, 'default page size is 25');
    assert.equal(typeof first.nextCursor, 'string');
    assert.equal(first.totalMillicents, 30 * 100 + (29 * 30) / 2, 'the total covers every allocation, not only the page');
    const second = await balance(ctx, t, { cursor: first.nextCursor });
    assert.equal(second.allocations.length, 5);
    assert.equal(second.nextCursor, null);
    assert.equal(new Set([...first.allocations, ...second.allocations].map((a: any) => a.id)).size, 30);
    const one = await balance(ctx, t, { limit: '1' });
    assert.equal(one.allocations.length, 1);
    assert.notEqual(one.nextCursor, null);
    const hundred = await balance(ctx, t, { limit: '100' });
    assert.equal(hundred.allocations.length, 30);
    assert.equal(hundred.nextCursor, null);
    const exact = await balance(ctx, t, { limit: '30' });
    assert.equal(exact.allocations.length, 30);
    assert.equal(exact.nextCursor, null, 'no cursor to an empty page');
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('balance and transactions: limit 0, 101, abc, -1, 1.5 and unknown query parameters are 400 INVALID_REQUEST', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps, { credits: 1_000 });
    for (const url of ['/v1/balance', '/v1/transactions']) {
      for (const limit of ['0', '101', 'abc', '-1', '1.5', '']) {
        assertStatus(await get(ctx, t, url, { limit }), 400, 'INVALID_REQUEST');
      }
      assertStatus(await get(ctx, t, url, { cursor: '' }), 400, 'INVALID_REQUEST');
      assertStatus(await get(ctx, t, url, { cursor: 'a'.repeat(201) }), 400, 'INVALID_REQUEST');
      assertStatus(await get(ctx, t, url, { offset: '5' }), 400, 'INVALID_REQUEST');
      assertStatus(await get(ctx, t, url, { limit: '100' }), 200);
      assertStatus(await get(ctx, t, url, { limit: '1' }), 200);
    }
  });

  test('list limits are integers in plain decimal digits: 0x10, 1e1, 2.0, +5, " 5", 010 are 400 INVALID_REQUEST', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps, { credits: 1_000 });
    for (const url of ['/v1/balance', '/v1/transactions', '/v1/jobs', '/v1/media', '/v1/events']) {
      for (const limit of ['0x10', '1e1', '2.0', '+5', ' 5', '5 ', '010', '0b11', '5_0']) {
        const res = await get(ctx, t, url, { limit });
        assertStatus(res, 400, 'INVALID_REQUEST');
        assert.match(res.json().message, /limit must be an integer in decimal digits/);
      }
      assertStatus(await get(ctx, t, url, { limit: '10' }), 200);
    }
  });

  test('balance: expired allocations are not listed and not counted', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    const expiring = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 3_000, expiresAt: ctx.clock.now() + HOUR });
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 500 });
    let data = await balance(ctx, t);
    assert.equal(data.totalMillicents, 3_500);
    assert.ok(data.allocations.some((a: any) => a.id === expiring.id));
    ctx.clock.advance(HOUR + 1);
    data = await balance(ctx, t);
    assert.equal(data.totalMillicents, 500);
    assert.ok(!data.allocations.some((a: any) => a.id === expiring.id));
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('transactions: newest first; admin credit grants appear as purchase rows with a positive amount', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    const grants: { id: string; amount: number; at: number }[] = [];
    for (const amount of [1_500, 25_000, 3]) {
      ctx.clock.advance(60_000);
      const res = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/credits`, { amountMillicents: amount });
      assertStatus(res, 200, 'ADMIN_CREDITS_GRANT');
      grants.push({ id: res.json().data.allocation.id, amount, at: ctx.clock.now() });
    }
    const data = await transactions(ctx, t);
    assert.equal(data.nextCursor, null);
    assert.deepEqual(
      data.items.map((x: any) => [x.type, x.amountMillicents, x.createdAt]),
      grants.reverse().map((g) => ['purchase', g.amount, new Date(g.at).toISOString()]),
    );
    for (const item of data.items) {
      // The spec's fields, plus keyId and operationId (issue 36, attribution).
      assert.deepEqual(Object.keys(item).sort(), ['amountMillicents', 'createdAt', 'executionOrigin', 'id', 'jobId', 'keyId', 'livemode', 'operationId', 'toolSlug', 'type']);
      assert.match(item.id, UUID_RE);
      assert.ok(item.amountMillicents > 0);
      assert.equal(item.toolSlug, null);
      assert.equal(item.jobId, null);
      assert.equal(item.executionOrigin, null);
      assert.equal(item.keyId, null);
      assert.equal(item.operationId, null);
    }
    const times = data.items.map((x: any) => Date.parse(x.createdAt));
    assert.deepEqual([...times].sort((a, b) => b - a), times, 'newest first');
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('transactions: a usage row shows its signed negative amount, toolSlug, jobId and executionOrigin', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    const a = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 10_000 });
    const jobId = newId();
    ctx.clock.advance(1_000);
    await recordSpend(ctx.deps, t.workspace.id, a.id, 2_345, { keyId: t.key.id, toolSlug: 'link-preview', jobId, executionOrigin: 'api' });
    const data = await transactions(ctx, t);
    assert.equal(data.items.length, 2);
    assert.deepEqual(data.items[0], {
      id: data.items[0].id,
      type: 'usage',
      amountMillicents: -2_345,
      toolSlug: 'link-preview',
      jobId,
      executionOrigin: 'api',
      createdAt: new Date(ctx.clock.now()).toISOString(),
      keyId: t.key.id,
      operationId: null,
      livemode: true,
    });
    assert.equal(data.items[1].type, 'purchase');
    assert.equal((await balance(ctx, t)).totalMillicents, 10_000 - 2_345);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('transactions: a workspace never sees another workspace\'s ledger rows', async () => {
    const ctx = get_();
    const a = await seedTenant(ctx.deps, { credits: 111 });
    const b = await seedTenant(ctx.deps, { credits: 222 });
    assert.deepEqual((await transactions(ctx, a)).items.map((x: any) => x.amountMillicents), [111]);
    assert.deepEqual((await transactions(ctx, b)).items.map((x: any) => x.amountMillicents), [222]);
    assert.equal((await balance(ctx, a)).totalMillicents, 111);
  });
});

describeEachDatabase('list cursors', (get_) => {
  test('cursor: pages never overlap or skip (60 ledger rows and 60 allocations, limit 7)', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    for (let i = 0; i < 60; i++) {
      ctx.clock.advance(7);
      await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 1_000 + i });
    }
    const full = (await ledgerRows(ctx.deps, t.workspace.id)).map((r) => r.id);
    assert.equal(full.length, 60);
    const tx = await allPages(ctx, t, '/v1/transactions', 7, 'items');
    assert.equal(tx.pages, 9);
    assert.deepEqual(tx.seen.map((x) => x.id), full, 'transactions pages concatenate to the full ledger, newest first');
    assert.deepEqual(tx.seen.map((x) => x.amountMillicents), [...Array(60).keys()].map((i) => 1_000 + 59 - i));

    const allocs = await allPages(ctx, t, '/v1/balance', 7, 'allocations');
    assert.equal(allocs.pages, 9);
    const allAllocations = (await balance(ctx, t, { limit: '100' })).allocations.map((a: any) => a.id);
    assert.deepEqual(allocs.seen.map((a) => a.id), allAllocations);
    assert.equal(new Set(allAllocations).size, 60);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('cursor: new rows appended while paging do not shift or repeat earlier pages', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    for (let i = 0; i < 10; i++) await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 100 + i });
    const first = await transactions(ctx, t, { limit: '4' });
    for (let i = 0; i < 5; i++) await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 900 + i });
    const second = await transactions(ctx, t, { limit: '4', cursor: first.nextCursor });
    const third = await transactions(ctx, t, { limit: '4', cursor: second.nextCursor });
    assert.deepEqual(
      [...first.items, ...second.items, ...third.items].map((x: any) => x.amountMillicents),
      [109, 108, 107, 106, 105, 104, 103, 102, 101, 100],
    );
    assert.equal(third.nextCursor, null);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('cursor: altered by one character is 400 INVALID_CURSOR (both lists)', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    for (let i = 0; i < 3; i++) await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 100 });
    for (const [url, key] of [['/v1/transactions', 'items'], ['/v1/balance', 'allocations']] as const) {
      const page = (await get(ctx, t, url, { limit: '1' })).json().data;
      const cursor: string = page.nextCursor;
      assert.equal(typeof cursor, 'string');
      assert.equal(page[key].length, 1);
      assertStatus(await get(ctx, t, url, { limit: '1', cursor }), 200);
      const positions = [0, Math.floor(cursor.length / 2), cursor.indexOf('.') - 1, cursor.indexOf('.') + 1, cursor.length - 1];
      for (const i of positions) {
        const c = cursor[i] === 'A' ? 'B' : 'A';
        const altered = cursor.slice(0, i) + c + cursor.slice(i + 1);
        const res = await get(ctx, t, url, { limit: '1', cursor: altered });
        assertStatus(res, 400, 'INVALID_CURSOR');
        assert.equal(res.json().success, false);
      }
      assertStatus(await get(ctx, t, url, { cursor: 'not-a-cursor' }), 400, 'INVALID_CURSOR');
    }
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('cursor: a cursor from /v1/transactions used on /v1/balance (and back) is 400 INVALID_CURSOR', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    for (let i = 0; i < 3; i++) await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 100 });
    const txCursor = (await transactions(ctx, t, { limit: '1' })).nextCursor;
    const balCursor = (await balance(ctx, t, { limit: '1' })).nextCursor;
    assertStatus(await get(ctx, t, '/v1/balance', { cursor: txCursor }), 400, 'INVALID_CURSOR');
    assertStatus(await get(ctx, t, '/v1/transactions', { cursor: balCursor }), 400, 'INVALID_CURSOR');
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('cursor: a cursor of workspace A used by tenant B with B\'s own key is 400 INVALID_CURSOR', async () => {
    const ctx = get_();
    const a = await seedTenant(ctx.deps);
    const b = await seedTenant(ctx.deps);
    for (const t of [a, b]) for (let i = 0; i < 3; i++) await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 100 });
    for (const url of ['/v1/transactions', '/v1/balance']) {
      const cursor = (await get(ctx, a, url, { limit: '1' })).json().data.nextCursor;
      assertStatus(await get(ctx, b, url, { cursor }), 400, 'INVALID_CURSOR');
      assertStatus(await get(ctx, a, url, { cursor }), 200);
    }
  });

  test('cursor: one key holding two workspaces cannot carry a cursor from one workspace to the other', async () => {
    const ctx = get_();
    const a = await seedTenant(ctx.deps, { credits: 100 });
    const second = await (await import('../../src/modules/accounts/service.js')).createWorkspace(ctx.deps, { name: 'Second', plan: 'pro', ownerUserId: a.user.id });
    for (const ws of [a.workspace.id, second.id]) for (let i = 0; i < 3; i++) await grantCredits(ctx.deps, ws, { amountMillicents: 100 });
    const { secret } = await seedKey(ctx.deps, a.user.id, [a.workspace.id, second.id]);
    const cursor = (await call(ctx, 'GET', '/v1/transactions', { secret, workspaceId: a.workspace.id, query: { limit: '1' } })).json().data.nextCursor;
    assertStatus(await call(ctx, 'GET', '/v1/transactions', { secret, workspaceId: second.id, query: { cursor } }), 400, 'INVALID_CURSOR');
    assertStatus(await call(ctx, 'GET', '/v1/transactions', { secret, workspaceId: a.workspace.id, query: { cursor } }), 200);
  });
});

describeEachDatabase('credit expiration', (get_) => {
  test('expiration: past expiresAt the balance stops counting the allocation and one expiration row of −remaining appears', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    const expiresAt = ctx.clock.now() + HOUR;
    const expiring = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 5_000, expiresAt });
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 1_000 });
    await recordSpend(ctx.deps, t.workspace.id, expiring.id, 1_500, { keyId: t.key.id });

    ctx.clock.set(expiresAt - 1);
    assert.equal((await balance(ctx, t)).totalMillicents, 4_500, 'still counted one millisecond before expiresAt');
    assert.equal((await transactions(ctx, t)).items.filter((x: any) => x.type === 'expiration').length, 0);

    ctx.clock.set(expiresAt + 1);
    const data = await balance(ctx, t);
    assert.equal(data.totalMillicents, 1_000);
    assert.equal(data.spendableMillicents, 1_000);
    for (let i = 0; i < 3; i++) {
      await balance(ctx, t);
      await transactions(ctx, t);
    }
    const items = (await transactions(ctx, t)).items;
    const expirations = items.filter((x: any) => x.type === 'expiration');
    assert.equal(expirations.length, 1, 'exactly one expiration row, however often it is read');
    assert.equal(expirations[0].amountMillicents, -3_500);
    assert.equal(expirations[0].createdAt, new Date(expiresAt + 1).toISOString());
    assert.equal(items[0].type, 'expiration', 'the newest row');
    const rows = await ledgerRows(ctx.deps, t.workspace.id);
    assert.equal(rows.find((r) => r.type === 'expiration')?.allocation_id, expiring.id);
    const alloc = await ctx.deps.db.selectFrom('credit_allocations').select('remaining_mc').where('id', '=', expiring.id).executeTakeFirstOrThrow();
    assert.equal(Number(alloc.remaining_mc), 0);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('expiration: at exactly expiresAt the allocation is expired', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    const expiresAt = ctx.clock.now() + 10_000;
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 800, expiresAt });
    ctx.clock.set(expiresAt);
    const data = await balance(ctx, t);
    assert.equal(data.totalMillicents, 0);
    assert.deepEqual(data.allocations, []);
    assert.deepEqual((await transactions(ctx, t)).items.map((x: any) => [x.type, x.amountMillicents]), [['expiration', -800], ['purchase', 800]]);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('expiration: concurrent reads still write exactly one expiration row', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    const expiresAt = ctx.clock.now() + 1_000;
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 2_000, expiresAt });
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 3_000, expiresAt: expiresAt + 1 });
    ctx.clock.set(expiresAt + 5_000);
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => get(ctx, t, i % 2 ? '/v1/balance' : '/v1/transactions')));
    for (const r of results) assertStatus(r, 200);
    const rows = await ledgerRows(ctx.deps, t.workspace.id);
    assert.deepEqual(rows.filter((r) => r.type === 'expiration').map((r) => Number(r.amount_mc)).sort(), [-2_000, -3_000].sort());
    assert.equal((await balance(ctx, t)).totalMillicents, 0);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('expiration: a fully spent allocation expires without an expiration row', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    const expiresAt = ctx.clock.now() + HOUR;
    const a = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 900, expiresAt });
    await recordSpend(ctx.deps, t.workspace.id, a.id, 900);
    ctx.clock.set(expiresAt + 1);
    assert.equal((await balance(ctx, t)).totalMillicents, 0);
    assert.deepEqual((await transactions(ctx, t)).items.map((x: any) => x.type), ['usage', 'purchase']);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('expiration: sweepExpirations zeroes due allocations with one expiration row each, without a read', async () => {
    const ctx = get_();
    const a = await seedTenant(ctx.deps);
    const b = await seedTenant(ctx.deps);
    const expiresAt = ctx.clock.now() + HOUR;
    const aExp = await grantCredits(ctx.deps, a.workspace.id, { amountMillicents: 4_000, expiresAt });
    await grantCredits(ctx.deps, a.workspace.id, { amountMillicents: 600 });
    const bExp = await grantCredits(ctx.deps, b.workspace.id, { amountMillicents: 7_000, expiresAt: expiresAt + 10 });
    const bLater = await grantCredits(ctx.deps, b.workspace.id, { amountMillicents: 50, expiresAt: expiresAt + 10 * HOUR });
    await recordSpend(ctx.deps, b.workspace.id, bExp.id, 250);

    ctx.clock.set(expiresAt + 60_000);
    const swept = await sweepExpirations(ctx.deps);
    assert.ok(swept >= 2, `swept ${swept} workspaces`);
    for (const [t, alloc, amount] of [[a, aExp, -4_000], [b, bExp, -6_750]] as const) {
      const rows = await ledgerRows(ctx.deps, t.workspace.id);
      const exp = rows.filter((r) => r.type === 'expiration');
      assert.equal(exp.length, 1);
      assert.equal(Number(exp[0]!.amount_mc), amount);
      assert.equal(exp[0]!.allocation_id, alloc.id);
      assert.equal(Number(exp[0]!.created_at_ms), ctx.clock.now());
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    }
    const later = await ctx.deps.db.selectFrom('credit_allocations').select('remaining_mc').where('id', '=', bLater.id).executeTakeFirstOrThrow();
    assert.equal(Number(later.remaining_mc), 50, 'an allocation not yet due is untouched');

    assert.equal(await sweepExpirations(ctx.deps), 0, 'a second sweep finds nothing');
    assert.equal((await balance(ctx, a)).totalMillicents, 600);
    assert.equal((await balance(ctx, b)).totalMillicents, 50);
    assert.equal((await ledgerRows(ctx.deps, a.workspace.id)).filter((r) => r.type === 'expiration').length, 1, 'a read after the sweep adds nothing');
    assert.equal((await ledgerRows(ctx.deps, b.workspace.id)).filter((r) => r.type === 'expiration').length, 1);
  });

  test('expiration: sweepExpirations respects its batch size and finishes in further runs', async () => {
    const ctx = get_();
    const tenants = [await seedTenant(ctx.deps), await seedTenant(ctx.deps), await seedTenant(ctx.deps)];
    const expiresAt = ctx.clock.now() + 1_000;
    for (const t of tenants) await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 10, expiresAt });
    ctx.clock.set(expiresAt);
    let runs = 0;
    while ((await sweepExpirations(ctx.deps, 1)) > 0) runs++;
    assert.ok(runs >= 3);
    for (const t of tenants) {
      assert.equal((await ledgerRows(ctx.deps, t.workspace.id)).filter((r) => r.type === 'expiration').length, 1);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    }
  });
});

describeEachDatabase('money is integer millicents', (get_) => {
  const grant = (ctx: TestContext, workspaceId: string, body: unknown) => admin(ctx, `/admin/v1/workspaces/${workspaceId}/credits`, body);

  test('money: non-integer, non-positive, string or unsafe amounts are rejected by the admin schema with 400', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    for (const amountMillicents of [1.5, 0.001, 0, -1, -1000, '1000', null, true, Number.MAX_SAFE_INTEGER + 1, 2 ** 60, 1e300]) {
      assertStatus(await grant(ctx, t.workspace.id, { amountMillicents }), 400, 'INVALID_REQUEST');
    }
    assertStatus(await grant(ctx, t.workspace.id, {}), 400, 'INVALID_REQUEST');
    // Beyond 2^53 JSON cannot carry the exact integer: 9007199254740993 parses to 2^53, which is refused.
    const raw = await ctx.app.inject({
      method: 'POST',
      url: `/admin/v1/workspaces/${t.workspace.id}/credits`,
      headers: { authorization: `Bearer ${ctx.config.adminToken}`, 'content-type': 'application/json' },
      payload: '{"amountMillicents": 9007199254740993}',
    });
    assertStatus(raw, 400, 'INVALID_REQUEST');
    assert.deepEqual((await transactions(ctx, t)).items, [], 'nothing was granted');
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('money: Number.MAX_SAFE_INTEGER is accepted, and a grant that would make the balance unsafe is 400', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    assertStatus(await grant(ctx, t.workspace.id, { amountMillicents: Number.MAX_SAFE_INTEGER - 10 }), 200);
    assertStatus(await grant(ctx, t.workspace.id, { amountMillicents: 11 }), 400, 'INVALID_REQUEST');
    assertStatus(await grant(ctx, t.workspace.id, { amountMillicents: 10 }), 200);
    assertStatus(await grant(ctx, t.workspace.id, { amountMillicents: 1 }), 400, 'INVALID_REQUEST');
    const data = await balance(ctx, t);
    assert.equal(data.totalMillicents, Number.MAX_SAFE_INTEGER);
    assert.equal(data.spendableMillicents, Number.MAX_SAFE_INTEGER);
    assert.deepEqual((await transactions(ctx, t)).items.map((x: any) => x.amountMillicents), [10, Number.MAX_SAFE_INTEGER - 10]);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('money: grantCredits refuses non-integer and non-positive amounts and past expiry even without the HTTP schema', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    for (const amountMillicents of [1.5, 0, -5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 2]) {
      await assert.rejects(grantCredits(ctx.deps, t.workspace.id, { amountMillicents }), (err: unknown) => err instanceof AppError && err.code === 'INVALID_REQUEST');
    }
    await assert.rejects(grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 5, expiresAt: ctx.clock.now() }), (err: unknown) => err instanceof AppError && err.code === 'INVALID_REQUEST');
    assertStatus(await grant(ctx, t.workspace.id, { amountMillicents: 5, expiresAt: new Date(ctx.clock.now() - 1).toISOString() }), 400, 'INVALID_REQUEST');
    assertStatus(await grant(ctx, t.workspace.id, { amountMillicents: 5, expiresAt: 'tomorrow' }), 400, 'INVALID_REQUEST');
    await assert.rejects(grantCredits(ctx.deps, newId(), { amountMillicents: 5 }), (err: unknown) => err instanceof AppError && err.code === 'NOT_FOUND');
    assert.deepEqual((await transactions(ctx, t)).items, []);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('money: budget ceilings must be positive safe integers (workspace settings and key creation)', async () => {
    const ctx = get_();
    const t = await seedTenant(ctx.deps);
    for (const bad of [1.5, 0, -1, '100', Number.MAX_SAFE_INTEGER + 1]) {
      assertStatus(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { budgets: { dailyMillicents: bad } }), 400, 'INVALID_REQUEST');
      assertStatus(
        await admin(ctx, '/admin/v1/keys', { userId: t.user.id, workspaceIds: [t.workspace.id], scopes: ['usage:read'], operations: [], transports: ['rest'], budgets: { weeklyMillicents: bad } }),
        400,
        'INVALID_REQUEST',
      );
    }
    assertStatus(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { budgets: { dailyMillicents: Number.MAX_SAFE_INTEGER } }), 200);
  });
});
