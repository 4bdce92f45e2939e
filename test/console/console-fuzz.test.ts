/**
 * Property tests of the console API's inputs (issue 35), like the public API's *-fuzz tests:
 * random key bodies (create and update), roll bodies, path ids, sign-in bodies and cookies. Oracles from the contract:
 *   - never a 5xx; every answer is the envelope, an error's code is registered with its status;
 *   - a body that breaks the schema is 400 INVALID_REQUEST; a valid one to a workspace the user has
 *     no part in (another user's, or none) is 404 and changes nothing there; to the user's own it
 *     creates a key whose secret works on the public API;
 *   - nothing of the other tenant (workspace name, key prefix) ever appears in an answer.
 * CONSOLE_FUZZ_RUNS (default 50) sets the number of runs of each property.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SCOPES, TRANSPORTS } from '../../src/modules/auth/scopes.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { ABSENT, assertEnvelope, assertNoForeignData, maybe, wrongType, type Maybe } from '../support/api-fuzz.js';
import { check } from '../support/fast-check.js';
import { call, describeEachDatabase } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';
import { consoleCall, postSignIn, signInAs } from '../support/console.js';

const RUNS = Number(process.env.CONSOLE_FUZZ_RUNS ?? 50);

/**
 * A field value and what it is: valid, refused by the request schema (400 before anything is
 * looked up), or refused by the key service (400 for the user's own workspace or key; a workspace
 * or key the user cannot reach is 404 first, which reveals nothing).
 */
type Validity = 'valid' | 'schema' | 'service';
type Field = { value: Maybe<unknown>; valid: Validity };
const field = (good: fc.Arbitrary<unknown>, bad: fc.Arbitrary<unknown>, required: boolean, serviceBad?: fc.Arbitrary<unknown>): fc.Arbitrary<Field> =>
  fc.oneof(
    { weight: 5, arbitrary: good.map((value): Field => ({ value, valid: 'valid' })) },
    { weight: 1, arbitrary: bad.map((value): Field => ({ value, valid: 'schema' })) },
    ...(serviceBad ? [{ weight: 1, arbitrary: serviceBad.map((value): Field => ({ value, valid: 'service' })) }] : []),
    { weight: 1, arbitrary: fc.constant<Field>({ value: ABSENT, valid: required ? 'schema' : 'valid' }) },
  );

const nonEmptySubset = <T>(items: readonly T[]) => fc.uniqueArray(fc.constantFrom(...items), { minLength: 1, maxLength: items.length });
const keyBodyArb = fc.record({
  scopes: field(nonEmptySubset(SCOPES), fc.oneof(wrongType, fc.constant([]), fc.constant(['root:all'])), true),
  operations: field(fc.uniqueArray(fc.constantFrom(...OPERATION_IDS), { maxLength: 3 }), fc.oneof(wrongType.filter((v) => !Array.isArray(v) || v.length > 0), fc.constant(['op.nope'])), true),
  transports: field(nonEmptySubset(TRANSPORTS), fc.oneof(wrongType, fc.constant(['ftp'])), true),
  expiresAt: field(fc.constantFrom(null, '2027-01-01T00:00:00.000Z'), fc.oneof(fc.constant('yesterday'), fc.integer()), false),
  ipRanges: field(fc.constantFrom([], ['10.0.0.0/8'], ['::1/128', '192.0.2.0/24']), fc.constant('10.0.0.0/8'), false, fc.constantFrom(['10.0.0.0/99'], ['300.1.2.3/8'])),
  budgets: field(fc.constantFrom({}, { dailyMillicents: 5 }, { weeklyMillicents: null }), fc.oneof(fc.constant({ dailyMillicents: -1 }), fc.constant({ yearly: 1 }), fc.constant([])), false),
  extra: field(fc.constant(ABSENT), fc.record({ name: fc.constantFrom('userId', 'workspaceIds', 'mode', '__x'), value: fc.jsonValue() }), false),
});

function bodyOf(fields: Record<string, Field>): { body: Record<string, unknown>; valid: Validity } {
  const body: Record<string, unknown> = {};
  let valid: Validity = 'valid';
  for (const [name, f] of Object.entries(fields)) {
    if (f.valid === 'schema' || (f.valid === 'service' && valid === 'valid')) valid = f.valid;
    if (f.value === ABSENT) continue;
    if (name === 'extra') {
      const { name: n, value } = f.value as { name: string; value: unknown };
      body[n] = value;
    } else body[name] = f.value;
  }
  return { body, valid };
}

