/**
 * decisions.md section 3's code -> status pairs, hand-copied in test/support/spec-errors.ts, hold
 * in the registry of src/http/errors.ts (issue 39, item 5). Live refusals are checked against the
 * same table by assertError (test/support/assertions.ts) and by the fuzzers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_REGISTRY, EXTRA_STATUSES, type ErrorCode } from '../../src/http/errors.js';
import { SPEC_ERROR_STATUSES } from '../support/spec-errors.js';

test('every error code of the spec is registered with the status the spec gives it', () => {
  const wrong: string[] = [];
  for (const [code, statuses] of Object.entries(SPEC_ERROR_STATUSES)) {
    if (!Object.hasOwn(ERROR_REGISTRY, code)) {
      wrong.push(`${code}: not registered`);
      continue;
    }
    const registered = [ERROR_REGISTRY[code as ErrorCode][0], ...(EXTRA_STATUSES[code as ErrorCode] ?? [])];
    if (registered.slice().sort().join() !== statuses.slice().sort().join()) wrong.push(`${code}: registered ${registered.join('/')}, spec ${statuses.join('/')}`);
  }
  assert.deepEqual(wrong, []);
});
