/**
 * Issue 38 (a smaller idle process): while the service starts, V8's young generation is held at
 * its initial size (lib/start-up-heap.ts sets `--semi-space-growth-factor=1` at run time), and
 * once it is released the young generation grows again as usual. Run in a fresh node process
 * that allocates like a start-up (many objects that survive), so the test fails if a Node or V8
 * version stops reading the flag at run time. An operator's own value of the flag is left alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { operatorSetsGrowthFactor } from '../../src/lib/start-up-heap.js';

const MODULE = pathToFileURL(resolve('src/lib/start-up-heap.ts')).href;

const SCRIPT = `
import { getHeapSpaceStatistics } from 'node:v8';
import { holdYoungGenerationDuringStartUp } from ${JSON.stringify(MODULE)};
const newSpaceMiB = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
const kept = [];
const startUpLike = () => { for (let i = 0; i < 300000; i++) kept.push({ i, name: 'module ' + i }); };
const release = holdYoungGenerationDuringStartUp([], '');
startUpLike();
const held = newSpaceMiB();
release();
startUpLike();
startUpLike();
process.stdout.write(JSON.stringify({ held, released: newSpaceMiB(), kept: kept.length }));
`;

test('the young generation stays small while the service starts and grows again once it is up', () => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], { encoding: 'utf8' });
  const { held, released, kept } = JSON.parse(out) as { held: number; released: number; kept: number };
  assert.equal(kept, 900_000);
  // V8's default growth takes the young generation to 32 MiB under this allocation.
  assert.ok(held <= 8, `young generation held at ${held} MiB during start-up`);
  assert.ok(released >= 2 * held, `young generation grew again after start-up: ${held} -> ${released} MiB`);
});

test("an operator's own --semi-space-growth-factor (node flag or NODE_OPTIONS) is kept: the hold changes nothing then", () => {
  assert.equal(operatorSetsGrowthFactor(['--semi-space-growth-factor=4'], ''), true);
  assert.equal(operatorSetsGrowthFactor([], '--max-old-space-size=512 --semi_space_growth_factor=3'), true);
  assert.equal(operatorSetsGrowthFactor(['--enable-source-maps'], '--max-old-space-size=512'), false);
  assert.equal(operatorSetsGrowthFactor([], ''), false);
});
