/**
 * No silent skip in CI (issue 39, item 8): a suite's missing requirement (a program such as
 * openssl or script, the built server, TEST_DATABASE_URL) skips with a printed reason on a
 * developer machine and fails the run under CI=true (test/support/requirements.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { needsProgram, needsPostgres, requireOrSkip } from '../support/requirements.js';
import { testDatabaseNames } from '../support/databases.js';

function withEnv<T>(env: Record<string, string | undefined>, body: () => T): T {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return body();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

test('a missing program skips with its reason outside CI and fails the run under CI=true', () => {
  const missing = 'was-no-such-program-7f3a';
  assert.match(String(withEnv({ CI: undefined }, () => needsProgram(missing, ['--version'], 'none'))), /needs was-no-such-program-7f3a/);
  assert.throws(() => withEnv({ CI: 'true' }, () => needsProgram(missing, ['--version'], 'none')), /CI=true: a missing requirement fails the run.*was-no-such-program-7f3a/);
  assert.equal(withEnv({ CI: 'true' }, () => needsProgram(process.execPath, ['--version'], 'nodejs')), false, 'a present program is no reason');
  assert.equal(withEnv({ CI: 'true' }, () => requireOrSkip(false)), false);
});

test('without TEST_DATABASE_URL the suites skip PostgreSQL outside CI and fail under CI=true', () => {
  assert.deepEqual(withEnv({ CI: undefined, TEST_DATABASE_URL: undefined, TEST_DATABASES: undefined }, () => testDatabaseNames()), ['sqlite', 'pglite']);
  assert.throws(() => withEnv({ CI: 'true', TEST_DATABASE_URL: undefined }, () => testDatabaseNames()), /TEST_DATABASE_URL/);
  assert.throws(() => withEnv({ CI: 'true', TEST_DATABASE_URL: undefined }, () => needsPostgres()), /TEST_DATABASE_URL/);
  assert.deepEqual(withEnv({ CI: 'true', TEST_DATABASE_URL: 'postgres://x@127.0.0.1/x', TEST_DATABASES: undefined }, () => testDatabaseNames()), ['sqlite', 'pglite', 'postgres']);
});
