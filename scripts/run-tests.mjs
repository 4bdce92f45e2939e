#!/usr/bin/env node
// Runs every test/**/*.test.ts with node's test runner (TypeScript through tsx). The suite loops
// over SQLite and PGlite, and over PostgreSQL too when TEST_DATABASE_URL is set.
// Extra arguments are test files or name patterns: node scripts/run-tests.mjs test/money/usage.test.ts
// The test-only certificate of test/fixtures/tls is trusted through NODE_EXTRA_CA_CERTS (read by
// node at start-up only, hence here) so the webhook tests' HTTPS receiver is verified for real.
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const args = process.argv.slice(2);
const files = args.length ? args : find('test').sort();
const concurrency = process.env.TEST_CONCURRENCY ?? String(Math.max(2, availableParallelism()));
// A hang guard, not a speed check: node applies it to each test and to each file as a whole. A
// file runs its suites once per database, and its heaviest ones (the jobs model, the media fuzz)
// took 300 s in all with two suites sharing two cores at once, so the guard sits well above that.
const TEST_TIMEOUT_MS = 900_000;
// The usual reporter (spec on a terminal, tap elsewhere, as node picks by default) plus a list of
// the failed tests at the very end, where a truncated CI log still shows it.
const reporters = [
  `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`, '--test-reporter-destination=stdout',
  `--test-reporter=${resolve('scripts/test-failures-reporter.mjs')}`, '--test-reporter-destination=stdout',
];
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${TEST_TIMEOUT_MS}`, ...reporters, ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test', NODE_EXTRA_CA_CERTS: resolve('test/fixtures/tls/localhost.crt') } },
);
process.exit(result.status ?? 1);
