/**
 * Authentication and authorization rules (spec "Authentication", decisions.md sections 1, 3, 4):
 * key format and storage, expiry and revocation, IP ranges and trusted proxies, workspace
 * re-authorization, suspension, the active-key limit, no writes on refused requests, and cache
 * coherence across processes sharing one database.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import pino from 'pino';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { openDatabase } from '../../src/db/connect.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import * as accounts from '../../src/modules/accounts/service.js';
import { revokeKey } from '../../src/modules/auth/keys.js';
import { authenticateKey, managingRole, refreshAuthEpoch, resolveKey } from '../../src/modules/auth/service.js';
import { ABUSE_THRESHOLD, ABUSE_WINDOW_MS, SUSPENSION_MS } from '../../src/modules/auth/suspension.js';
import { admin, call, describeEachDatabase, TEST_SECRET_KEY, type TestContext } from '../support/harness.js';
import { seedKey, seedTenant, uniqueEmail, keyBody } from '../support/seed.js';
import { assertError, assertOk } from '../support/assertions.js';
import { waitUntil } from '../support/wait.js';
import { checkRefusals } from '../support/openapi-responses.js';

type Res = LightMyRequestResponse;


const usage = (ctx: TestContext, secret: string, workspaceId: string, extra: { remoteAddress?: string; headers?: Record<string, string> } = {}) =>
  call(ctx, 'GET', '/v1/usage', { secret, workspaceId, ...extra });

/** Every row of every table, rows sorted, so two dumps compare equal exactly when nothing was written. */
async function dumpTables(deps: Deps): Promise<Record<string, string[]>> {
  const tables = (await deps.db.introspection.getTables()).filter((t) => !t.isView).map((t) => t.name).sort();
  const out: Record<string, string[]> = {};
  for (const name of tables) {
    const rows = await deps.db.selectFrom(name as 'users').selectAll().execute();
    out[name] = rows.map((r) => JSON.stringify(r)).sort();
  }
  return out;
}

async function keyRow(deps: Deps, keyId: string) {
  return deps.db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirstOrThrow();
}

async function newUser(deps: Deps) {
  return accounts.createUser(deps, { email: uniqueEmail(), name: 'User' });
}


function randomUuid(): string {
  return '00000000-0000-4000-8000-' + randomBytes(6).toString('hex');
}

/** A second process on the same database: its own Deps (cache, abuse tracker) and app. */
async function secondProcess(ctx: TestContext, epochPollMs = 0) {
  const handle = await openDatabase(ctx.database.url!);
  const deps = await createDeps({
    config: ctx.config,
    secretKey: TEST_SECRET_KEY,
    database: handle,
    clock: ctx.clock,
    log: pino({ level: 'silent' }),
    epochPollMs,
    migrate: false,
    net: ctx.deps.net,
  });
  const app = await buildApp(deps);
  await app.ready();
  const view: TestContext = { ...ctx, deps, app };
  return {
    view,
    deps,
    async close() {
      await app.close();
      await deps.close();
    },
  };
}

