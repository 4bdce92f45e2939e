/** Configuration (decisions.md section 4): defaults, validation that lists every problem, SECRET_KEY. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { ConfigError, loadConfig, resolveSecretKey, sqliteFile } from '../../src/config.js';
import { openDatabase } from '../../src/db/connect.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `a ConfigError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail('loadConfig accepted an invalid environment');
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'was-config-'));
}

describe('configuration', () => {
  test('defaults follow the decisions.md section 4 table', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8080);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.databaseUrl, 'sqlite:./data/service.db');
    assert.equal(c.dataDir, resolve('./data'));
    assert.equal(c.mediaStore, 'local');
    assert.equal(c.s3Endpoint, undefined);
    assert.equal(c.publicBaseUrl, 'http://127.0.0.1:8080');
    assert.equal(c.adminToken, undefined, 'admin API off by default');
    assert.equal(c.secretKey, undefined, 'generated into DATA_DIR on first embedded start');
    assert.deepEqual(c.egressAllowCidrs, []);
    assert.deepEqual(c.trustedProxies, []);
    assert.equal(c.role, 'all');
    assert.equal(c.webhookRetryBaseMs, 30_000);
    assert.equal(c.webhookRetryCapMs, 3_600_000);
    assert.equal(c.webhookMaxAttempts, 12);
    assert.equal(c.eventRetentionDays, 30);
    assert.equal(c.outputCursorTtlS, 1800);
    assert.equal(c.mediaUrlTtlS, 900);
    assert.equal(c.jobLeaseMs, 30_000);
    assert.equal(c.streamsPerProcess, 1000);
    assert.equal(c.providersFile, undefined);
    assert.equal(c.logLevel, 'info');
    assert.equal(c.usageFlushMs, 1000);
    assert.equal(c.simulatedDelayMs, 50, 'decisions.md: simulated work takes 50 ms unless its text names a delay');
    assert.equal(loadConfig({ SIMULATED_DELAY_MS: '0' }).simulatedDelayMs, 0);
    // docs/decisions.md "Test mode": live keys never simulate unless a staging server says so.
    assert.equal(c.simulateLive, false);
    assert.equal(loadConfig({ SIMULATE_LIVE: 'true' }).simulateLive, true);
    assert.equal(c.testCreditsMillicents, 10_000_000);
  });

  test('S3 region: AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1; a malformed region stops start-up', () => {
    assert.equal(loadConfig({}).s3Region, 'us-east-1');
    assert.equal(loadConfig({ AWS_DEFAULT_REGION: 'eu-central-1' }).s3Region, 'eu-central-1');
    assert.equal(loadConfig({ AWS_REGION: 'eu-west-1', AWS_DEFAULT_REGION: 'eu-central-1' }).s3Region, 'eu-west-1');
    assert.throws(() => loadConfig({ AWS_REGION: 'eu west/1' }), /AWS_REGION must be a region name/);
  });

  test('PUBLIC_BASE_URL defaults to http://HOST:PORT (IPv6 hosts bracketed, trailing slash dropped when set)', () => {
    assert.equal(loadConfig({ HOST: '0.0.0.0', PORT: '9000' }).publicBaseUrl, 'http://0.0.0.0:9000');
    assert.equal(loadConfig({ HOST: '::1', PORT: '9000' }).publicBaseUrl, 'http://[::1]:9000');
    assert.equal(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/' }).publicBaseUrl, 'https://api.example.com');
  });

  test('with DATA_DIR set and no DATABASE_URL, the embedded database lives in DATA_DIR', () => {
    const c = loadConfig({ DATA_DIR: '/srv/was' });
    assert.equal(c.databaseUrl, 'sqlite:/srv/was/service.db');
    assert.equal(sqliteFile(c.databaseUrl), '/srv/was/service.db');
    assert.equal(loadConfig({ DATA_DIR: '/srv/was/', DATABASE_URL: 'sqlite:/other/x.db' }).databaseUrl, 'sqlite:/other/x.db');
  });

  test('PostgreSQL defaults the usage flush to 100 ms and accepts a SECRET_KEY', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://u:p@db.internal:5432/was', SECRET_KEY: 'k'.repeat(32) });
    assert.equal(c.usageFlushMs, 100);
    assert.equal(c.secretKey, 'k'.repeat(32));
    assert.equal(sqliteFile(c.databaseUrl), undefined);
  });

  test('valid non-default values are accepted', () => {
    const c = loadConfig({
      PORT: '0',
      HOST: 'localhost',
      ROLE: 'worker',
      EGRESS_ALLOW_CIDRS: '10.0.0.0/8, 127.0.0.1,::1/128',
      TRUSTED_PROXIES: '192.168.1.10',
      MEDIA_STORE: 's3://my-bucket/media',
      S3_ENDPOINT: 'http://127.0.0.1:9000',
      ADMIN_TOKEN: 'a'.repeat(16),
      WEBHOOK_RETRY_BASE_MS: '10',
      WEBHOOK_RETRY_CAP_MS: '20',
      LOG_LEVEL: 'debug',
    });
    assert.equal(c.port, 0);
    assert.equal(c.role, 'worker');
    assert.deepEqual(c.egressAllowCidrs, ['10.0.0.0/8', '127.0.0.1', '::1/128']);
    assert.deepEqual(c.trustedProxies, ['192.168.1.10']);
    assert.equal(c.mediaStore, 's3://my-bucket/media');
    assert.equal(c.logLevel, 'debug');
  });

  test('every malformed value is listed together in one ConfigError', () => {
    const problems = problemsOf({
      PORT: 'abc',
      HOST: 'not a host!',
      ROLE: 'x',
      DATABASE_URL: 'mysql://root@localhost/was',
      EGRESS_ALLOW_CIDRS: 'nonsense',
      TRUSTED_PROXIES: '10.0.0.0/99',
      MEDIA_STORE: 'ftp://bucket',
      S3_ENDPOINT: 'not-a-url',
      PUBLIC_BASE_URL: 'ftp://example.com',
      ADMIN_TOKEN: 'short',
      SECRET_KEY: 'too-short',
      LOG_LEVEL: 'loud',
      WEBHOOK_MAX_ATTEMPTS: '0',
      EVENT_RETENTION_DAYS: 'forever',
      OUTPUT_CURSOR_TTL_S: '-5',
      JOB_LEASE_MS: '10',
      JOB_CONCURRENCY: '0',
      STREAMS_PER_PROCESS: '0',
      USAGE_FLUSH_MS: '1.5',
      SIMULATED_DELAY_MS: '-1',
      SIMULATE_LIVE: 'maybe',
      TEST_CREDITS_MILLICENTS: '-5',
      PROVIDERS_FILE: '/no/such/providers.json',
    });
    const expectations: [string, RegExp][] = [
      ['PORT', /^PORT .*"abc"/],
      ['HOST', /^HOST /],
      ['ROLE', /^ROLE .*"x"/],
      ['DATABASE_URL', /^DATABASE_URL must be sqlite:PATH or postgres/],
      ['EGRESS_ALLOW_CIDRS', /^EGRESS_ALLOW_CIDRS: "nonsense"/],
      ['TRUSTED_PROXIES', /^TRUSTED_PROXIES: "10\.0\.0\.0\/99"/],
      ['MEDIA_STORE', /^MEDIA_STORE /],
      ['S3_ENDPOINT', /^S3_ENDPOINT /],
      ['PUBLIC_BASE_URL', /^PUBLIC_BASE_URL /],
      ['ADMIN_TOKEN', /^ADMIN_TOKEN .*16/],
      ['SECRET_KEY', /^SECRET_KEY .*32/],
      ['LOG_LEVEL', /^LOG_LEVEL .*"loud"/],
      ['WEBHOOK_MAX_ATTEMPTS', /^WEBHOOK_MAX_ATTEMPTS /],
      ['EVENT_RETENTION_DAYS', /^EVENT_RETENTION_DAYS /],
      ['OUTPUT_CURSOR_TTL_S', /^OUTPUT_CURSOR_TTL_S /],
      ['JOB_LEASE_MS', /^JOB_LEASE_MS /],
      ['JOB_CONCURRENCY', /^JOB_CONCURRENCY /],
      ['STREAMS_PER_PROCESS', /^STREAMS_PER_PROCESS /],
      ['USAGE_FLUSH_MS', /^USAGE_FLUSH_MS /],
      ['SIMULATED_DELAY_MS', /^SIMULATED_DELAY_MS /],
      ['SIMULATE_LIVE', /^SIMULATE_LIVE must be true or false \(got "maybe"\)/],
      ['TEST_CREDITS_MILLICENTS', /^TEST_CREDITS_MILLICENTS /],
      ['PROVIDERS_FILE', /^PROVIDERS_FILE: /],
    ];
    for (const [name, pattern] of expectations) {
      assert.ok(problems.some((p) => pattern.test(p)), `${name} is reported; problems:\n${problems.join('\n')}`);
    }
    assert.equal(problems.length, expectations.length, problems.join('\n'));
  });

  test('EGRESS_ALLOW_CIDRS and TRUSTED_PROXIES take canonical notation only (a leading-zero or short form would name another network); PUBLIC_BASE_URL is a plain base URL', () => {
    for (const item of ['10.1', '0177.1', '010.0.0.0/8', '0x7f000001', '127.0.0.01', '167838211', '10.0.0.0/08']) {
      for (const name of ['EGRESS_ALLOW_CIDRS', 'TRUSTED_PROXIES']) {
        const problems = problemsOf({ [name]: `192.168.0.0/16, ${item}` });
        assert.deepEqual(problems.length, 1, `${name}=${item}: ${problems.join('; ')}`);
        assert.match(problems[0]!, new RegExp(`^${name}: "${item.replace(/\./g, '\\.')}" is not an IP address or CIDR range in canonical notation`));
      }
    }
    const ok = loadConfig({ EGRESS_ALLOW_CIDRS: '10.0.0.0/8, 127.0.0.1, ::1, 2001:db8::/32, ::ffff:10.0.0.1', TRUSTED_PROXIES: '0.0.0.0/0' });
    assert.deepEqual(ok.egressAllowCidrs.length, 5);
    for (const url of ['http://x.io/?a=1', 'http://x.io/#f', 'https://user:pw@x.io', 'http://x.io/path?']) {
      const problems = problemsOf({ PUBLIC_BASE_URL: url });
      assert.equal(problems.length, 1, url);
      assert.match(problems[0]!, /^PUBLIC_BASE_URL must be a plain base URL/, url);
    }
    assert.equal(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/was/' }).publicBaseUrl, 'https://api.example.com/was');
  });

  test('the ConfigError message lists every problem, one per line', () => {
    try {
      loadConfig({ PORT: 'abc', ROLE: 'x' });
      assert.fail('accepted');
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /^Invalid configuration:\n {2}- PORT.*\n {2}- ROLE/);
    }
  });

  test('PostgreSQL without SECRET_KEY is refused (every process must share the key)', () => {
    const problems = problemsOf({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/was' });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /SECRET_KEY is required with PostgreSQL/);
    assert.match(problemsOf({ DATABASE_URL: 'postgresql://x@h/db' })[0]!, /SECRET_KEY/);
  });

  test('a database URL in an error message has its password hidden', () => {
    const problems = problemsOf({ DATABASE_URL: 'mysql://root:hunter2@localhost/was' });
    assert.ok(!problems.join('\n').includes('hunter2'), problems.join('\n'));
  });

  test('an empty sqlite: path and a webhook cap below its base are refused', () => {
    assert.match(problemsOf({ DATABASE_URL: 'sqlite:' }).join('\n'), /needs a file path/);
    assert.match(problemsOf({ WEBHOOK_RETRY_BASE_MS: '5000', WEBHOOK_RETRY_CAP_MS: '1000' }).join('\n'), /WEBHOOK_RETRY_CAP_MS must be at least/);
  });

  test('LOCK_WAIT_MS and SQLITE_SYNCHRONOUS: defaults 5000 and normal; bad values are listed', () => {
    const c = loadConfig({});
    assert.equal(c.lockWaitMs, 5000);
    assert.equal(c.sqliteSynchronous, 'normal');
    const set = loadConfig({ LOCK_WAIT_MS: '0', SQLITE_SYNCHRONOUS: 'FULL' });
    assert.equal(set.lockWaitMs, 0);
    assert.equal(set.sqliteSynchronous, 'full');
    const problems = problemsOf({ LOCK_WAIT_MS: 'soon', SQLITE_SYNCHRONOUS: 'off' });
    assert.ok(problems.some((p) => p.startsWith('LOCK_WAIT_MS')), problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('SQLITE_SYNCHRONOUS must be normal or full')), problems.join('\n'));
  });

  test('SQLITE_SYNCHRONOUS reaches the embedded database: NORMAL (1) by default, FULL (2) when asked', async () => {
    const dir = tempDir();
    try {
      for (const [setting, expected] of [[undefined, 1], ['full', 2]] as const) {
        const handle = await openDatabase(`sqlite:${join(dir, `${setting ?? 'default'}.db`)}`, setting ? { synchronous: setting } : {});
        try {
          const { rows } = await sql<{ synchronous: number }>`pragma synchronous`.execute(handle.db);
          assert.equal(rows[0]?.synchronous, expected);
        } finally {
          await handle.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('blank variables count as unset', () => {
    assert.equal(loadConfig({ PORT: '', ROLE: '  ', ADMIN_TOKEN: '' }).port, 8080);
  });
});

describe('SECRET_KEY resolution', () => {
  test('resolveSecretKey generates DATA_DIR/secret.key with mode 0600 once and reuses it', () => {
    const dir = tempDir();
    try {
      const config = loadConfig({ DATA_DIR: dir });
      const first = resolveSecretKey(config);
      assert.match(first, /^[0-9a-f]{64}$/);
      const file = join(dir, 'secret.key');
      assert.equal(readFileSync(file, 'utf8').trim(), first);
      assert.equal(statSync(file).mode & 0o777, 0o600, 'readable by the owner only');
      const again = resolveSecretKey(loadConfig({ DATA_DIR: dir }));
      assert.equal(again, first, 'the second start reuses the stored key');
      assert.equal(readFileSync(file, 'utf8').trim(), first, 'the file is not rewritten');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a SECRET_KEY from the environment wins and nothing is written', () => {
    const dir = tempDir();
    try {
      const key = 'e'.repeat(40);
      assert.equal(resolveSecretKey(loadConfig({ DATA_DIR: dir, SECRET_KEY: key })), key);
      assert.throws(() => statSync(join(dir, 'secret.key')), /ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a stored secret.key shorter than 32 characters is refused', () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir, 'secret.key'), 'short\n', { mode: 0o600 });
      assert.throws(() => resolveSecretKey(loadConfig({ DATA_DIR: dir })), ConfigError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
