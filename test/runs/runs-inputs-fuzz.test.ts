/**
 * Property tests of the input of each of the 14 operations (spec Rule 1): inputs generated near
 * the operation's published inputSchema (GET /v1/tools) are 400 INVALID_INPUT with JSON pointers,
 * or admitted and drained. The oracle and what every response is checked against are those of
 * test/runs/runs-fuzz.test.ts (test/support/runs-oracle.ts); this file is apart so that the two run
 * side by side.
 *
 * RUNS_FUZZ_RUNS raises the number of generated cases per property.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { describeEachDatabase, testKeySuite } from '../support/harness.js';
import { type Caller, type Fixture, RUNS, assertProperty, exchange, expectedFor, jsonReq, ledgersHold, nearInputArb, pickInput, report, seen, setUp, validInputArb } from '../support/runs-oracle.js';
import { checkRefusals } from '../support/openapi-responses.js';

describeEachDatabase('runs fuzz, inputs near each schema', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  let f: Fixture;
  before(async () => {
    // Test keys: every operation runs on the simulated provider (the inputs of all 14 are fuzzed).
    f = await setUp(get(), 'test');
  });

  for (const op of OPERATION_IDS) {
    test(`Rule 1 (${RUNS} runs): ${op} inputs near its published inputSchema are INVALID_INPUT with pointers, or admitted and drained`, async (t) => {
      const ctx = get();
    f.stats.clear();
      await assertProperty(
        fc.asyncProperty(fc.constantFrom('estimates' as const, 'runs' as const), nearInputArb(f, op), fc.constantFrom('a', 'a', 'a', 'narrow', 'b'), async (endpoint, input, who) => {
          await exchange(ctx, f, jsonReq(endpoint, f.callers[who as Caller['name']], { operationId: op, input }));
        }),
        RUNS,
        [
          ['runs', pickInput(validInputArb(f, op), (input) => expectedFor(f, jsonReq('runs', f.callers.a, { operationId: op, input })).accept !== undefined), 'a'],
          ['estimates', pickInput(nearInputArb(f, op), (input) => expectedFor(f, jsonReq('estimates', f.callers.a, { operationId: op, input })).refuse.includes('INVALID_INPUT')), 'a'],
        ],
      );
      report(t, f);
      if (RUNS >= 30) assert.ok(seen(f, 'estimates INVALID_INPUT') + seen(f, 'runs INVALID_INPUT') > 0 && seen(f, `drained ${op}`) > 0, `the generators reach invalid and valid ${op} inputs`);
      await ledgersHold(ctx, f);
    });
  }
}, testKeySuite());