describeEachDatabase('auth', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  describe('key format and storage', () => {
    test('HEAD twins of GET routes are authenticated, authorized and charged exactly like the GET (auth attached per route)', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const head = (headers: Record<string, string>) => ctx.app.inject({ method: 'HEAD', url: '/v1/usage', headers });
      assert.equal((await head({})).statusCode, 401);
      assert.equal((await head({ authorization: `Bearer wask_${'A'.repeat(43)}`, 'x-service-workspace': t.workspace.id })).statusCode, 401);
      const ok = await head({ authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id });
      assert.equal(ok.statusCode, 200);
      assert.ok(ok.headers['ratelimit-remaining'], 'RateLimit headers on HEAD too');
    });

    test('key format: the admin API returns a wask_ secret of 32 random bytes, once; only its SHA-256 is stored', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const res = await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id]));
      const { data } = assertOk(res);
      const secret: string = data.secret;
      assert.match(secret, /^wask_[A-Za-z0-9_-]{43}$/);
      assert.equal(Buffer.from(secret.slice('wask_'.length), 'base64url').length, 32, '32 random bytes');
      assert.equal(JSON.stringify(data.key).includes(secret), false, 'the key object does not carry the secret');
      assert.equal(data.key.prefix, secret.slice(0, 12));

      const row = await keyRow(ctx.deps, data.key.id);
      assert.equal(row.secret_hash, sha256Hex(secret));
      assert.notEqual(row.secret_hash, secret);
      for (const [column, value] of Object.entries(row)) {
        assert.equal(String(value).includes(secret), false, `column ${column} does not contain the secret`);
      }
      const everything = JSON.stringify(await dumpTables(ctx.deps));
      assert.equal(everything.includes(secret), false, 'no table contains the secret');
      assert.equal(everything.includes(secret.slice(12)), false, 'no table contains the secret beyond its public prefix');

      // Shown once: revoking (the only other key endpoint) never returns it, and a second key differs.
      const other = assertOk(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id]))).data;
      assert.notEqual(other.secret, secret);
      assertOk(await usage(ctx, secret, t.workspace.id));
      const revoked = await admin(ctx, `/admin/v1/keys/${data.key.id}/revoke`);
      assert.equal(revoked.body.includes(secret), false);
    });

    test('key lookup: only the exact secret authenticates (changed character, case, another key\'s prefix → 401)', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const last = t.secret.at(-1) === 'A' ? 'B' : 'A';
      const variants = [
        `${t.secret.slice(0, -1)}${last}`,
        t.secret.toUpperCase() === t.secret ? t.secret.toLowerCase() : t.secret.toUpperCase(),
        `${t.key.prefix}${randomBytes(32).toString('base64url').slice(0, 43 - (t.key.prefix.length - 5))}`,
        t.secret.slice(0, -1),
        `${t.secret}A`,
      ];
      for (const secret of variants) {
        assert.notEqual(secret, t.secret);
        assertError(await usage(ctx, secret, t.workspace.id), 401, 'UNAUTHENTICATED');
      }
      assertOk(await usage(ctx, t.secret, t.workspace.id));
      // The bearer scheme is case-insensitive (RFC 9110); surrounding whitespace is not part of the token.
      assertOk(await call(ctx, 'GET', '/v1/usage', { headers: { authorization: `bearer ${t.secret}` }, workspaceId: t.workspace.id }));
      assertError(await call(ctx, 'GET', '/v1/usage', { headers: { authorization: `Bearer  ${t.secret}` }, workspaceId: t.workspace.id }), 401, 'UNAUTHENTICATED');
      assertError(await call(ctx, 'GET', '/v1/usage', { headers: { authorization: t.secret }, workspaceId: t.workspace.id }), 401, 'UNAUTHENTICATED');
    });

    test('key in the query string: key parameter names in any case, or a secret in any value, are 401 even with a valid header', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const queries: Record<string, string>[] = [
        { API_KEY: t.secret },
        { Token: 'x' },
        { ACCESS_TOKEN: '' },
        { q: t.secret },
        { note: `see ${t.secret}` },
        { limit: '5', key: 'anything' },
      ];
      for (const query of queries) {
        const body = assertError(await call(ctx, 'GET', '/v1/balance', { secret: t.secret, workspaceId: t.workspace.id, query }), 401, 'UNAUTHENTICATED');
        assert.match(body.message, /query string/);
      }
      assertOk(await call(ctx, 'GET', '/v1/balance', { secret: t.secret, workspaceId: t.workspace.id, query: { limit: '5' } }));
    });
  });

  describe('expiry and revocation', () => {
    test('expiry: a key works until expiresAt and is 401 once the clock reaches it', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const expiresAt = ctx.clock.now() + 3_600_000;
      const { data } = assertOk(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id], { expiresAt: new Date(expiresAt).toISOString() })));
      assert.equal(data.key.expiresAt, new Date(expiresAt).toISOString());
      assertOk(await usage(ctx, data.secret, t.workspace.id));
      ctx.clock.set(expiresAt - 1);
      assertOk(await usage(ctx, data.secret, t.workspace.id));
      ctx.clock.set(expiresAt);
      const body = assertError(await usage(ctx, data.secret, t.workspace.id), 401, 'UNAUTHENTICATED');
      assert.match(body.message, /expired/);
      ctx.clock.advance(86_400_000);
      assertError(await usage(ctx, data.secret, t.workspace.id), 401, 'UNAUTHENTICATED');
    });

    test('expiry: creating a key that expires in the past or now is refused (400)', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      for (const at of [ctx.clock.now() - 1000, ctx.clock.now()]) {
        assertError(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id], { expiresAt: new Date(at).toISOString() })), 400, 'INVALID_REQUEST');
      }
    });

    test('revocation: POST /admin/v1/keys/{id}/revoke refuses the very next request (the warm auth cache is invalidated)', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      assertOk(await usage(ctx, t.secret, t.workspace.id));
      assertOk(await usage(ctx, t.secret, t.workspace.id)); // served from the cache
      const { data } = assertOk(await admin(ctx, `/admin/v1/keys/${t.key.id}/revoke`));
      assert.equal(data.key.revokedAt, new Date(ctx.clock.now()).toISOString());
      assertError(await usage(ctx, t.secret, t.workspace.id), 401, 'UNAUTHENTICATED');
      // Revoking again keeps the first revocation time.
      ctx.clock.advance(1000);
      assert.equal(assertOk(await admin(ctx, `/admin/v1/keys/${t.key.id}/revoke`)).data.key.revokedAt, data.key.revokedAt);
      assertError(await admin(ctx, `/admin/v1/keys/${randomUuid()}/revoke`), 404, 'NOT_FOUND');
    });

    test('auth cache: a key read that started before a revocation committed is never cached after it', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      // Deterministic: a clear (what every committed auth change does) while the read is in flight.
      const pending = resolveKey(ctx.deps, t.secret);
      ctx.deps.authCache.clear();
      assert.ok(await pending, 'the read itself found the key');
      assert.equal(ctx.deps.authCache.keys.has(sha256Hex(t.secret)), false, 'a value read before the clear is not cached');

      // The same for roles.
      const owner = await newUser(ctx.deps);
      const org = await accounts.createOrganization(ctx.deps, { name: 'Org', ownerUserId: owner.id });
      const ws = await accounts.createWorkspace(ctx.deps, { name: 'Org ws', plan: 'pro', organizationId: org.id });
      const pendingRole = managingRole(ctx.deps, owner.id, ws);
      ctx.deps.authCache.clear();
      assert.equal(await pendingRole, 'owner');
      assert.equal(ctx.deps.authCache.roles.size, 0);

      // End to end: a request racing a revocation; whatever the interleaving, the key is refused afterwards.
      const racing = authenticateKey(ctx.deps, { authorization: `Bearer ${t.secret}`, query: [] }).catch(() => undefined);
      await revokeKey(ctx.deps, t.key.id);
      await racing;
      assertError(await usage(ctx, t.secret, t.workspace.id), 401, 'UNAUTHENTICATED');
    });
  });

  describe('IP ranges (no trusted proxies)', () => {
    async function rangedTenant(ctx: TestContext) {
      return seedTenant(ctx.deps, { key: { ipRanges: ['10.1.0.0/16', '2001:db8::/32'] } });
    }

    test('IP ranges: an IPv4 peer inside a range is allowed, outside is 403 FORBIDDEN_IP', async () => {
      const ctx = get();
      const t = await rangedTenant(ctx);
      assertOk(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '10.1.2.3' }));
      assertOk(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '10.1.255.255' }));
      for (const ip of ['10.2.0.1', '10.0.255.255', '127.0.0.1', '192.168.1.1']) {
        assertError(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: ip }), 403, 'FORBIDDEN_IP');
      }
    });

    test('IP ranges: an IPv6 peer inside 2001:db8::/32 is allowed, outside is 403 FORBIDDEN_IP', async () => {
      const ctx = get();
      const t = await rangedTenant(ctx);
      assertOk(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '2001:db8::1' }));
      assertOk(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '2001:db8:ffff:1::42' }));
      for (const ip of ['2001:db9::1', '::1', 'fe80::1', '2001:dead::1']) {
        assertError(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: ip }), 403, 'FORBIDDEN_IP');
      }
    });

    test('IP ranges: an IPv4-mapped IPv6 peer (::ffff:10.1.2.3) matches the IPv4 range', async () => {
      const ctx = get();
      const t = await rangedTenant(ctx);
      assertOk(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '::ffff:10.1.2.3' }));
      assertError(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '::ffff:10.2.0.1' }), 403, 'FORBIDDEN_IP');
    });

    test('IP ranges: X-Forwarded-For is ignored when TRUSTED_PROXIES is empty', async () => {
      const ctx = get();
      const t = await rangedTenant(ctx);
      const xff = { 'x-forwarded-for': '10.1.2.3' };
      assertError(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '127.0.0.1', headers: xff }), 403, 'FORBIDDEN_IP');
      assertError(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '10.9.9.9', headers: xff }), 403, 'FORBIDDEN_IP');
      // And it cannot move an allowed peer out either.
      assertOk(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '10.1.2.3', headers: { 'x-forwarded-for': '8.8.8.8' } }));
    });

    test('IP ranges: a key without ranges accepts any address', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      for (const ip of ['8.8.8.8', '2001:db9::1', '127.0.0.1']) assertOk(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: ip }));
    });

    test('IP ranges: key creation refuses malformed and non-canonical ranges (400)', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      for (const range of ['010.1.0.0/16', '10.1/16', '167838211', '10.1.0.0/33', '10.1.0.0/016', '2001:db8::/129', 'example.com', '10.1.0.0/']) {
        const res = await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id], { ipRanges: [range] }));
        assertError(res, 400, 'INVALID_REQUEST');
      }
      assertOk(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id], { ipRanges: ['10.1.2.3', '::ffff:10.0.0.0/104', '0.0.0.0/0'] })));
    });

    test('IP ranges: requests from outside the ranges never suspend the key (a leaked secret used off-network cannot lock out its owner)', async () => {
      const ctx = get();
      const t = await rangedTenant(ctx);
      const other = await seedTenant(ctx.deps);
      for (let i = 0; i < ABUSE_THRESHOLD * 2; i++) {
        assertError(await usage(ctx, t.secret, other.workspace.id, { remoteAddress: '203.0.113.7' }), 403, 'FORBIDDEN_IP');
      }
      assertOk(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '10.1.2.3' }));
      assert.equal((await keyRow(ctx.deps, t.key.id)).suspended_until_ms, null);
    });

    test('IP ranges are checked before suspension: off-network callers get FORBIDDEN_IP and never learn whether or until when the key is suspended', async () => {
      const ctx = get();
      const t = await rangedTenant(ctx);
      const other = await seedTenant(ctx.deps);
      for (let i = 1; i < ABUSE_THRESHOLD; i++) assertError(await usage(ctx, t.secret, other.workspace.id, { remoteAddress: '10.1.0.9' }), 403, 'FORBIDDEN_WORKSPACE');
      assertError(await usage(ctx, t.secret, other.workspace.id, { remoteAddress: '10.1.0.9' }), 403, 'KEY_SUSPENDED');
      const outside = await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '203.0.113.7' });
      const body = assertError(outside, 403, 'FORBIDDEN_IP');
      assert.equal(outside.headers['retry-after'], undefined);
      assert.equal(body.details, undefined);
      assertError(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '10.1.0.9' }), 403, 'KEY_SUSPENDED');
    });
  });

  describe('suspension of abusive keys', () => {
    test(`suspension: ${ABUSE_THRESHOLD} authorization failures within a minute → 403 KEY_SUSPENDED with Retry-After and details.suspendedUntil, also for valid requests, until the clock passes it`, async () => {
      const ctx = get();
      const a = await seedTenant(ctx.deps);
      const b = await seedTenant(ctx.deps);
      for (let i = 1; i < ABUSE_THRESHOLD; i++) {
        assertError(await usage(ctx, a.secret, b.workspace.id), 403, 'FORBIDDEN_WORKSPACE');
        ctx.clock.advance(1000);
      }
      const until = ctx.clock.now() + SUSPENSION_MS;
      const tripped = await usage(ctx, a.secret, b.workspace.id);
      const body = assertError(tripped, 403, 'KEY_SUSPENDED');
      assert.equal(tripped.headers['retry-after'], String(SUSPENSION_MS / 1000));
      assert.equal(body.details.suspendedUntil, new Date(until).toISOString());
      assert.equal((await keyRow(ctx.deps, a.key.id)).suspended_until_ms, until);

      assert.equal(tripped.headers['ratelimit-limit'], undefined, 'no window of a workspace the key may not use');

      // Otherwise-valid requests are refused too, with a shrinking Retry-After.
      const valid = await usage(ctx, a.secret, a.workspace.id);
      assertError(valid, 403, 'KEY_SUSPENDED');
      assert.equal(valid.headers['retry-after'], String(SUSPENSION_MS / 1000));
      assert.equal(valid.headers['ratelimit-limit'], '3600', 'the key may use this workspace: its window is reported (nothing charged)');
      assert.equal(valid.headers['ratelimit-remaining'], '3600');
      ctx.clock.advance(120_000);
      const later = await call(ctx, 'GET', '/v1/workspaces', { secret: a.secret, workspaceId: a.workspace.id });
      assert.equal(assertError(later, 403, 'KEY_SUSPENDED').details.suspendedUntil, new Date(until).toISOString());
      assert.equal(later.headers['retry-after'], String((SUSPENSION_MS - 120_000) / 1000));
      ctx.clock.set(until - 1);
      assert.equal((await usage(ctx, a.secret, a.workspace.id)).headers['retry-after'], '1');
      // The other tenant's key is untouched throughout.
      assertOk(await usage(ctx, b.secret, b.workspace.id));
      ctx.clock.set(until);
      assertOk(await usage(ctx, a.secret, a.workspace.id));
    });

    test(`suspension: asking for operations the key was not given counts too (${ABUSE_THRESHOLD} × 403 FORBIDDEN_OPERATION on runs, estimates and retries → KEY_SUSPENDED)`, async () => {
      const ctx = get();
      // Test keys: the failed job to retry is simulated work.
      const t = await seedTenant(ctx.deps, { mode: 'test', credits: 100_000 });
      const narrow = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test', operations: ['chat.generate'] });
      const music = { operationId: 'music.generate', input: { prompt: 'x', durationSeconds: 10 } };
      const failedRun = await call(ctx, 'POST', '/v1/runs', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'music.generate', input: { prompt: 'x [sim:fail=MODEL_REFUSED]', durationSeconds: 10 } }, headers: { 'idempotency-key': randomUUID() } });
      assert.equal(failedRun.statusCode, 202, failedRun.body);
      const failed = failedRun.json().data.jobId;
      const attempts = [
        () => call(ctx, 'POST', '/v1/runs', { secret: narrow.secret, workspaceId: t.workspace.id, body: music, headers: { 'idempotency-key': randomUUID() } }),
        () => call(ctx, 'POST', '/v1/estimates', { secret: narrow.secret, workspaceId: t.workspace.id, body: music }),
        () => call(ctx, 'POST', `/v1/jobs/${failed}/retry`, { secret: narrow.secret, workspaceId: t.workspace.id, headers: { 'idempotency-key': randomUUID() } }),
      ];
      for (let i = 1; i < ABUSE_THRESHOLD; i++) assertError(await attempts[i % attempts.length]!(), 403, 'FORBIDDEN_OPERATION');
      assertError(await attempts[0]!(), 403, 'KEY_SUSPENDED');
      assert.ok(Number((await keyRow(ctx.deps, narrow.key.id)).suspended_until_ms) > ctx.clock.now());
      assertError(await usage(ctx, narrow.secret, t.workspace.id), 403, 'KEY_SUSPENDED');
      assertOk(await usage(ctx, t.secret, t.workspace.id));
    });

    test('suspension: failures spread over more than a minute do not suspend', async () => {
      const ctx = get();
      const a = await seedTenant(ctx.deps);
      const b = await seedTenant(ctx.deps);
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < ABUSE_THRESHOLD - 1; i++) assertError(await usage(ctx, a.secret, b.workspace.id), 403, 'FORBIDDEN_WORKSPACE');
        ctx.clock.advance(ABUSE_WINDOW_MS);
      }
      assertOk(await usage(ctx, a.secret, a.workspace.id));
    });

    test('suspension: scope failures of a valid key count as authorization failures too', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const { secret } = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { scopes: ['workspaces:read'] });
      for (let i = 1; i < ABUSE_THRESHOLD; i++) assertError(await usage(ctx, secret, t.workspace.id), 403, 'FORBIDDEN_SCOPE');
      assertError(await usage(ctx, secret, t.workspace.id), 403, 'KEY_SUSPENDED');
      assertError(await call(ctx, 'GET', '/v1/workspaces', { secret, workspaceId: t.workspace.id }), 403, 'KEY_SUSPENDED');
      // Another key of the same workspace is not affected.
      assertOk(await usage(ctx, t.secret, t.workspace.id));
    });

    test('suspension: 200 unauthenticated attempts (wrong secrets, another key\'s prefix, garbage) never suspend anyone\'s key', async () => {
      const ctx = get();
      const a = await seedTenant(ctx.deps);
      const b = await seedTenant(ctx.deps);
      const forged = (i: number): Record<string, string> => {
        const rnd = randomBytes(48).toString('base64url');
        switch (i % 8) {
          case 0: return { authorization: `Bearer wask_${rnd.slice(0, 43)}` };
          case 1: return { authorization: `Bearer ${a.key.prefix}${rnd.slice(0, 43 - (a.key.prefix.length - 5))}` };
          case 2: return { authorization: `Bearer ${a.secret.slice(0, -2)}${rnd.slice(0, 2)}` };
          case 3: return { authorization: `Bearer ${rnd}` };
          case 4: return { authorization: `Basic ${a.secret}` };
          case 5: return { authorization: `Bearer ${a.secret.toUpperCase()}` };
          case 6: return {};
          default: return { authorization: `Bearer ${a.secret} ${a.secret}` };
        }
      };
      for (let i = 0; i < 200; i++) {
        const headers = forged(i);
        if (headers.authorization === `Bearer ${a.secret}`) continue;
        const res = await call(ctx, 'GET', '/v1/usage', { headers, workspaceId: i % 2 ? b.workspace.id : a.workspace.id });
        assertError(res, 401, 'UNAUTHENTICATED');
      }
      assertOk(await usage(ctx, a.secret, a.workspace.id));
      assertOk(await usage(ctx, b.secret, b.workspace.id));
      assert.equal((await keyRow(ctx.deps, a.key.id)).suspended_until_ms, null);
      assert.equal((await keyRow(ctx.deps, b.key.id)).suspended_until_ms, null);
    });

    test('suspension: ordinary 429 rate limiting never suspends the key', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      await accounts.updateWorkspaceSettings(ctx.deps, t.workspace.id, { limits: { pointsPerMinute: 10 } });
      ctx.clock.set(Math.ceil(ctx.clock.now() / 60_000) * 60_000); // start of a minute
      let limited = 0;
      for (let i = 0; i < ABUSE_THRESHOLD * 3; i++) {
        const res = await usage(ctx, t.secret, t.workspace.id);
        if (res.statusCode === 429) {
          assertError(res, 429, 'RATE_LIMITED');
          assert.ok(Number(res.headers['retry-after']) >= 1);
          limited += 1;
        } else assertOk(res);
      }
      assert.equal(limited, ABUSE_THRESHOLD * 3 - 10);
      assert.equal((await keyRow(ctx.deps, t.key.id)).suspended_until_ms, null);
      ctx.clock.advance(60_000);
      assertOk(await usage(ctx, t.secret, t.workspace.id));
    });
  });

  describe('active-key limit per plan', () => {
    async function freeTenantWithFiveKeys(ctx: TestContext) {
      const t = await seedTenant(ctx.deps, { plan: 'free' });
      const keys = [t.key.id];
      for (let i = 0; i < 4; i++) keys.push((await seedKey(ctx.deps, t.user.id, [t.workspace.id])).key.id);
      return { ...t, keys };
    }

    test('active-key limit: the 6th active key of a free workspace → 409 ACTIVE_KEY_LIMIT from the admin API', async () => {
      const ctx = get();
      const t = await freeTenantWithFiveKeys(ctx);
      const body = assertError(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id])), 409, 'ACTIVE_KEY_LIMIT');
      assert.match(body.message, /5 active keys/);
      // A key spanning a full workspace and a free one is refused as a whole.
      const roomy = await accounts.createWorkspace(ctx.deps, { name: 'Roomy', plan: 'free', ownerUserId: t.user.id });
      assertError(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [roomy.id, t.workspace.id])), 409, 'ACTIVE_KEY_LIMIT');
      assertOk(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [roomy.id])));
      // A plan change raises the limit (starter: 20).
      await accounts.updateWorkspaceSettings(ctx.deps, t.workspace.id, { plan: 'starter' });
      assertOk(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id])));
    });

    test('active-key limit: revoked keys do not count', async () => {
      const ctx = get();
      const t = await freeTenantWithFiveKeys(ctx);
      assertOk(await admin(ctx, `/admin/v1/keys/${t.keys[2]}/revoke`));
      assertOk(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id])));
      assertError(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id])), 409, 'ACTIVE_KEY_LIMIT');
    });

    test('active-key limit: expired keys do not count', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { plan: 'free' });
      for (let i = 0; i < 3; i++) await seedKey(ctx.deps, t.user.id, [t.workspace.id]);
      await seedKey(ctx.deps, t.user.id, [t.workspace.id], { expiresAt: ctx.clock.now() + 1000 });
      assertError(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id])), 409, 'ACTIVE_KEY_LIMIT');
      ctx.clock.advance(1000);
      assertOk(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id])));
    });
  });

  describe('refused requests write nothing', () => {
    test('no database write on 401 / 403 / 400 / 429 paths (only a suspension writes: the key row, the epoch and its key.suspended alert)', async () => {
      const ctx = get();
      const a = await seedTenant(ctx.deps, { credits: 1000, key: { ipRanges: ['10.1.0.0/16'] } });
      const b = await seedTenant(ctx.deps, { credits: 1000 });
      const noScope = await seedKey(ctx.deps, b.user.id, [b.workspace.id], { scopes: ['workspaces:read'] });
      const mcpOnly = await seedKey(ctx.deps, b.user.id, [b.workspace.id], { transports: ['mcp'] });
      const revoked = await seedKey(ctx.deps, b.user.id, [b.workspace.id]);
      await revokeKey(ctx.deps, revoked.key.id);
      const expiring = await seedKey(ctx.deps, b.user.id, [b.workspace.id], { expiresAt: ctx.clock.now() + 10 });
      await accounts.updateWorkspaceSettings(ctx.deps, b.workspace.id, { limits: { pointsPerMinute: 2 } });
      ctx.clock.set(Math.ceil(ctx.clock.now() / 60_000) * 60_000 + 20);
      assertOk(await usage(ctx, b.secret, b.workspace.id)); // 1 of 2 points
      assertOk(await usage(ctx, b.secret, b.workspace.id)); // 2 of 2 points
      await ctx.deps.usage.flush();
      const before = await dumpTables(ctx.deps);

      const refused: [Res, number, string][] = [
        [await usage(ctx, 'nope', b.workspace.id), 401, 'UNAUTHENTICATED'],
        [await usage(ctx, `wask_${'x'.repeat(43)}`, b.workspace.id), 401, 'UNAUTHENTICATED'],
        [await usage(ctx, revoked.secret, b.workspace.id), 401, 'UNAUTHENTICATED'],
        [await usage(ctx, expiring.secret, b.workspace.id), 401, 'UNAUTHENTICATED'],
        [await call(ctx, 'GET', '/v1/usage', { secret: b.secret, workspaceId: b.workspace.id, query: { api_key: b.secret } }), 401, 'UNAUTHENTICATED'],
        [await usage(ctx, a.secret, a.workspace.id, { remoteAddress: '10.2.0.1' }), 403, 'FORBIDDEN_IP'],
        [await usage(ctx, a.secret, b.workspace.id, { remoteAddress: '10.1.0.1' }), 403, 'FORBIDDEN_WORKSPACE'],
        [await usage(ctx, noScope.secret, b.workspace.id), 403, 'FORBIDDEN_SCOPE'],
        [await usage(ctx, mcpOnly.secret, b.workspace.id), 403, 'FORBIDDEN_TRANSPORT'],
        [await call(ctx, 'GET', '/v1/usage', { secret: b.secret }), 400, 'INVALID_REQUEST'],
        [await usage(ctx, b.secret, b.workspace.id), 429, 'RATE_LIMITED'],
      ];
      for (const [res, status, code] of refused) assertError(res, status, code);
      await ctx.deps.usage.flush();
      assert.deepEqual(await dumpTables(ctx.deps), before);

      // The one exception: the suspension writes the key row, bumps the epoch and raises its
      // key.suspended alert (a notification and an event: modules/alerts), nothing else.
      // (one scope failure of this key is already in the list above)
      for (let i = 2; i < ABUSE_THRESHOLD; i++) assertError(await usage(ctx, noScope.secret, b.workspace.id), 403, 'FORBIDDEN_SCOPE');
      assert.deepEqual(await dumpTables(ctx.deps), before);
      assertError(await usage(ctx, noScope.secret, b.workspace.id), 403, 'KEY_SUSPENDED');
      await ctx.deps.usage.flush();
      const after = await dumpTables(ctx.deps);
      const changed = Object.keys(after).filter((table) => JSON.stringify(after[table]) !== JSON.stringify(before[table]));
      assert.deepEqual(changed.sort(), ['api_keys', 'cache_epochs', 'events', 'notifications']);
    });
  });

  describe('cache coherence across processes', () => {
    const skipPglite = (ctx: TestContext) => ctx.database.url === undefined; // PGlite lives inside one process

    test('cross-process: a revocation through one process is refused by another once it polls the epoch (refreshAuthEpoch)', async (t) => {
      const ctx = get();
      if (skipPglite(ctx)) return t.skip('PGlite cannot be opened by a second process');
      const p2 = await secondProcess(ctx);
      try {
        const tenant = await seedTenant(ctx.deps);
        await refreshAuthEpoch(p2.deps);
        assertOk(await usage(p2.view, tenant.secret, tenant.workspace.id)); // p2 caches the key
        assertOk(await admin(ctx, `/admin/v1/keys/${tenant.key.id}/revoke`));
        await refreshAuthEpoch(p2.deps);
        assertError(await usage(p2.view, tenant.secret, tenant.workspace.id), 401, 'UNAUTHENTICATED');
      } finally {
        await p2.close();
      }
    });

    test('cross-process: a lost organization role and a suspension recorded by one process are enforced by another after its poll', async (t) => {
      const ctx = get();
      if (skipPglite(ctx)) return t.skip('PGlite cannot be opened by a second process');
      const p2 = await secondProcess(ctx);
      try {
        const owner = await newUser(ctx.deps);
        const member = await newUser(ctx.deps);
        const org = await accounts.createOrganization(ctx.deps, { name: 'Org', ownerUserId: owner.id });
        const ws = await accounts.createWorkspace(ctx.deps, { name: 'Shared', plan: 'pro', organizationId: org.id });
        await accounts.setMember(ctx.deps, org.id, { userId: member.id, role: 'admin' });
        const { secret } = await seedKey(ctx.deps, member.id, [ws.id]);
        await refreshAuthEpoch(p2.deps);
        assertOk(await usage(p2.view, secret, ws.id));
        await accounts.setMember(ctx.deps, org.id, { userId: member.id, role: 'member' });
        await refreshAuthEpoch(p2.deps);
        assertError(await usage(p2.view, secret, ws.id), 403, 'FORBIDDEN_WORKSPACE');

        const a = await seedTenant(ctx.deps);
        const b = await seedTenant(ctx.deps);
        await refreshAuthEpoch(p2.deps);
        assertOk(await usage(p2.view, a.secret, a.workspace.id));
        for (let i = 1; i < ABUSE_THRESHOLD; i++) assertError(await usage(ctx, a.secret, b.workspace.id), 403, 'FORBIDDEN_WORKSPACE');
        assertError(await usage(ctx, a.secret, b.workspace.id), 403, 'KEY_SUSPENDED');
        await refreshAuthEpoch(p2.deps);
        assertError(await usage(p2.view, a.secret, a.workspace.id), 403, 'KEY_SUSPENDED');
      } finally {
        await p2.close();
      }
    });

    test('cross-process: the background epoch poll of createDeps picks up a revocation by itself', async (t) => {
      const ctx = get();
      if (skipPglite(ctx)) return t.skip('PGlite cannot be opened by a second process');
      const p2 = await secondProcess(ctx, 20);
      try {
        const tenant = await seedTenant(ctx.deps);
        await refreshAuthEpoch(p2.deps);
        assertOk(await usage(p2.view, tenant.secret, tenant.workspace.id));
        await revokeKey(ctx.deps, tenant.key.id);
        // A state wait (ends at the first refusal): patient enough for a loaded machine.
        const res = await waitUntil(() => usage(p2.view, tenant.secret, tenant.workspace.id), (r) => r.statusCode !== 200, 'the revoked key to be refused', 30_000, 10);
        assertError(res, 401, 'UNAUTHENTICATED');
      } finally {
        await p2.close();
      }
    });
  });
});