describeEachDatabase('console API fuzz', (get) => {
  test('random key bodies to own, foreign and unknown workspaces', async () => {
    const ctx = get();
    const mine = await seedTenant(ctx.deps, { plan: 'pro' });
    const theirs = await seedTenant(ctx.deps);
    await ctx.deps.db.updateTable('workspaces').set({ name: 'Their secret workspace' }).where('id', '=', theirs.workspace.id).execute();
    const login = await signInAs(ctx, mine.user.id);
    const foreign = ['Their secret workspace', theirs.key.prefix];
    const targets = { own: mine.workspace.id, foreign: theirs.workspace.id, unknown: '0190a000-0000-7000-8000-00000000abcd', malformed: 'not-a-uuid' } as const;
    await check(
      fc.asyncProperty(keyBodyArb, fc.constantFrom(...(Object.keys(targets) as (keyof typeof targets)[])), async (fields, target) => {
        const { body, valid } = bodyOf(fields);
        // A past or invalid expiry the schema accepts as a timestamp is refused by the service (400 too).
        const res = await consoleCall(ctx, login, 'POST', `/console/api/workspaces/${targets[target]}/keys`, { body });
        assert.ok(res.statusCode < 500, res.body);
        assertNoForeignData(foreign, JSON.stringify(body), res.body, 'create key');
        if (target === 'malformed' || valid === 'schema' || (valid === 'service' && target === 'own')) {
          assert.equal(res.statusCode, 400, `${target} ${JSON.stringify(body)}: ${res.body}`);
          assert.equal(assertEnvelope(res).code, 'INVALID_REQUEST');
          return;
        }
        if (target !== 'own') {
          assert.equal(res.statusCode, 404, res.body);
          assert.equal(assertEnvelope(res).code, 'NOT_FOUND');
          return;
        }
        assert.equal(res.statusCode, 200, `${JSON.stringify(body)}: ${res.body}`);
        const { key, secret } = res.json().data;
        assert.deepEqual(key.workspaceIds, [mine.workspace.id]);
        const ranges = (body.ipRanges as string[] | undefined) ?? [];
        const api = await call(ctx, 'GET', '/v1/workspaces', { secret, workspaceId: mine.workspace.id, remoteAddress: ranges.length === 0 || ranges.includes('10.0.0.0/8') ? '10.1.2.3' : '192.0.2.7' });
        const scopes = body.scopes as string[];
        assert.equal(api.statusCode, scopes.includes('workspaces:read') && (body.transports as string[]).includes('rest') ? 200 : 403, api.body);
        // Keep under the plan's active-key limit.
        const revoked = await consoleCall(ctx, login, 'POST', `/console/api/workspaces/${mine.workspace.id}/keys/${key.id}/revoke`);
        assert.equal(revoked.statusCode, 200, revoked.body);
      }),
      RUNS,
    );
    assert.equal((await call(ctx, 'GET', '/v1/workspaces', { secret: theirs.secret, workspaceId: theirs.workspace.id })).statusCode, 200);
  });

  test('random roll bodies and key ids', async () => {
    const ctx = get();
    const mine = await seedTenant(ctx.deps);
    const theirs = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, mine.user.id);
    const bodyArb = fc.oneof(
      fc.integer({ min: 0, max: 3600 }).map((overlapSeconds) => ({ body: { overlapSeconds } as unknown, valid: true })),
      fc.oneof(wrongType, fc.record({ overlapSeconds: fc.oneof(fc.integer({ max: -1 }), fc.integer({ min: 30 * 24 * 3600 + 1 }), fc.double({ noDefaultInfinity: true, noNaN: true }).filter((d) => !Number.isInteger(d)), wrongType) }), fc.constant({})).map((body) => ({ body, valid: false })),
    );
    const keyArb = fc.constantFrom('mine', 'theirs', 'unknown', 'malformed');
    await check(
      fc.asyncProperty(bodyArb, keyArb, async ({ body, valid }, which) => {
        const keyId = { mine: mine.key.id, theirs: theirs.key.id, unknown: '0190a000-0000-7000-8000-00000000abcd', malformed: '12' }[which];
        const res = await consoleCall(ctx, login, 'POST', `/console/api/workspaces/${mine.workspace.id}/keys/${keyId}/roll`, { body: body === null ? undefined : body });
        assert.ok(res.statusCode < 500, res.body);
        assertNoForeignData([theirs.key.prefix], JSON.stringify(body), res.body, 'roll');
        if (which === 'malformed' || !valid) return void assert.equal(assertEnvelope(res).code, 'INVALID_REQUEST', res.body);
        if (which !== 'mine') return void assert.equal(assertEnvelope(res).code, 'NOT_FOUND', res.body);
        assert.equal(res.statusCode, 200, res.body);
        mine.secret = res.json().data.secret;
      }),
      RUNS,
    );
    assert.equal((await call(ctx, 'GET', '/v1/workspaces', { secret: theirs.secret, workspaceId: theirs.workspace.id })).statusCode, 200, 'their key was never rolled');
  });

  test('random key updates to own, foreign and unknown keys', async () => {
    const ctx = get();
    const mine = await seedTenant(ctx.deps);
    const theirs = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, mine.user.id);
    const optional = (f: Field): Field => (f.value === ABSENT ? { value: ABSENT, valid: 'valid' } : f);
    const updateArb = keyBodyArb.map((fields) => {
      const { body, valid } = bodyOf({ ...fields, scopes: optional(fields.scopes), operations: optional(fields.operations), transports: optional(fields.transports) });
      // An update changes at least one thing (minProperties 1).
      return { body, valid: Object.keys(body).length === 0 ? ('schema' as Validity) : valid };
    });
    await check(
      fc.asyncProperty(updateArb, fc.constantFrom('mine', 'theirs', 'unknown', 'malformed'), async ({ body, valid }, which) => {
        const keyId = { mine: mine.key.id, theirs: theirs.key.id, unknown: '0190a000-0000-7000-8000-00000000abcd', malformed: 'k' }[which];
        const res = await consoleCall(ctx, login, 'POST', `/console/api/workspaces/${mine.workspace.id}/keys/${keyId}/update`, { body });
        assert.ok(res.statusCode < 500, res.body);
        assertNoForeignData([theirs.key.prefix], JSON.stringify(body), res.body, 'update');
        if (which === 'malformed' || valid === 'schema' || (valid === 'service' && which === 'mine')) return void assert.equal(assertEnvelope(res).code, 'INVALID_REQUEST', `${JSON.stringify(body)}: ${res.body}`);
        if (which !== 'mine') return void assert.equal(assertEnvelope(res).code, 'NOT_FOUND', res.body);
        assert.equal(res.statusCode, 200, `${JSON.stringify(body)}: ${res.body}`);
        const key = res.json().data.key;
        for (const name of ['scopes', 'operations', 'transports', 'ipRanges'] as const) if (body[name] !== undefined) assert.deepEqual(key[name], body[name]);
      }),
      RUNS,
    );
    const theirKey = await call(ctx, 'GET', '/v1/workspaces', { secret: theirs.secret, workspaceId: theirs.workspace.id });
    assert.equal(theirKey.statusCode, 200, 'their key was never changed');
  });

  test('random sign-in bodies and cookies never sign anybody in', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const tokenArb = fc.oneof(fc.string({ maxLength: 200 }), fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), wrongType);
    await check(
      fc.asyncProperty(tokenArb, fc.ipV4(), fc.string({ maxLength: 300 }), async (token, address, cookie) => {
        const res = await postSignIn(ctx, token, undefined, address);
        assert.ok([400, 401, 429].includes(res.statusCode), res.body);
        assertEnvelope(res);
        assert.equal(res.headers['set-cookie'], undefined);
        const me = await ctx.app.inject({ method: 'GET', url: '/console/api/me', headers: { cookie: cookie.replace(/[^\x20-\x7e]/g, '') } });
        assert.equal(me.statusCode, 401, me.body);
        assertEnvelope(me);
      }),
      RUNS,
    );
    assert.equal((await consoleCall(ctx, await signInAs(ctx, t.user.id), 'GET', '/console/api/me')).statusCode, 200);
  });
});
