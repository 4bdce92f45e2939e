/**
 * The claim's decision (worker/claim-shares.ts), shared by the one-by-one claim and the batched
 * claim on PostgreSQL: candidates in queue order are taken while the claim has room and their
 * workspace has a free running slot (docs/decisions.md: claims share free slots in queue order).
 * The database paths are covered by test/jobs/jobs.test.ts (running-jobs limit),
 * test/jobs/job-races.test.ts and test/db/batching.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { shareClaims } from '../../src/worker/claim-shares.js';

const job = (id: string, workspace_id: string) => ({ id, workspace_id });

test('claims: free slots are shared out in queue order; a full workspace does not hold up the jobs behind it', () => {
  const queue = [job('1', 'a'), job('2', 'a'), job('3', 'b'), job('4', 'a'), job('5', 'c'), job('6', 'b')];
  const free = new Map([['a', 1], ['b', 2], ['c', 0]]);
  assert.deepEqual(shareClaims(queue, free, 10).map((j) => j.id), ['1', '3', '6']);
  // The claim's own room stops it in queue order.
  assert.deepEqual(shareClaims(queue, free, 2).map((j) => j.id), ['1', '3']);
  // A workspace with no known slots (or a negative count after a limit was lowered) gets none.
  assert.deepEqual(shareClaims([job('7', 'z')], new Map([['y', 3]]), 5), []);
  assert.deepEqual(shareClaims([job('8', 'y')], new Map([['y', -2]]), 5), []);
  assert.deepEqual(shareClaims(queue, free, 0), []);
});

test('claims: never more than the room or a workspace’s free slots, in queue order, and nothing claimable is passed over (property)', () => {
  const workspaces = fc.constantFrom('a', 'b', 'c', 'd');
  fc.assert(
    fc.property(fc.array(workspaces, { maxLength: 40 }), fc.dictionary(workspaces, fc.integer({ min: -2, max: 6 })), fc.nat(30), (order, slots, max) => {
      const queue = order.map((w, i) => job(String(i), w));
      const free = new Map(Object.entries(slots));
      const taken = shareClaims(queue, free, max);
      assert.ok(taken.length <= max);
      const positions = taken.map((t) => queue.indexOf(t));
      assert.deepEqual(positions, [...positions].sort((x, y) => x - y), 'queue order');
      const per = new Map<string, number>();
      for (const t of taken) per.set(t.workspace_id, (per.get(t.workspace_id) ?? 0) + 1);
      for (const [w, n] of per) assert.ok(n <= (free.get(w) ?? 0), `workspace ${w}: ${n} > its free slots`);
      // Maximal: a candidate left out came when the claim was full or its workspace had no slot left.
      const seen = new Map<string, number>();
      let count = 0;
      for (const q of queue) {
        const isTaken = taken.includes(q);
        const used = seen.get(q.workspace_id) ?? 0;
        if (!isTaken) assert.ok(count >= max || used >= (free.get(q.workspace_id) ?? 0), `job ${q.id} could have been claimed`);
        else {
          seen.set(q.workspace_id, used + 1);
          count++;
        }
      }
    }),
  );
});
