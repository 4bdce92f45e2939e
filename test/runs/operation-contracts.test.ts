/**
 * Issue 33 (an operation is one contract): each operation's facts live in its contract
 * (src/operations/<name>.ts) and every other table is derived from them. Checked here: one
 * contract per id, in the order of the id list; the points are the spec's weights (copied table);
 * each contract carries a title and a typical input its own schema accepts and its price can
 * quote; its quantities are finite, with the typical amount never above the maximum; each price
 * parameter it declares prices a quantity it has; a schema default and the value the contract's
 * maths assumes for an absent field are the same number (so a default is written once); and the
 * domain (operations/) never imports an adapter (providers/).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { OPERATIONS, operationPoints, priceFromParams, typicalInputOf } from '../../src/operations/registry.js';
import { PRICE_PARAMS, type PriceParam, type Quantities } from '../../src/operations/pricing.js';
import { compileStrict } from '../../src/http/validation.js';
import { SPEC_OPERATION_WEIGHTS } from '../support/spec-weights.js';

/** The quantity each operation-specific price parameter multiplies (null: a flat amount per run). */
const QUANTITY_OF: Partial<Record<PriceParam, keyof Quantities | null>> = {
  baseMillicents: null,
  inputTokenMillicents: 'inputTokens',
  outputTokenMillicents: 'outputTokens',
  perImageMillicents: 'images',
  perThousandCharactersMillicents: 'characters',
  perSecondMillicents: 'seconds',
  perFrameMillicents: 'frames',
};

test('operation contracts: one per id, in the id list\'s order; points are the spec\'s weights', () => {
  assert.deepEqual(OPERATIONS.map((op) => op.id), OPERATION_IDS);
  for (const op of OPERATIONS) {
    assert.equal(op.points, SPEC_OPERATION_WEIGHTS[op.id], op.id);
    assert.equal(operationPoints(op.id), op.points);
  }
});

test('operation contracts: a title, and a typical input the schema accepts and the price quotes', () => {
  for (const op of OPERATIONS) {
    assert.ok(op.title.length > 0, op.id);
    assert.equal(typicalInputOf(op.id), op.typicalInput);
    const validate = compileStrict(op.inputSchema as object);
    const input = structuredClone(op.typicalInput.input);
    assert.ok(validate(input), `${op.id}: typical input refused: ${JSON.stringify(validate.errors)}`);
    const price = op.price(op.typicalInput.input);
    assert.ok(Number.isInteger(price.estimatedMillicents) && price.estimatedMillicents >= 0 && price.estimatedMillicents <= price.maximumMillicents, op.id);
    assert.ok(op.steps(op.typicalInput.input) >= 1, op.id);
  }
});

test('operation contracts: quantities are finite and typical ≤ maximum; each declared price parameter prices one of them', () => {
  for (const op of OPERATIONS) {
    const { maximum, typical } = op.quantities(op.typicalInput.input);
    for (const [name, value] of Object.entries(maximum)) {
      assert.ok(Number.isFinite(value) && value >= 0, `${op.id} maximum ${name}`);
      assert.ok((typical[name as keyof Quantities] ?? 0) <= value, `${op.id} typical ${name} above its maximum`);
    }
    for (const param of op.priceParams) {
      assert.ok(PRICE_PARAMS.includes(param), `${op.id}: ${param}`);
      const quantity = QUANTITY_OF[param];
      assert.ok(quantity !== undefined, `${op.id}: ${param} is not an operation's own parameter`);
      if (quantity !== null) assert.ok(maximum[quantity] !== undefined, `${op.id}: ${param} prices no quantity of the operation`);
      // A price of 1,000 on that parameter alone makes the typical input cost something.
      assert.ok(priceFromParams({ [param]: 1000 }, op.id, op.typicalInput.input, 60).maximumMillicents > 0, `${op.id}: ${param}`);
    }
  }
});

test('operation contracts: a schema default is the value the contract assumes for an absent field', () => {
  let checked = 0;
  for (const op of OPERATIONS) {
    const properties = ((op.inputSchema as { properties?: Record<string, { default?: unknown }> }).properties ?? {}) as Record<string, { default?: unknown }>;
    for (const [field, schema] of Object.entries(properties)) {
      if (schema.default === undefined || !(field in op.typicalInput.input)) continue;
      const without = { ...op.typicalInput.input };
      delete without[field];
      const withDefault = { ...without, [field]: schema.default };
      assert.deepEqual(op.quantities(without), op.quantities(withDefault), `${op.id}.${field}: quantities`);
      assert.deepEqual(op.price(without), op.price(withDefault), `${op.id}.${field}: price`);
      assert.equal(op.steps(without), op.steps(withDefault), `${op.id}.${field}: steps`);
      checked++;
    }
  }
  assert.ok(checked >= 8, `only ${checked} defaults checked`);
});

test('operation contracts: the domain (src/operations/) imports no adapter (src/providers/)', () => {
  const dir = join('src', 'operations');
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
    const source = readFileSync(join(dir, name), 'utf8');
    assert.doesNotMatch(source, /from '\.\.\/providers\//, `${name} imports from providers/`);
  }
});
