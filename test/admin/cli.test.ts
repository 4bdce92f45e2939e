/**
 * The operator's command line tool (src/admin/cli.ts), run in-process with `runCli` against a
 * temporary SQLite file and, when TEST_DATABASE_URL is set, a fresh PostgreSQL database; results
 * are checked through an app built on the same database. The last suite runs the built binary
 * (dist/main.js, built by `npm test`) as a child process.
 */
import { after, afterEach, before, describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import dns from 'node:dns';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { CLI_USAGE, runCli } from '../../src/admin/cli.js';
import { COMMANDS } from '../../src/admin/cli-commands.js';
import { COMMAND_NAMES, commandUsage } from '../../src/admin/cli-usage.js';
import { loadConfig, resolveSecretKey, type Config } from '../../src/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { findMemberRole } from '../../src/modules/accounts/store.js';
import { readAuthEpoch } from '../../src/modules/auth/store.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import * as billingStore from '../../src/modules/billing/store.js';
import { findDomain } from '../../src/modules/domains/store.js';
import { readProviderKey } from '../../src/modules/provider-keys/service.js';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { getWorkspaceCosts } from '../../src/modules/costs/service.js';
import { createTestDatabase, testDatabaseNames, type TestDatabase } from '../support/databases.js';
import { TEST_SECRET_KEY } from '../support/harness.js';
import { startLiveBackend, type LiveBackend } from '../support/live-backend.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { uniqueEmail } from '../support/seed.js';
import { waitUntil } from '../support/wait.js';
import { needsDist } from '../support/requirements.js';
import { freePort } from '../support/free-port.js';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI in-process, capturing what it writes. Only string writes are captured: the test
 * runner's own (binary) reports still pass through.
 */
async function cli(config: Config, ...argv: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const out = process.stdout.write;
  const err = process.stderr.write;
  const capture = (stream: NodeJS.WriteStream, original: typeof out, append: (s: string) => void) =>
    function (this: unknown, chunk: unknown, ...rest: unknown[]) {
      if (typeof chunk === 'string') {
        append(chunk);
        return true;
      }
      return (original as (...a: unknown[]) => boolean).call(stream, chunk, ...rest);
    } as typeof out;
  process.stdout.write = capture(process.stdout, out, (s) => (stdout += s));
  process.stderr.write = capture(process.stderr, err, (s) => (stderr += s));
  try {
    const code = await runCli(config, argv);
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

function json(r: CliResult): any {
  assert.equal(r.code, 0, `exit ${r.code}; stderr: ${r.stderr}`);
  assert.equal(r.stderr, '');
  return JSON.parse(r.stdout);
}

/** A refused command: exit 1 and `error CODE: message` on stderr, nothing on stdout. */
function refused(r: CliResult, code: string): void {
  assert.equal(r.code, 1, `exit ${r.code}; stdout: ${r.stdout}; stderr: ${r.stderr}`);
  assert.match(r.stderr, new RegExp(`^error ${code}: \\S`));
  assert.equal(r.stdout, '');
}

/**
 * A wrong command line: exit 2, the problem (matching `pattern`) first on stderr, then the usage:
 * the command's own when the message names a known command, else the whole usage.
 */
function usageError(r: CliResult, pattern: RegExp): void {
  assert.equal(r.code, 2, `exit ${r.code}; stdout: ${r.stdout}; stderr: ${r.stderr}`);
  const first = r.stderr.split('\n')[0]!;
  assert.match(first, pattern);
  const named = COMMAND_NAMES.find((name) => first.startsWith(`${name}: `));
  assert.ok(r.stderr.endsWith(`\n\n${named ? commandUsage(named) : CLI_USAGE}`), `the usage follows the message: ${r.stderr}`);
  assert.equal(r.stdout, '');
}

const QUICKSTART_RE = /Live key \(shown once, keep it\): (wask_[A-Za-z0-9_-]{43})\n[\s\S]*curl -s (\S+)\/v1\/usage -H "Authorization: Bearer (wask_[A-Za-z0-9_-]{43})" -H "X-Service-Workspace: ([0-9a-f-]{36})"/;
/** The test key, first, and the curl line that runs chat.generate with it (issue 34). */
const QUICKSTART_TEST_RE = /Test key \(shown once, keep it\): (wask_test_[A-Za-z0-9_-]{43})\n[\s\S]*curl -s (\S+)\/v1\/runs -H "Authorization: Bearer (wask_test_[A-Za-z0-9_-]{43})" -H "X-Service-Workspace: ([0-9a-f-]{36})" -H "Idempotency-Key: (\S+)" -H "Content-Type: application\/json" -d '(\{.*\})'/;

type LookupAnswer = { address: string; family: number }[];
function fakeLookup(answers: Record<string, LookupAnswer>): void {
  mock.method(dns, 'lookup', (hostname: string, _options: unknown, callback: (err: Error | null, addresses?: unknown) => void) => {
    const answer = answers[hostname];
    if (answer) process.nextTick(() => callback(null, answer));
    else process.nextTick(() => callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })));
  });
}

afterEach(() => mock.restoreAll());

