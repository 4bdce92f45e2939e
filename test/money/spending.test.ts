/**
 * Settlement's spending order (reservations/spending.ts), shared by the one-by-one settlement and
 * the batched finish: earliest expiry first, never-expiring credits last, ties by id; a hold
 * spends only allocations that had not expired when it was admitted; what is left uncovered is
 * reported, never taken from elsewhere. The database paths that use it are covered by
 * test/money/billing.test.ts, test/money/credit-expiry-holds.test.ts and test/db/batching.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { inSpendingOrder, planDebits, type SpendableAllocation } from '../../src/modules/reservations/spending.js';

const alloc = (id: string, remaining: number, expiresAt: number | null): SpendableAllocation => ({ id, remaining, expiresAt });

test('spending order: earliest expiry first, never-expiring last, ties by id', () => {
  const list = [alloc('d', 1, null), alloc('c', 1, 300), alloc('b', 1, 100), alloc('a', 1, null), alloc('e', 1, 100)];
  assert.deepEqual(inSpendingOrder(list).map((a) => a.id), ['b', 'e', 'c', 'a', 'd']);
  assert.deepEqual(list.map((a) => a.id), ['d', 'c', 'b', 'a', 'e'], 'the input is left in its order');
});

test('planDebits: spends in order, splits across allocations, lowers what is left', () => {
  const list = inSpendingOrder([alloc('late', 500, 2_000), alloc('never', 1_000, null), alloc('soon', 300, 1_500)]);
  const first = planDebits(list, 700, 1_000);
  assert.deepEqual(first, { debits: [{ allocationId: 'soon', amountMillicents: 300 }, { allocationId: 'late', amountMillicents: 400 }], shortfall: 0 });
  // The next hold of the batch sees what the first left.
  const second = planDebits(list, 200, 1_000);
  assert.deepEqual(second, { debits: [{ allocationId: 'late', amountMillicents: 100 }, { allocationId: 'never', amountMillicents: 100 }], shortfall: 0 });
  assert.deepEqual(list.map((a) => [a.id, a.remaining]), [['soon', 0], ['late', 0], ['never', 900]]);
});

test('planDebits: a hold never spends credits that had expired when it was admitted', () => {
  const list = inSpendingOrder([alloc('expired-before', 1_000, 900), alloc('expires-at-admission', 1_000, 1_000), alloc('live', 100, 5_000)]);
  assert.deepEqual(planDebits(list, 250, 1_000), { debits: [{ allocationId: 'live', amountMillicents: 100 }], shortfall: 150 });
  // A hold admitted earlier may spend them (they were live for it).
  assert.deepEqual(planDebits(list, 250, 800).debits, [{ allocationId: 'expired-before', amountMillicents: 250 }]);
});

test('planDebits: charging nothing debits nothing', () => {
  assert.deepEqual(planDebits([alloc('a', 10, null)], 0, 0), { debits: [], shortfall: 0 });
});

test('planDebits (property): debits + shortfall = charge; no allocation below zero; an allocation is touched only when every earlier spendable one is empty', () => {
  const allocation = fc.record({
    id: fc.uuid(),
    remaining: fc.integer({ min: 0, max: 10_000 }),
    expiresAt: fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: null }),
  });
  fc.assert(
    fc.property(fc.uniqueArray(allocation, { selector: (a) => a.id, maxLength: 8 }), fc.integer({ min: 0, max: 50_000 }), fc.integer({ min: 0, max: 10_000 }), (raw, charge, heldSince) => {
      const list = inSpendingOrder(raw.map((a) => ({ ...a })));
      const before = new Map(list.map((a) => [a.id, a.remaining]));
      const { debits, shortfall } = planDebits(list, charge, heldSince);
      const spent = debits.reduce((sum, d) => sum + d.amountMillicents, 0);
      assert.equal(spent + shortfall, charge);
      assert.ok(shortfall >= 0);
      const spendable = list.filter((a) => a.expiresAt === null || a.expiresAt > heldSince);
      if (shortfall > 0) assert.ok(spendable.every((a) => a.remaining === 0), 'a shortfall only when every spendable allocation is empty');
      for (const a of list) {
        assert.ok(a.remaining >= 0);
        const debit = debits.find((d) => d.allocationId === a.id)?.amountMillicents ?? 0;
        assert.equal(before.get(a.id)! - a.remaining, debit);
        if (debit > 0) assert.ok(spendable.includes(a), 'only allocations live when the hold was admitted are spent');
      }
      // Spending order: once an allocation is debited, every spendable allocation before it is empty.
      const lastTouched = Math.max(-1, ...debits.map((d) => spendable.findIndex((a) => a.id === d.allocationId)));
      for (let i = 0; i < lastTouched; i++) assert.equal(spendable[i]!.remaining, 0);
    }),
    { numRuns: 500 },
  );
});