describeEachDatabase(
  'auth: IP ranges behind TRUSTED_PROXIES=127.0.0.1',
  (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
    test('trusted proxies: X-Forwarded-For from 127.0.0.1 gives the client address', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { key: { ipRanges: ['10.1.0.0/16', '2001:db8::/32'] } });
      assertOk(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '10.1.2.3' } }));
      assertOk(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '2001:db8::7' } }));
      assertError(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '10.2.0.1' } }), 403, 'FORBIDDEN_IP');
    });

    test('trusted proxies: X-Forwarded-For from any other peer is ignored', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { key: { ipRanges: ['10.1.0.0/16'] } });
      assertError(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '10.9.9.9', headers: { 'x-forwarded-for': '10.1.2.3' } }), 403, 'FORBIDDEN_IP');
      assertOk(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '10.1.2.3', headers: { 'x-forwarded-for': '10.9.9.9' } }));
    });

    test('trusted proxies: only the hop the trusted proxy appended counts; a forged leftmost entry does not', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { key: { ipRanges: ['10.1.0.0/16'] } });
      const forged = { 'x-forwarded-for': '10.1.2.3, 198.51.100.9' };
      assertError(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '127.0.0.1', headers: forged }), 403, 'FORBIDDEN_IP');
      const chained = { 'x-forwarded-for': '198.51.100.9, 10.1.2.3, 127.0.0.1' };
      assertOk(await usage(ctx, t.secret, t.workspace.id, { remoteAddress: '127.0.0.1', headers: chained }));
    });
  },
  { env: { TRUSTED_PROXIES: '127.0.0.1' } },
);