for (const dbName of testDatabaseNames().filter((n) => n !== 'pglite')) {
  describe(`cli [${dbName}]`, () => {
    let database: TestDatabase;
    let dataDir: string;
    let config: Config;
    let deps: Deps;
    let app: FastifyInstance;
    let live: LiveBackend | undefined;

    /** The app's view after the CLI changed things in another connection. */
    async function refreshAuth(): Promise<void> {
      deps.authCache.observeEpoch(await readAuthEpoch(deps.db));
    }

    async function usage(secret: string, workspaceId: string) {
      await refreshAuth();
      return app.inject({ method: 'GET', url: '/v1/usage', headers: { authorization: `Bearer ${secret}`, 'x-service-workspace': workspaceId } });
    }

    async function newUser(): Promise<any> {
      return json(await cli(config, 'users', 'create', '--email', uniqueEmail(), '--name', 'Operator')).user;
    }

    async function newWorkspace(ownerId: string, plan = 'pro'): Promise<any> {
      return json(await cli(config, 'workspaces', 'create', '--name', 'WS', '--plan', plan, '--owner', ownerId)).workspace;
    }

    before(async () => {
      database = await createTestDatabase(dbName);
      dataDir = mkdtempSync(join(tmpdir(), 'was-cli-'));
      // The operator's reads show live jobs and money: live keys run real work on the paid
      // providers' fakes (support/live-backend.ts).
      live = await startLiveBackend();
      config = loadConfig({ DATABASE_URL: database.url!, DATA_DIR: dataDir, SECRET_KEY: TEST_SECRET_KEY, LOG_LEVEL: 'silent', ...live.env });
      deps = await createDeps({ config, secretKey: TEST_SECRET_KEY, database: database.handle, log: pino({ level: 'silent' }), epochPollMs: 0 });
      app = await buildApp(deps);
      await app.ready();
    });

    after(async () => {
      await app?.close();
      await deps?.close();
      await database?.dispose();
      await live?.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    test('cli help: `help`, -h, --help, no command and an unknown command with --help print the usage on stdout with exit 0', async () => {
      for (const argv of [['help'], ['-h'], ['--help'], [], ['nothing', '--help']]) {
        const r = await cli(config, ...argv);
        assert.equal(r.code, 0);
        assert.equal(r.stdout, CLI_USAGE);
        assert.equal(r.stderr, '');
      }
    });

    test('cli help: `<command> --help` prints that command\'s usage lines (every command has some) with exit 0', async () => {
      for (const name of COMMAND_NAMES) {
        const r = await cli(config, ...name.split(' '), '--help');
        assert.equal(r.code, 0, name);
        assert.equal(r.stderr, '');
        assert.equal(r.stdout, commandUsage(name));
        const lines = r.stdout.split('\n').filter((line) => line.startsWith('  '));
        assert.ok(lines.some((line) => line.startsWith(`  ${name} `) || line === `  ${name}` || line.includes(`| ${name} `)), `${name}: ${r.stdout}`);
        assert.ok(lines.every((line) => CLI_USAGE.includes(line)), 'lines come from the usage');
      }
      const keys = await cli(config, 'keys', 'create', '-h');
      assert.match(keys.stdout, /^Usage: was keys create \[options\]\n\n  keys create --user USER_ID --workspace ID\.\.\. .*\n +\[--expires ISO\]/);
    });

    test('cli commands: the light name list (help, unknown commands) is exactly the command tables\' keys', () => {
      assert.deepEqual([...COMMAND_NAMES].sort(), Object.keys(COMMANDS).sort());
    });

    test('cli migrate: applies migrations and exits 0', async () => {
      const r = await cli(config, 'migrate');
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'migrations applied\n');
    });

    test('cli quickstart: prints a test key first (with a curl line that runs chat.generate for free), then a live key and a curl line; both work on an app over the same database', async () => {
      const r = await cli(config, 'quickstart', '--email', uniqueEmail());
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      const m = QUICKSTART_RE.exec(r.stdout);
      assert.ok(m, `quickstart output:\n${r.stdout}`);
      const [, secret, base, curlSecret, workspaceId] = m;
      assert.equal(curlSecret, secret);
      assert.equal(base, config.publicBaseUrl);
      const res = await usage(secret!, workspaceId!);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().code, 'PUBLIC_USAGE_GET');
      const balance = await app.inject({ method: 'GET', url: '/v1/balance', headers: { authorization: `Bearer ${secret}`, 'x-service-workspace': workspaceId! } });
      assert.equal(balance.json().data.totalMillicents, 1_000_000);
      // The test key comes first and its curl line runs chat.generate, paid from the test balance.
      const t = QUICKSTART_TEST_RE.exec(r.stdout);
      assert.ok(t, `quickstart output:\n${r.stdout}`);
      assert.ok(r.stdout.indexOf('Test key') < r.stdout.indexOf('Live key'), 'the test key is printed first');
      const [, testSecret, , curlTestSecret, testWorkspace, idemKey, runBody] = t;
      assert.equal(curlTestSecret, testSecret);
      assert.equal(testWorkspace, workspaceId);
      const ran = await app.inject({
        method: 'POST',
        url: '/v1/runs',
        headers: { authorization: `Bearer ${testSecret}`, 'x-service-workspace': workspaceId!, 'idempotency-key': idemKey!, 'content-type': 'application/json' },
        payload: runBody!,
      });
      assert.equal(ran.statusCode, 200, ran.body);
      assert.equal(ran.json().data.kind, 'result');
      const after = await app.inject({ method: 'GET', url: '/v1/balance', headers: { authorization: `Bearer ${secret}`, 'x-service-workspace': workspaceId! } });
      assert.equal(after.json().data.totalMillicents, 1_000_000, 'the test run spent no live credits');
      await assertLedgerInvariants(deps, workspaceId!);
    });

    test('cli quickstart --json: the same objects as JSON; an existing email reuses the user, each run adds a workspace', async () => {
      const email = uniqueEmail();
      const first = json(await cli(config, 'quickstart', '--json', '--email', email, '--plan', 'starter', '--credits', '5000'));
      assert.equal(first.user.email, email);
      assert.equal(first.workspace.plan, 'starter');
      assert.equal(first.workspace.ownerUserId, first.user.id);
      assert.equal(first.allocation.amountMillicents, 5000);
      assert.equal(first.allocation.provenance, 'purchase');
      assert.deepEqual(first.key.scopes, [...SCOPES]);
      assert.deepEqual(first.key.operations, [...OPERATION_IDS]);
      assert.deepEqual(first.key.transports, ['rest', 'mcp']);
      assert.equal(first.key.prefix, first.secret.slice(0, 12));
      assert.equal(first.key.mode, 'live');
      assert.equal(first.testKey.mode, 'test');
      assert.match(first.testSecret, /^wask_test_/);
      assert.equal((await usage(first.testSecret, first.workspace.id)).json().data.livemode, false);
      const second = json(await cli(config, 'quickstart', '--json', '--email', email.toUpperCase()));
      assert.equal(second.user.id, first.user.id);
      assert.notEqual(second.workspace.id, first.workspace.id);
      assert.equal((await usage(second.secret, second.workspace.id)).statusCode, 200);
      await assertLedgerInvariants(deps, first.workspace.id);
    });

    test('cli quickstart: bad --plan, --credits or --email exit 2 naming the option, and create nothing', async () => {
      const count = async () => (await deps.db.selectFrom('workspaces').select('id').execute()).length;
      const before = await count();
      usageError(await cli(config, 'quickstart', '--plan', 'gold'), /--plan must be one of: free, starter, pro/);
      usageError(await cli(config, 'quickstart', '--credits', 'lots'), /--credits must be integer/);
      usageError(await cli(config, 'quickstart', '--credits', '0'), /--credits must be >= 1/);
      usageError(await cli(config, 'quickstart', '--email', 'nobody'), /--email must match format "email"/);
      assert.equal(await count(), before);
    });

    test('cli users create: prints {user}; a taken email exits 1 CONFLICT; bad or missing options exit 2', async () => {
      const email = uniqueEmail();
      const { user } = json(await cli(config, 'users', 'create', '--email', email, '--name', 'Ada Lovelace'));
      assert.equal(user.email, email);
      assert.equal(user.name, 'Ada Lovelace');
      refused(await cli(config, 'users', 'create', '--email', email.toUpperCase(), '--name', 'Again'), 'CONFLICT');
      usageError(await cli(config, 'users', 'create', '--email', 'not-an-email', '--name', 'X'), /--email must match format "email"/);
      usageError(await cli(config, 'users', 'create', '--email', uniqueEmail()), /--name is required/);
      refused(await cli(config, 'users', 'create', '--email', uniqueEmail(), '--name', '   '), 'INVALID_REQUEST');
    });

    test('cli orgs: create (owner member), set-member, remove-member; the last owner stays (exit 1 CONFLICT)', async () => {
      const owner = await newUser();
      const other = await newUser();
      const { organization } = json(await cli(config, 'orgs', 'create', '--name', 'Acme', '--owner', owner.id));
      assert.equal(organization.name, 'Acme');
      assert.equal(await findMemberRole(deps.db, organization.id, owner.id), 'owner');
      const { member } = json(await cli(config, 'orgs', 'set-member', '--org', organization.id, '--user', other.id, '--role', 'admin'));
      assert.deepEqual(member, { organizationId: organization.id, userId: other.id, role: 'admin' });
      refused(await cli(config, 'orgs', 'remove-member', '--org', organization.id, '--user', owner.id), 'CONFLICT');
      refused(await cli(config, 'orgs', 'set-member', '--org', organization.id, '--user', owner.id, '--role', 'member'), 'CONFLICT');
      assert.deepEqual(json(await cli(config, 'orgs', 'remove-member', '--org', organization.id, '--user', other.id)), { removed: true });
      assert.equal(await findMemberRole(deps.db, organization.id, other.id), undefined);
      refused(await cli(config, 'orgs', 'remove-member', '--org', organization.id, '--user', other.id), 'NOT_FOUND');
      refused(await cli(config, 'orgs', 'create', '--name', 'Ghost', '--owner', '01890000-0000-7000-8000-000000000000'), 'NOT_FOUND');
      usageError(await cli(config, 'orgs', 'set-member', '--org', organization.id, '--user', other.id, '--role', 'boss'), /--role must be one of: owner, admin, member/);
      usageError(await cli(config, 'orgs', 'set-member', '--org', 'acme', '--user', other.id, '--role', 'admin'), /--org must match format "uuid"/);
      usageError(await cli(config, 'orgs', 'create', '--name', 'Acme'), /--owner is required/);
    });

    test('cli workspaces create: personal or organization; both or neither exit 2; unknown owner exit 1 NOT_FOUND', async () => {
      const owner = await newUser();
      const personal = await newWorkspace(owner.id, 'free');
      assert.equal(personal.ownerUserId, owner.id);
      assert.equal(personal.plan, 'free');
      const { organization } = json(await cli(config, 'orgs', 'create', '--name', 'Acme', '--owner', owner.id));
      const { workspace: team } = json(await cli(config, 'workspaces', 'create', '--name', 'Team', '--plan', 'pro', '--org', organization.id));
      assert.equal(team.organizationId, organization.id);
      usageError(await cli(config, 'workspaces', 'create', '--name', 'X', '--plan', 'pro', '--owner', owner.id, '--org', organization.id), /exactly one of --owner .* or --org/);
      usageError(await cli(config, 'workspaces', 'create', '--name', 'X', '--plan', 'pro'), /exactly one of --owner/);
      usageError(await cli(config, 'workspaces', 'create', '--name', 'X', '--plan', 'platinum', '--owner', owner.id), /--plan must be one of/);
      refused(await cli(config, 'workspaces', 'create', '--name', 'X', '--plan', 'pro', '--owner', '01890000-0000-7000-8000-000000000000'), 'NOT_FOUND');
    });

    test('cli workspaces settings: plan, --limit NAME=N|default and --budget PERIOD=N|none, printed as {workspace, limits, budgets}', async () => {
      const owner = await newUser();
      const ws = await newWorkspace(owner.id);
      let s = json(
        await cli(config, 'workspaces', 'settings', '--workspace', ws.id, '--plan', 'starter', '--limit', 'pointsPerMinute=77', '--limit', 'streams=1', '--budget', 'daily=5000', '--budget', 'monthly=90000'),
      );
      assert.equal(s.workspace.plan, 'starter');
      assert.equal(s.limits.pointsPerMinute, 77);
      assert.equal(s.limits.streams, 1);
      assert.deepEqual(s.budgets, { dailyMillicents: 5000, weeklyMillicents: null, monthlyMillicents: 90000 });
      s = json(await cli(config, 'workspaces', 'settings', '--workspace', ws.id, '--limit', 'pointsPerMinute=default', '--budget', 'daily=none'));
      assert.equal(s.limits.pointsPerMinute, 1200);
      assert.equal(s.limits.streams, 1);
      assert.deepEqual(s.budgets, { dailyMillicents: null, weeklyMillicents: null, monthlyMillicents: 90000 });
      usageError(await cli(config, 'workspaces', 'settings', '--workspace', ws.id), /at least one of --plan, --limit, --budget or --low-credits/);
      // The credits.low threshold (modules/alerts): set, kept by other changes, `none` turns it off.
      s = json(await cli(config, 'workspaces', 'settings', '--workspace', ws.id, '--low-credits', '25000'));
      assert.equal(s.workspace.lowCreditsMillicents, 25000);
      s = json(await cli(config, 'workspaces', 'settings', '--workspace', ws.id, '--plan', 'pro'));
      assert.equal(s.workspace.lowCreditsMillicents, 25000);
      s = json(await cli(config, 'workspaces', 'settings', '--workspace', ws.id, '--low-credits', 'none'));
      assert.equal(s.workspace.lowCreditsMillicents, null);
      usageError(await cli(config, 'workspaces', 'settings', '--workspace', ws.id, '--low-credits', '0'), /--low-credits/);
      usageError(await cli(config, 'workspaces', 'settings', '--workspace', ws.id, '--low-credits', '1e3'), /--low-credits/);
      usageError(await cli(config, 'workspaces', 'settings', '--workspace', ws.id, '--limit', 'pointsPerHour=5'), /--limit: unknown name "pointsPerHour"/);
      usageError(await cli(config, 'workspaces', 'settings', '--workspace', ws.id, '--limit', 'streams'), /--limit takes NAME=VALUE/);
      usageError(await cli(config, 'workspaces', 'settings', '--workspace', ws.id, '--limit', 'streams=-1'), /--limit \(streams\)/);
      usageError(await cli(config, 'workspaces', 'settings', '--workspace', ws.id, '--budget', 'daily=1e3'), /--budget \(daily\) must be integer/);
      usageError(await cli(config, 'workspaces', 'settings', '--workspace', ws.id, '--budget', 'yearly=5'), /--budget: unknown name "yearly"/);
      usageError(await cli(config, 'workspaces', 'settings', '--workspace', ws.id, '--workspace', ws.id, '--plan', 'pro'), /--workspace is given 2 times/);
      refused(await cli(config, 'workspaces', 'settings', '--workspace', '01890000-0000-7000-8000-000000000000', '--plan', 'pro'), 'NOT_FOUND');
    });

    test('cli credits grant: prints {allocation} with a purchase ledger entry; past expiry exit 1; non-integer amounts exit 2', async () => {
      const owner = await newUser();
      const ws = await newWorkspace(owner.id);
      const expires = new Date(Date.now() + 86_400_000).toISOString();
      const { allocation } = json(await cli(config, 'credits', 'grant', '--workspace', ws.id, '--amount', '12345', '--expires', expires, '--provenance', 'promo'));
      assert.equal(allocation.amountMillicents, 12345);
      assert.equal(allocation.expiresAt, expires);
      assert.equal(allocation.provenance, 'promo');
      const plain = json(await cli(config, 'credits', 'grant', '--workspace', ws.id, '--amount', '100'));
      assert.equal(plain.allocation.provenance, 'purchase');
      const entries = await billingStore.pageLedger(deps.db, ws.id, undefined, 10);
      assert.deepEqual(entries.map((e) => [e.type, e.amountMillicents]).sort(), [['purchase', 100], ['purchase', 12345]]);
      await assertLedgerInvariants(deps, ws.id);
      refused(await cli(config, 'credits', 'grant', '--workspace', ws.id, '--amount', '100', '--expires', '2001-01-01T00:00:00Z'), 'INVALID_REQUEST');
      for (const amount of ['1.5', '1e3', '-5', '0', 'ten', '']) {
        usageError(await cli(config, 'credits', 'grant', '--workspace', ws.id, `--amount=${amount}`), /^credits grant: --amount /);
      }
      usageError(await cli(config, 'credits', 'grant', '--workspace', ws.id), /--amount is required/);
      usageError(await cli(config, 'credits', 'grant', '--amount', '5'), /--workspace is required/);
      usageError(await cli(config, 'credits', 'grant', '--workspace', ws.id, '--amount', '5', '--expires', 'next week'), /--expires must match format "date-time"/);
      await assertLedgerInvariants(deps, ws.id);
    });

    test('cli domains: add (normalised), verify --method operator, verify by http refused (exit 1 DOMAIN_NOT_VERIFIED), remove', async () => {
      const owner = await newUser();
      const ws = await newWorkspace(owner.id);
      const hostname = `hooks.cli-${process.pid}-${Date.now()}.example.com`;
      const { domain } = json(await cli(config, 'domains', 'add', '--workspace', ws.id, '--hostname', `${hostname.toUpperCase()}.`));
      assert.equal(domain.hostname, hostname);
      assert.equal(domain.status, 'pending');
      fakeLookup({ [hostname]: [{ address: '10.1.2.3', family: 4 }] });
      refused(await cli(config, 'domains', 'verify', '--workspace', ws.id, '--hostname', hostname, '--method', 'http'), 'DOMAIN_NOT_VERIFIED');
      mock.restoreAll();
      const verified = json(await cli(config, 'domains', 'verify', '--workspace', ws.id, '--hostname', hostname, '--method', 'operator')).domain;
      assert.equal(verified.status, 'verified');
      assert.equal(verified.verifiedMethod, 'operator');
      assert.equal((await findDomain(deps.db, ws.id, hostname))?.status, 'verified');
      assert.deepEqual(json(await cli(config, 'domains', 'remove', '--workspace', ws.id, '--hostname', hostname)), { removed: true });
      assert.equal(await findDomain(deps.db, ws.id, hostname), undefined);
      refused(await cli(config, 'domains', 'remove', '--workspace', ws.id, '--hostname', hostname), 'NOT_FOUND');
      refused(await cli(config, 'domains', 'add', '--workspace', ws.id, '--hostname', '127.0.0.1'), 'INVALID_REQUEST');
      usageError(await cli(config, 'domains', 'verify', '--workspace', ws.id, '--hostname', hostname, '--method', 'pigeon'), /--method must be one of: dns, http, operator/);
      usageError(await cli(config, 'domains', 'add', '--workspace', ws.id), /--hostname is required/);
    });

    test('cli provider-keys set: prints {providerKey} without the key; the stored key is sealed and opens with SECRET_KEY', async () => {
      const owner = await newUser();
      const ws = await newWorkspace(owner.id);
      const apiKey = 'sk-cli-plaintext-987654321';
      const r = await cli(config, 'provider-keys', 'set', '--workspace', ws.id, '--provider', 'openai', '--api-key', apiKey);
      const { providerKey } = json(r);
      assert.equal(providerKey.provider, 'openai');
      assert.equal(r.stdout.includes(apiKey), false);
      const row = await deps.db.selectFrom('provider_keys').selectAll().where('id', '=', providerKey.id).executeTakeFirstOrThrow();
      assert.equal(row.sealed_key.includes(apiKey), false);
      assert.equal(await readProviderKey(deps, ws.id, 'openai'), apiKey);
      usageError(await cli(config, 'provider-keys', 'set', '--workspace', ws.id, '--provider', 'Open AI', '--api-key', 'k'), /--provider must match pattern/);
      usageError(await cli(config, 'provider-keys', 'set', '--workspace', ws.id, '--provider', 'openai'), /--api-key is required/);
    });

    test('cli keys create: all scopes and operations and rest by default; the printed secret works; options validated', async () => {
      const owner = await newUser();
      const ws = await newWorkspace(owner.id);
      const created = json(await cli(config, 'keys', 'create', '--user', owner.id, '--workspace', ws.id));
      assert.deepEqual(created.key.scopes, [...SCOPES]);
      assert.deepEqual(created.key.operations, [...OPERATION_IDS]);
      assert.deepEqual(created.key.transports, ['rest']);
      assert.equal((await usage(created.secret, ws.id)).statusCode, 200);

      const second = await newWorkspace(owner.id);
      const expires = new Date(Date.now() + 3_600_000).toISOString();
      const narrow = json(
        await cli(config, 'keys', 'create', '--user', owner.id, '--workspace', ws.id, '--workspace', second.id, '--scopes', 'usage:read, billing:read', '--operations', 'link.preview',
          '--transports', 'rest,mcp', '--expires', expires, '--ip-range', '10.0.0.0/8', '--ip-range', '2001:db8::/32', '--budget', 'daily=100', '--budget', 'weekly=none'),
      );
      assert.deepEqual(narrow.key.workspaceIds, [ws.id, second.id].sort());
      assert.deepEqual(narrow.key.scopes, ['usage:read', 'billing:read']);
      assert.deepEqual(narrow.key.operations, ['link.preview']);
      assert.deepEqual(narrow.key.transports, ['rest', 'mcp']);
      assert.equal(narrow.key.expiresAt, expires);
      assert.deepEqual(narrow.key.ipRanges, ['10.0.0.0/8', '2001:db8::/32']);
      assert.deepEqual(narrow.key.budgets, { dailyMillicents: 100, weeklyMillicents: null, monthlyMillicents: null });

      usageError(await cli(config, 'keys', 'create', '--user', owner.id, '--workspace', ws.id, '--scopes', 'root'), /--scopes \(#1\) must be one of: workspaces:read/);
      usageError(await cli(config, 'keys', 'create', '--user', owner.id, '--workspace', ws.id, '--operations', 'mine.coins'), /--operations \(#1\) must be one of/);
      usageError(await cli(config, 'keys', 'create', '--user', owner.id, '--workspace', ws.id, '--transports', 'smtp'), /--transports \(#1\) must be one of: rest, mcp/);
      usageError(await cli(config, 'keys', 'create', '--user', owner.id), /--workspace is required/);
      usageError(await cli(config, 'keys', 'create', '--user', owner.id, '--workspace', ws.id, '--workspace', ws.id), /--workspace must NOT have duplicate items/);
      refused(await cli(config, 'keys', 'create', '--user', owner.id, '--workspace', ws.id, '--ip-range', '10.0.0.0/99'), 'INVALID_REQUEST');
      const stranger = await newUser();
      refused(await cli(config, 'keys', 'create', '--user', stranger.id, '--workspace', ws.id), 'FORBIDDEN');
    });

    test('cli keys revoke: prints the revoked key; the secret then fails with 401; unknown key exit 1, malformed id exit 2', async () => {
      const owner = await newUser();
      const ws = await newWorkspace(owner.id);
      const created = json(await cli(config, 'keys', 'create', '--user', owner.id, '--workspace', ws.id));
      assert.equal((await usage(created.secret, ws.id)).statusCode, 200);
      const { key } = json(await cli(config, 'keys', 'revoke', '--key', created.key.id));
      assert.equal(key.id, created.key.id);
      assert.ok(key.revokedAt);
      assert.equal((await usage(created.secret, ws.id)).statusCode, 401);
      refused(await cli(config, 'keys', 'revoke', '--key', '01890000-0000-7000-8000-000000000000'), 'NOT_FOUND');
      usageError(await cli(config, 'keys', 'revoke', '--key', 'abc'), /--key must match format "uuid"/);
      usageError(await cli(config, 'keys', 'revoke'), /--key is required/);
    });

    test('cli reads: list and get of users, orgs, workspaces, keys, jobs, transactions, webhooks and provider keys print the admin JSON, page with --limit/--cursor and print no secret', async () => {
      const owner = await newUser();
      const ws = await newWorkspace(owner.id);
      json(await cli(config, 'credits', 'grant', '--workspace', ws.id, '--amount', '500000'));
      const created = json(await cli(config, 'keys', 'create', '--user', owner.id, '--workspace', ws.id));
      const second = json(await cli(config, 'keys', 'create', '--user', owner.id, '--workspace', ws.id));
      const org = json(await cli(config, 'orgs', 'create', '--name', 'Readers', '--owner', owner.id)).organization;
      json(await cli(config, 'provider-keys', 'set', '--workspace', ws.id, '--provider', 'openai', '--api-key', 'sk-cli-read-secret-0123456789'));
      await refreshAuth();
      const queued = await app.inject({ method: 'POST', url: '/v1/runs', headers: { authorization: `Bearer ${created.secret}`, 'x-service-workspace': ws.id, 'idempotency-key': 'cli-read-1' }, payload: { operationId: 'image.generate', input: { prompt: 'cli' } } });
      assert.equal(queued.statusCode, 202, queued.body);
      const jobId = queued.json().data.jobId;
      const secrets = [created.secret, second.secret, 'sk-cli-read-secret-0123456789', sha256Hex(created.secret)];
      const outputs: string[] = [];
      const read = async (...argv: string[]) => {
        const r = await cli(config, ...argv);
        outputs.push(r.stdout);
        return json(r);
      };
      assert.equal((await read('users', 'get', '--user', owner.id)).user.email, owner.email);
      assert.deepEqual((await read('orgs', 'get', '--org', org.id)).members.map((m: any) => [m.userId, m.role]), [[owner.id, 'owner']]);
      const detail = await read('workspaces', 'get', '--workspace', ws.id);
      assert.equal(detail.balance.totalMillicents, 500_000);
      assert.ok(detail.balance.reservedMillicents > 0);
      const page1 = await read('keys', 'list', '--workspace', ws.id, '--limit', '1');
      assert.deepEqual(page1.items.map((k: any) => k.id), [second.key.id]);
      const page2 = await read('keys', 'list', '--workspace', ws.id, '--limit', '1', '--cursor', page1.nextCursor);
      assert.deepEqual(page2.items.map((k: any) => k.id), [created.key.id]);
      assert.equal(page2.nextCursor, null);
      assert.deepEqual((await read('keys', 'list', '--user', owner.id)).items.map((k: any) => k.id), [second.key.id, created.key.id]);
      assert.equal((await read('keys', 'get', '--key', created.key.id)).key.prefix, created.key.prefix);
      const jobs = await read('jobs', 'list', '--workspace', ws.id);
      assert.deepEqual(jobs.items.map((j: any) => [j.id, j.status, j.keyId, j.funding]), [[jobId, 'pending', created.key.id, 'credits']]);
      assert.equal((await read('jobs', 'get', '--job', jobId)).job.input.prompt, 'cli');
      assert.deepEqual((await read('transactions', 'list', '--workspace', ws.id)).items.map((e: any) => [e.type, e.amountMillicents]), [['purchase', 500_000]]);
      assert.deepEqual((await read('webhooks', 'list', '--workspace', ws.id)).items, []);
      assert.deepEqual((await read('provider-keys', 'list', '--workspace', ws.id)).items.map((k: any) => k.provider), ['openai']);
      assert.ok((await read('users', 'list', '--limit', '100')).items.some((u: any) => u.id === owner.id));
      assert.ok((await read('workspaces', 'list')).items.length >= 1);
      assert.ok((await read('orgs', 'list')).items.some((o: any) => o.id === org.id));
      for (const out of outputs) for (const secret of secrets) assert.ok(!out.includes(secret), 'no read prints a secret or hash');
      // A cursor of another list, a bad limit and a missing scope exit 1 or 2.
      refused(await cli(config, 'jobs', 'list', '--workspace', ws.id, '--cursor', page1.nextCursor), 'INVALID_CURSOR');
      usageError(await cli(config, 'users', 'list', '--limit', '0'), /--limit must be >= 1/);
      usageError(await cli(config, 'keys', 'list'), /exactly one of --workspace or --user/);
      refused(await cli(config, 'workspaces', 'get', '--workspace', '01890000-0000-7000-8000-000000000000'), 'NOT_FOUND');
    });

    test('cli cost reads: costs get, costs top-spenders and usage history print what the admin API’s services answer; bad values exit 2 naming the option', async () => {
      const owner = await newUser();
      const ws = await newWorkspace(owner.id);
      json(await cli(config, 'credits', 'grant', '--workspace', ws.id, '--amount', '500000'));
      const created = json(await cli(config, 'keys', 'create', '--user', owner.id, '--workspace', ws.id));
      await refreshAuth();
      const chat = await app.inject({ method: 'POST', url: '/v1/runs', headers: { authorization: `Bearer ${created.secret}`, 'x-service-workspace': ws.id, 'idempotency-key': 'cli-costs-1' }, payload: { operationId: 'chat.generate', input: { messages: [{ role: 'user', content: 'hi' }] } } });
      assert.equal(chat.statusCode, 200, chat.body);
      await deps.usage.flush();
      // A range of whole months around now, so both reads cover the same buckets whenever they run.
      const range = { bucket: 'month', from: '2026-01-01', to: '2028-01-01' } as const;
      const costs = json(await cli(config, 'costs', 'get', '--workspace', ws.id, '--bucket', range.bucket, '--from', range.from, '--to', range.to, '--group', 'operationId', '--group', 'keyId'));
      assert.deepEqual(costs, JSON.parse(JSON.stringify(await getWorkspaceCosts(deps, ws.id, { ...range, groupBy: ['operationId', 'keyId'] }))));
      const spent = costs.buckets.flatMap((b: any) => b.lines).filter((l: any) => l.type === 'usage');
      assert.deepEqual(spent.map((l: any) => [l.operationId, l.keyId]), [['chat.generate', created.key.id]]);
      assert.ok(spent[0].costMillicents > 0);
      const top = json(await cli(config, 'costs', 'top-spenders', '--bucket', range.bucket, '--from', range.from, '--to', range.to, '--limit', '100'));
      assert.ok(top.items.some((i: any) => i.workspaceId === ws.id && i.usageMillicents === spent[0].costMillicents));
      const history = json(await cli(config, 'usage', 'history', '--workspace', ws.id, '--bucket', 'day', '--group', 'operation'));
      assert.ok(Array.isArray(history.buckets));
      usageError(await cli(config, 'costs', 'get', '--workspace', ws.id, '--bucket', 'week'), /--bucket must be one of: hour, day, month/);
      usageError(await cli(config, 'costs', 'get', '--workspace', ws.id, '--group', 'colour'), /--group/);
      usageError(await cli(config, 'costs', 'top-spenders', '--limit', '0'), /--limit must be >= 1/);
      refused(await cli(config, 'costs', 'get', '--workspace', '01890000-0000-7000-8000-000000000000'), 'NOT_FOUND');
      refused(await cli(config, 'usage', 'history', '--workspace', '01890000-0000-7000-8000-000000000000'), 'NOT_FOUND');
    });

    test('cli changes: keys update and roll (old secret refused after the overlap), credits adjust (refund and debit, never below spendable)', async () => {
      const owner = await newUser();
      const ws = await newWorkspace(owner.id);
      json(await cli(config, 'credits', 'grant', '--workspace', ws.id, '--amount', '10000'));
      const created = json(await cli(config, 'keys', 'create', '--user', owner.id, '--workspace', ws.id));
      const updated = json(await cli(config, 'keys', 'update', '--key', created.key.id, '--scopes', 'jobs:read,usage:read', '--budget', 'daily=5000', '--ip-range', 'none', '--expires', 'none'));
      assert.deepEqual(updated.key.scopes, ['jobs:read', 'usage:read']);
      assert.equal(updated.key.budgets.dailyMillicents, 5000);
      usageError(await cli(config, 'keys', 'update', '--key', created.key.id), /at least one change/);
      const kept = json(await cli(config, 'keys', 'roll', '--key', created.key.id, '--overlap', '3600'));
      assert.equal((await usage(created.secret, ws.id)).statusCode, 200, 'old secret within the overlap');
      assert.equal((await usage(kept.secret, ws.id)).statusCode, 200);
      const rolled = json(await cli(config, 'keys', 'roll', '--key', created.key.id, '--overlap', '0'));
      assert.equal((await usage(kept.secret, ws.id)).statusCode, 401, 'overlap 0: refused at once');
      assert.equal((await usage(created.secret, ws.id)).statusCode, 401);
      assert.equal((await usage(rolled.secret, ws.id)).statusCode, 200);
      usageError(await cli(config, 'keys', 'roll', '--key', created.key.id, '--overlap=-1'), /--overlap must be >= 0/);
      const refund = json(await cli(config, 'credits', 'adjust', '--workspace', ws.id, '--amount', '2500', '--reason', 'outage refund', '--provenance', 'refund'));
      assert.equal(refund.balance.spendableMillicents, 12_500);
      const debit = json(await cli(config, 'credits', 'adjust', '--workspace', ws.id, '--amount=-12000', '--reason', 'chargeback'));
      assert.equal(debit.balance.spendableMillicents, 500);
      assert.ok(debit.adjustment.transactions.every((e: any) => e.type === 'adjustment' && e.reason === 'chargeback'));
      refused(await cli(config, 'credits', 'adjust', '--workspace', ws.id, '--amount=-501', '--reason', 'too much'), 'INSUFFICIENT_CREDITS');
      usageError(await cli(config, 'credits', 'adjust', '--workspace', ws.id, '--amount', '0', '--reason', 'zero'), /--amount/);
      await assertLedgerInvariants(deps, ws.id);
    });

    test('cli command line: unknown commands, unknown options, options of another command and stray arguments exit 2', async () => {
      usageError(await cli(config, 'users', 'delete', '--email', 'a@b.co'), /^Unknown command "users delete"\.$/);
      usageError(await cli(config, 'frobnicate'), /^Unknown command "frobnicate"\.$/);
      usageError(await cli(config, 'constructor'), /^Unknown command "constructor"\.$/);
      usageError(await cli(config, 'toString', 'x'), /^Unknown command "toString x"\.$/);
      usageError(await cli(config, 'users', 'create', '--emial', 'a@b.co'), /Unknown option '--emial'/);
      usageError(await cli(config, 'users', 'create', '--email', 'a@b.co', '--name', 'X', '--plan', 'pro'), /^users create: --plan is not an option of "users create"\.$/);
      usageError(await cli(config, 'users', 'create', 'extra', '--email', 'a@b.co', '--name', 'X'), /Unexpected argument "extra" after "users create"/);
      usageError(await cli(config, 'quickstart', 'now'), /Unexpected argument "now" after "quickstart"/);
      usageError(await cli(config, 'users', 'create', '--json'), /--json is not an option of "users create"/);
      usageError(await cli(config, 'users', 'create', '--email'), /argument missing/);
      usageError(await cli(config, 'serve'), /"serve" runs the service/);
      usageError(await cli(config, 'worker'), /"worker" runs the service/);
    });
  });
}

test('cli: a wrong command line is refused before the database is opened (no SQLite file is created)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'was-cli-nodb-'));
  try {
    const config = loadConfig({ DATABASE_URL: `sqlite:${join(dir, 'db', 'service.db')}`, DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent' });
    for (const argv of [['users', 'create', '--email', 'bad', '--name', 'X'], ['nope'], ['keys', 'create', '--bogus']]) {
      assert.equal((await cli(config, ...argv)).code, 2);
    }
    assert.equal(existsSync(join(dir, 'db')), false, 'no database directory');
    assert.equal(existsSync(join(dir, 'data', 'secret.key')), false, 'no secret generated');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---- the built binary ---------------------------------------------------------------------------

const MAIN = resolve('dist/main.js');
const BUILT = existsSync(MAIN);
const skipUnbuilt = BUILT ? false : needsDist();

/** The environment a fresh operator shell would have: no configuration leaks from this process. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...extra };
}

function runBuilt(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((done) => {
    execFile(process.execPath, [MAIN, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

describe('built cli (dist/main.js)', () => {
  test('built cli: `node dist/main.js quickstart` on a fresh SQLite file prints a key that the service accepts', { skip: skipUnbuilt }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'was-built-'));
    try {
      const env = cleanEnv({ DATA_DIR: join(dir, 'data'), DATABASE_URL: `sqlite:${join(dir, 'data', 'service.db')}` });
      const r = await runBuilt(['quickstart'], env);
      assert.equal(r.code, 0, `stderr: ${r.stderr}`);
      const m = QUICKSTART_RE.exec(r.stdout);
      assert.ok(m, `quickstart output:\n${r.stdout}`);
      assert.equal(m[2], 'http://127.0.0.1:8080');
      const secretFile = join(dir, 'data', 'secret.key');
      assert.ok(existsSync(secretFile), 'SECRET_KEY generated into DATA_DIR');
      assert.equal(statSync(secretFile).mode & 0o777, 0o600);

      const config = loadConfig({ ...env, LOG_LEVEL: 'silent' });
      const deps = await createDeps({ config, secretKey: resolveSecretKey(config), log: pino({ level: 'silent' }), epochPollMs: 0 });
      const app = await buildApp(deps);
      try {
        const res = await app.inject({ method: 'GET', url: '/v1/usage', headers: { authorization: `Bearer ${m[1]}`, 'x-service-workspace': m[4]! } });
        assert.equal(res.statusCode, 200, res.body);
      } finally {
        await app.close();
        await deps.close();
      }

      const bad = await runBuilt(['users', 'create', '--email', 'nope', '--name', 'X'], env);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--email must match format "email"/);
      const help = await runBuilt(['help'], env);
      assert.equal(help.code, 0);
      assert.equal(help.stdout, CLI_USAGE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('built cli: help, a command\'s help and an unknown command load only the command line\'s own modules (no service, schema or package)', { skip: skipUnbuilt }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'was-cli-modules-'));
    try {
      const loaded = async (args: string[], exitCode: number) => {
        const log = join(dir, `${args.join('_')}.log`);
        const r = await new Promise<CliResult>((done) => {
          execFile(process.execPath, ['--import', resolve('test/support/module-log.mjs'), MAIN, ...args], { env: cleanEnv({ MODULE_LOG: log, DATA_DIR: join(dir, 'data') }), timeout: 60_000 }, (err, stdout, stderr) =>
            done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
          );
        });
        assert.equal(r.code, exitCode, r.stderr);
        return readFileSync(log, 'utf8').split('\n').filter((url) => url.startsWith('file:')).map((url) => relative(resolve('dist'), fileURLToPath(url)));
      };
      const light = ['main.js', join('admin', 'cli.js'), join('admin', 'cli-options.js'), join('admin', 'cli-usage.js')];
      for (const [args, code] of [[['--help'], 0], [['keys', 'create', '--help'], 0], [['bogus'], 2], [['users', 'list', '--nope'], 2]] as const) {
        const modules = await loaded([...args], code);
        assert.deepEqual(modules.filter((m) => !light.includes(m)), [], `${args.join(' ')} loaded more than the command line`);
      }
      assert.equal(existsSync(join(dir, 'data')), false, 'help touches no data directory');
      // A command that runs loads its code (and the database), but never the server.
      const list = await loaded(['users', 'list'], 0);
      assert.ok(list.includes(join('admin', 'cli-commands.js')) && list.includes('deps.js'));
      assert.ok(!list.includes('server.js') && !list.includes('app.js'), 'a command never loads the HTTP server');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const role of ['serve', 'worker'] as const) {
    test(`built cli: \`node dist/main.js ${role}\` starts (healthz answers for serve) and exits 0 on SIGTERM`, { skip: skipUnbuilt }, async () => {
      const dir = mkdtempSync(join(tmpdir(), `was-${role}-`));
      const port = await freePort();
      const child = spawn(process.execPath, [MAIN, role], {
        env: cleanEnv({ DATA_DIR: join(dir, 'data'), DATABASE_URL: `sqlite:${join(dir, 'data', 'service.db')}`, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
      try {
        await waitUntil(
          () => {
            assert.equal(child.exitCode, null, `${role} exited early:\n${output}`);
            return output;
          },
          (o) => o.includes('service started'),
          `${role} to start`,
          30_000,
          50,
        );
        if (role === 'serve') {
          const res = await fetch(`http://127.0.0.1:${port}/healthz`);
          assert.equal(res.status, 200);
        } else {
          await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`), 'a worker does not listen');
        }
        child.kill('SIGTERM');
        assert.equal(await exited, 0, output);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
