/**
 * The operator's admin API (decisions.md section 4): token authentication, users, organizations,
 * members, workspaces, settings, credits and API keys. Domains and provider keys have their own
 * files. Every success is checked for the envelope and its ADMIN_* code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, call, describeEachDatabase, TEST_ADMIN_TOKEN, type TestContext } from '../support/harness.js';
import { assertError, expectOk } from '../support/assertions.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { seedTenant, uniqueEmail, keyBody } from '../support/seed.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import { findMemberRole } from '../../src/modules/accounts/store.js';
import * as billingStore from '../../src/modules/billing/store.js';
import { PLAN_DEFAULTS } from '../../src/modules/usage/plans.js';

const UNKNOWN_ID = '01890000-0000-7000-8000-000000000000';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;



async function createUser(ctx: TestContext, email = uniqueEmail()) {
  return expectOk(await admin(ctx, '/admin/v1/users', { email, name: 'Ada' }), 'ADMIN_USERS_CREATE').user;
}

async function createPersonalWorkspace(ctx: TestContext, ownerUserId: string, plan = 'pro') {
  return expectOk(await admin(ctx, '/admin/v1/workspaces', { name: 'Personal', plan, ownerUserId }), 'ADMIN_WORKSPACES_CREATE').workspace;
}

async function createOrganization(ctx: TestContext, ownerUserId: string) {
  return expectOk(await admin(ctx, '/admin/v1/organizations', { name: 'Acme', ownerUserId }), 'ADMIN_ORGANIZATIONS_CREATE').organization;
}


/** Every admin endpoint with a body that would succeed for the shape (ids may be unknown). */
function adminEndpoints(ws: string, org: string, user: string, key: string) {
  return [
    { url: '/admin/v1/users', body: { email: uniqueEmail(), name: 'X' } },
    { url: '/admin/v1/organizations', body: { name: 'O', ownerUserId: user } },
    { url: `/admin/v1/organizations/${org}/members`, body: { userId: user, role: 'member' } },
    { url: `/admin/v1/organizations/${org}/members/${user}/remove`, body: {} },
    { url: '/admin/v1/workspaces', body: { name: 'W', plan: 'free', ownerUserId: user } },
    { url: `/admin/v1/workspaces/${ws}/settings`, body: { plan: 'pro' } },
    { url: `/admin/v1/workspaces/${ws}/credits`, body: { amountMillicents: 1000 } },
    { url: `/admin/v1/workspaces/${ws}/domains`, body: { hostname: 'hooks.example.com' } },
    { url: `/admin/v1/workspaces/${ws}/domains/hooks.example.com/verify`, body: { method: 'operator' } },
    { url: `/admin/v1/workspaces/${ws}/domains/hooks.example.com/remove`, body: {} },
    { url: `/admin/v1/workspaces/${ws}/provider-keys`, body: { provider: 'openai', apiKey: 'sk-test' } },
    { url: '/admin/v1/keys', body: keyBody(user, [ws]) },
    { url: `/admin/v1/keys/${key}/revoke`, body: {} },
  ];
}

describeEachDatabase('admin API off when ADMIN_TOKEN is unset', (get) => {
  test('admin auth: with ADMIN_TOKEN empty (unset) every admin route is 404 NOT_FOUND, even with a bearer token', async () => {
    const ctx = get();
    assert.equal(ctx.config.adminToken, undefined);
    for (const ep of adminEndpoints(UNKNOWN_ID, UNKNOWN_ID, UNKNOWN_ID, UNKNOWN_ID)) {
      assertError(await admin(ctx, ep.url, ep.body), 404, 'NOT_FOUND');
      assertError(await admin(ctx, ep.url, ep.body, ''), 404, 'NOT_FOUND');
    }
  });
}, { env: { ADMIN_TOKEN: '' } });

describeEachDatabase('admin API', (get) => {
  // ---- authentication ----------------------------------------------------------------------

  test('admin auth: missing, wrong, non-Bearer and API-key credentials are 401 UNAUTHENTICATED on every admin route', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const rows = async () => (await ctx.deps.db.selectFrom('users').select('id').execute()).length;
    const before = await rows();
    for (const ep of adminEndpoints(t.workspace.id, UNKNOWN_ID, t.user.id, t.key.id)) {
      const none = await ctx.app.inject({ method: 'POST', url: ep.url, payload: ep.body });
      assertError(none, 401, 'UNAUTHENTICATED');
      assertError(await admin(ctx, ep.url, ep.body, `${TEST_ADMIN_TOKEN}x`), 401, 'UNAUTHENTICATED');
      assertError(await admin(ctx, ep.url, ep.body, TEST_ADMIN_TOKEN.slice(0, -1)), 401, 'UNAUTHENTICATED');
      assertError(await admin(ctx, ep.url, ep.body, t.secret), 401, 'UNAUTHENTICATED');
      const basic = await ctx.app.inject({ method: 'POST', url: ep.url, payload: ep.body, headers: { authorization: `Basic ${TEST_ADMIN_TOKEN}` } });
      assertError(basic, 401, 'UNAUTHENTICATED');
    }
    assert.equal(await rows(), before, 'no refused request wrote anything');
    // The key is untouched: it was never revoked by the refused revoke.
    assert.equal((await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).statusCode, 200);
  });

  test('admin auth: the token is checked before the body (a bad body with a bad token is 401, not 400)', async () => {
    const ctx = get();
    assertError(await admin(ctx, '/admin/v1/users', { nope: true }, 'wrong-token-0123456789'), 401, 'UNAUTHENTICATED');
    assertError(await admin(ctx, '/admin/v1/users', { nope: true }), 400, 'INVALID_REQUEST');
  });

  test('admin auth: the Bearer scheme is case-insensitive and the admin routes are not in the public OpenAPI document', async () => {
    const ctx = get();
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/admin/v1/users',
      payload: { email: uniqueEmail(), name: 'Case' },
      headers: { authorization: `bearer ${TEST_ADMIN_TOKEN}` },
    });
    expectOk(res, 'ADMIN_USERS_CREATE');
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.equal(Object.keys(doc.paths ?? {}).some((p) => p.startsWith('/admin')), false);
  });

  test('admin bodies: unknown properties are 400 INVALID_REQUEST on every admin route', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const org = await createOrganization(ctx, t.user.id);
    for (const ep of adminEndpoints(t.workspace.id, org.id, t.user.id, t.key.id)) {
      const res = await admin(ctx, ep.url, { ...ep.body, surprise: 1 });
      assertError(res, 400, 'INVALID_REQUEST');
    }
    assertError(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerHour: 5 } }), 400, 'INVALID_REQUEST');
    assertError(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { budgets: { yearlyMillicents: 5 } }), 400, 'INVALID_REQUEST');
    assertError(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id], { budgets: { hourlyMillicents: 1 } })), 400, 'INVALID_REQUEST');
    // Nothing was changed by the refused requests.
    assert.equal((await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).statusCode, 200);
  });

  test('admin bodies: malformed ids in the path are 400 INVALID_REQUEST, unknown ids 404 NOT_FOUND', async () => {
    const ctx = get();
    assertError(await admin(ctx, '/admin/v1/workspaces/not-a-uuid/credits', { amountMillicents: 5 }), 400, 'INVALID_REQUEST');
    assertError(await admin(ctx, '/admin/v1/keys/not-a-uuid/revoke'), 400, 'INVALID_REQUEST');
    assertError(await admin(ctx, `/admin/v1/workspaces/${UNKNOWN_ID}/credits`, { amountMillicents: 5 }), 404, 'NOT_FOUND');
    assertError(await admin(ctx, '/admin/v1/nothing-here', {}), 404, 'NOT_FOUND');
  });

  // ---- users --------------------------------------------------------------------------------

  test('users: create returns {user} with a UUIDv7 id, the email lower-cased and an ISO createdAt (ADMIN_USERS_CREATE)', async () => {
    const ctx = get();
    const email = uniqueEmail();
    const data = expectOk(await admin(ctx, '/admin/v1/users', { email: email.toUpperCase(), name: '  Grace Hopper ' }), 'ADMIN_USERS_CREATE');
    assert.deepEqual(Object.keys(data), ['user']);
    assert.match(data.user.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(data.user.email, email);
    assert.equal(data.user.name, 'Grace Hopper');
    assert.equal(data.user.createdAt, new Date(ctx.clock.now()).toISOString());
  });

  test('users: email is unique regardless of case (409 CONFLICT), also for concurrent creations', async () => {
    const ctx = get();
    const email = uniqueEmail();
    await createUser(ctx, email);
    assertError(await admin(ctx, '/admin/v1/users', { email: email.toUpperCase(), name: 'Again' }), 409, 'CONFLICT');
    const other = uniqueEmail();
    const results = await Promise.all([1, 2, 3, 4].map(() => admin(ctx, '/admin/v1/users', { email: other, name: 'Race' })));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 409, 409, 409]);
    const rows = await ctx.deps.db.selectFrom('users').select('id').where('email', '=', other).execute();
    assert.equal(rows.length, 1);
  });

  test('users: email format, name presence and blank names are validated (400 INVALID_REQUEST)', async () => {
    const ctx = get();
    for (const body of [
      { email: 'not-an-email', name: 'X' },
      { email: 'a@', name: 'X' },
      { email: '', name: 'X' },
      { email: uniqueEmail() },
      { name: 'X' },
      { email: uniqueEmail(), name: '' },
      { email: uniqueEmail(), name: '   ' },
      { email: uniqueEmail(), name: 5 },
      { email: `${'a'.repeat(320)}@example.com`, name: 'X' },
    ]) {
      assertError(await admin(ctx, '/admin/v1/users', body), 400, 'INVALID_REQUEST');
    }
    const empty = await ctx.app.inject({ method: 'POST', url: '/admin/v1/users', headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' }, payload: '{bad json' });
    assertError(empty, 400, 'INVALID_REQUEST');
  });

  // ---- organizations and members -------------------------------------------------------------

  test('organizations: create returns {organization} and makes ownerUserId its owner member (ADMIN_ORGANIZATIONS_CREATE)', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    const data = expectOk(await admin(ctx, '/admin/v1/organizations', { name: ' Acme ', ownerUserId: owner.id }), 'ADMIN_ORGANIZATIONS_CREATE');
    assert.equal(data.organization.name, 'Acme');
    assert.match(data.organization.createdAt, ISO);
    assert.equal(await findMemberRole(ctx.deps.db, data.organization.id, owner.id), 'owner');
  });

  test('organizations: unknown owner is 404, a missing or blank name 400', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    assertError(await admin(ctx, '/admin/v1/organizations', { name: 'Acme', ownerUserId: UNKNOWN_ID }), 404, 'NOT_FOUND');
    assertError(await admin(ctx, '/admin/v1/organizations', { name: ' ', ownerUserId: owner.id }), 400, 'INVALID_REQUEST');
    assertError(await admin(ctx, '/admin/v1/organizations', { ownerUserId: owner.id }), 400, 'INVALID_REQUEST');
    assertError(await admin(ctx, '/admin/v1/organizations', { name: 'Acme', ownerUserId: 'nope' }), 400, 'INVALID_REQUEST');
  });

  test('members: set adds or changes a role and returns {member} (ADMIN_MEMBERS_SET); remove returns {removed:true} (ADMIN_MEMBERS_REMOVE)', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    const other = await createUser(ctx);
    const org = await createOrganization(ctx, owner.id);
    const set = expectOk(await admin(ctx, `/admin/v1/organizations/${org.id}/members`, { userId: other.id, role: 'member' }), 'ADMIN_MEMBERS_SET');
    assert.deepEqual(set, { member: { organizationId: org.id, userId: other.id, role: 'member' } });
    expectOk(await admin(ctx, `/admin/v1/organizations/${org.id}/members`, { userId: other.id, role: 'admin' }), 'ADMIN_MEMBERS_SET');
    assert.equal(await findMemberRole(ctx.deps.db, org.id, other.id), 'admin');
    const removed = expectOk(await admin(ctx, `/admin/v1/organizations/${org.id}/members/${other.id}/remove`), 'ADMIN_MEMBERS_REMOVE');
    assert.deepEqual(removed, { removed: true });
    assert.equal(await findMemberRole(ctx.deps.db, org.id, other.id), undefined);
    assertError(await admin(ctx, `/admin/v1/organizations/${org.id}/members/${other.id}/remove`), 404, 'NOT_FOUND');
  });

  test('members: unknown organization or user is 404, a role outside owner|admin|member 400', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    const org = await createOrganization(ctx, owner.id);
    assertError(await admin(ctx, `/admin/v1/organizations/${UNKNOWN_ID}/members`, { userId: owner.id, role: 'admin' }), 404, 'NOT_FOUND');
    assertError(await admin(ctx, `/admin/v1/organizations/${org.id}/members`, { userId: UNKNOWN_ID, role: 'admin' }), 404, 'NOT_FOUND');
    assertError(await admin(ctx, `/admin/v1/organizations/${org.id}/members`, { userId: owner.id, role: 'superuser' }), 400, 'INVALID_REQUEST');
    assertError(await admin(ctx, `/admin/v1/organizations/${UNKNOWN_ID}/members/${owner.id}/remove`), 404, 'NOT_FOUND');
  });

  test('members: the last owner can be neither removed nor demoted (409 CONFLICT); with a second owner both work', async () => {
    const ctx = get();
    const first = await createUser(ctx);
    const second = await createUser(ctx);
    const org = await createOrganization(ctx, first.id);
    assertError(await admin(ctx, `/admin/v1/organizations/${org.id}/members/${first.id}/remove`), 409, 'CONFLICT');
    assertError(await admin(ctx, `/admin/v1/organizations/${org.id}/members`, { userId: first.id, role: 'admin' }), 409, 'CONFLICT');
    assert.equal(await findMemberRole(ctx.deps.db, org.id, first.id), 'owner');
    expectOk(await admin(ctx, `/admin/v1/organizations/${org.id}/members`, { userId: second.id, role: 'owner' }), 'ADMIN_MEMBERS_SET');
    expectOk(await admin(ctx, `/admin/v1/organizations/${org.id}/members`, { userId: first.id, role: 'member' }), 'ADMIN_MEMBERS_SET');
    assertError(await admin(ctx, `/admin/v1/organizations/${org.id}/members/${second.id}/remove`), 409, 'CONFLICT');
    expectOk(await admin(ctx, `/admin/v1/organizations/${org.id}/members/${first.id}/remove`), 'ADMIN_MEMBERS_REMOVE');
  });

  test('members: two owners demoting each other at once leave one owner (the last-owner rule holds under concurrency)', async () => {
    const ctx = get();
    const a = await createUser(ctx);
    const b = await createUser(ctx);
    const org = await createOrganization(ctx, a.id);
    expectOk(await admin(ctx, `/admin/v1/organizations/${org.id}/members`, { userId: b.id, role: 'owner' }), 'ADMIN_MEMBERS_SET');
    const results = await Promise.all([
      admin(ctx, `/admin/v1/organizations/${org.id}/members`, { userId: a.id, role: 'member' }),
      admin(ctx, `/admin/v1/organizations/${org.id}/members/${b.id}/remove`),
    ]);
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 409]);
    const owners = await ctx.deps.db.selectFrom('organization_members').select('user_id').where('organization_id', '=', org.id).where('role', '=', 'owner').execute();
    assert.equal(owners.length, 1);
  });

  test('members: removing an admin from the organization stops their key from using its workspaces (403 FORBIDDEN_WORKSPACE)', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    const helper = await createUser(ctx);
    const org = await createOrganization(ctx, owner.id);
    const ws = expectOk(await admin(ctx, '/admin/v1/workspaces', { name: 'Team', plan: 'pro', organizationId: org.id }), 'ADMIN_WORKSPACES_CREATE').workspace;
    expectOk(await admin(ctx, `/admin/v1/organizations/${org.id}/members`, { userId: helper.id, role: 'admin' }), 'ADMIN_MEMBERS_SET');
    const { secret } = expectOk(await admin(ctx, '/admin/v1/keys', keyBody(helper.id, [ws.id])), 'ADMIN_KEYS_CREATE');
    assert.equal((await call(ctx, 'GET', '/v1/usage', { secret, workspaceId: ws.id })).statusCode, 200);
    expectOk(await admin(ctx, `/admin/v1/organizations/${org.id}/members/${helper.id}/remove`), 'ADMIN_MEMBERS_REMOVE');
    assertError(await call(ctx, 'GET', '/v1/usage', { secret, workspaceId: ws.id }), 403, 'FORBIDDEN_WORKSPACE');
  });

  // ---- workspaces ---------------------------------------------------------------------------

  test('workspaces: personal (ownerUserId) and organization (organizationId) workspaces are created with their plan (ADMIN_WORKSPACES_CREATE)', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    const org = await createOrganization(ctx, owner.id);
    const personal = expectOk(await admin(ctx, '/admin/v1/workspaces', { name: 'Mine', plan: 'starter', ownerUserId: owner.id }), 'ADMIN_WORKSPACES_CREATE').workspace;
    assert.equal(personal.plan, 'starter');
    assert.equal(personal.ownerUserId, owner.id);
    assert.equal(personal.organizationId, null);
    assert.match(personal.createdAt, ISO);
    const team = expectOk(await admin(ctx, '/admin/v1/workspaces', { name: 'Team', plan: 'free', organizationId: org.id }), 'ADMIN_WORKSPACES_CREATE').workspace;
    assert.equal(team.ownerUserId, null);
    assert.equal(team.organizationId, org.id);
  });

  test('workspaces: exactly one of ownerUserId or organizationId (both or neither is 400)', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    const org = await createOrganization(ctx, owner.id);
    assertError(await admin(ctx, '/admin/v1/workspaces', { name: 'Both', plan: 'pro', ownerUserId: owner.id, organizationId: org.id }), 400, 'INVALID_REQUEST');
    assertError(await admin(ctx, '/admin/v1/workspaces', { name: 'Neither', plan: 'pro' }), 400, 'INVALID_REQUEST');
  });

  test('workspaces: plan must be free, starter or pro; name required; unknown owner or organization is 404', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    for (const plan of ['enterprise', 'PRO', '', null]) {
      assertError(await admin(ctx, '/admin/v1/workspaces', { name: 'W', plan, ownerUserId: owner.id }), 400, 'INVALID_REQUEST');
    }
    assertError(await admin(ctx, '/admin/v1/workspaces', { plan: 'pro', ownerUserId: owner.id }), 400, 'INVALID_REQUEST');
    assertError(await admin(ctx, '/admin/v1/workspaces', { name: '  ', plan: 'pro', ownerUserId: owner.id }), 400, 'INVALID_REQUEST');
    assertError(await admin(ctx, '/admin/v1/workspaces', { name: 'W', plan: 'pro', ownerUserId: UNKNOWN_ID }), 404, 'NOT_FOUND');
    assertError(await admin(ctx, '/admin/v1/workspaces', { name: 'W', plan: 'pro', organizationId: UNKNOWN_ID }), 404, 'NOT_FOUND');
  });

  // ---- settings ----------------------------------------------------------------------------

  test('settings: a plan change returns {workspace, limits, budgets} with the new plan defaults (ADMIN_WORKSPACES_SETTINGS)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { plan: 'free' });
    const data = expectOk(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { plan: 'starter' }), 'ADMIN_WORKSPACES_SETTINGS');
    assert.deepEqual(Object.keys(data).sort(), ['budgets', 'limits', 'workspace']);
    assert.equal(data.workspace.plan, 'starter');
    assert.deepEqual(data.limits, PLAN_DEFAULTS.starter);
    assert.deepEqual(data.budgets, { dailyMillicents: null, weeklyMillicents: null, monthlyMillicents: null });
  });

  test('settings: limit overrides apply, survive a plan change, and null returns a limit to the plan default', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { plan: 'pro' });
    const url = `/admin/v1/workspaces/${t.workspace.id}/settings`;
    let data = expectOk(await admin(ctx, url, { limits: { pointsPerMinute: 7, streams: 0, activeKeys: 9 } }), 'ADMIN_WORKSPACES_SETTINGS');
    assert.deepEqual(data.limits, { ...PLAN_DEFAULTS.pro, pointsPerMinute: 7, streams: 0, activeKeys: 9 });
    data = expectOk(await admin(ctx, url, { plan: 'starter' }), 'ADMIN_WORKSPACES_SETTINGS');
    assert.deepEqual(data.limits, { ...PLAN_DEFAULTS.starter, pointsPerMinute: 7, streams: 0, activeKeys: 9 });
    data = expectOk(await admin(ctx, url, { limits: { pointsPerMinute: null, streams: null } }), 'ADMIN_WORKSPACES_SETTINGS');
    assert.deepEqual(data.limits, { ...PLAN_DEFAULTS.starter, activeKeys: 9 });
  });

  test('settings: a changed points limit takes effect on the next public request (RateLimit-Limit)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { plan: 'pro' });
    const before = await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id });
    assert.equal(before.headers['ratelimit-limit'], String(PLAN_DEFAULTS.pro.pointsPerMinute));
    expectOk(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 123 } }), 'ADMIN_WORKSPACES_SETTINGS');
    const after = await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id });
    assert.equal(after.headers['ratelimit-limit'], '123');
  });

  test('settings: budgets set workspace ceilings, merge per period, and null removes one', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const url = `/admin/v1/workspaces/${t.workspace.id}/settings`;
    let data = expectOk(await admin(ctx, url, { budgets: { dailyMillicents: 5000, monthlyMillicents: 90000 } }), 'ADMIN_WORKSPACES_SETTINGS');
    assert.deepEqual(data.budgets, { dailyMillicents: 5000, weeklyMillicents: null, monthlyMillicents: 90000 });
    data = expectOk(await admin(ctx, url, { budgets: { weeklyMillicents: 20000, dailyMillicents: null } }), 'ADMIN_WORKSPACES_SETTINGS');
    assert.deepEqual(data.budgets, { dailyMillicents: null, weeklyMillicents: 20000, monthlyMillicents: 90000 });
  });

  test('settings: empty body, negative or fractional limits, zero budgets and unknown plans are 400; unknown workspace 404', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const url = `/admin/v1/workspaces/${t.workspace.id}/settings`;
    for (const body of [
      {},
      { limits: { pointsPerMinute: -1 } },
      { limits: { pointsPerMinute: 1.5 } },
      { limits: { pointsPerMinute: '10' } },
      { budgets: { dailyMillicents: 0 } },
      { budgets: { dailyMillicents: 2.5 } },
      { plan: 'gold' },
    ]) {
      assertError(await admin(ctx, url, body), 400, 'INVALID_REQUEST');
    }
    assertError(await admin(ctx, `/admin/v1/workspaces/${UNKNOWN_ID}/settings`, { plan: 'pro' }), 404, 'NOT_FOUND');
  });

  // ---- credits ------------------------------------------------------------------------------

  test('credits: a grant returns {allocation} (provenance defaults to purchase) and writes a purchase ledger entry (ADMIN_CREDITS_GRANT)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const data = expectOk(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/credits`, { amountMillicents: 25_000 }), 'ADMIN_CREDITS_GRANT');
    const a = data.allocation;
    assert.equal(a.workspaceId, t.workspace.id);
    assert.equal(a.amountMillicents, 25_000);
    assert.equal(a.remainingMillicents, 25_000);
    assert.equal(a.provenance, 'purchase');
    assert.equal(a.expiresAt, null);
    const ledger = await billingStore.pageLedger(ctx.deps.db, t.workspace.id, undefined, 10);
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0]!.type, 'purchase');
    assert.equal(ledger[0]!.amountMillicents, 25_000);
    assert.equal(ledger[0]!.allocationId, a.id);
    const balance = await call(ctx, 'GET', '/v1/balance', { secret: t.secret, workspaceId: t.workspace.id });
    assert.equal(balance.json().data.totalMillicents, 25_000);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('credits: expiresAt and provenance are kept; the allocation stops counting once it expires', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const expiresAt = new Date(ctx.clock.now() + 3_600_000).toISOString();
    const data = expectOk(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/credits`, { amountMillicents: 700, expiresAt, provenance: 'promo-2026' }), 'ADMIN_CREDITS_GRANT');
    assert.equal(data.allocation.expiresAt, expiresAt);
    assert.equal(data.allocation.provenance, 'promo-2026');
    expectOk(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/credits`, { amountMillicents: 300, expiresAt: null }), 'ADMIN_CREDITS_GRANT');
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
    ctx.clock.advance(3_600_001);
    const balance = await call(ctx, 'GET', '/v1/balance', { secret: t.secret, workspaceId: t.workspace.id });
    assert.equal(balance.json().data.totalMillicents, 300);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('credits: expiresAt in the past, non-positive, fractional, string or unsafe amounts and bad provenance are 400; unknown workspace 404', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const url = `/admin/v1/workspaces/${t.workspace.id}/credits`;
    for (const body of [
      { amountMillicents: 100, expiresAt: new Date(ctx.clock.now() - 1000).toISOString() },
      { amountMillicents: 100, expiresAt: new Date(ctx.clock.now()).toISOString() },
      { amountMillicents: 100, expiresAt: 'tomorrow' },
      { amountMillicents: 0 },
      { amountMillicents: -5 },
      { amountMillicents: 1.5 },
      { amountMillicents: '100' },
      { amountMillicents: Number.MAX_SAFE_INTEGER + 2 },
      { amountMillicents: 100, provenance: 'Not Valid' },
      { amountMillicents: 100, provenance: '' },
      {},
    ]) {
      assertError(await admin(ctx, url, body), 400, 'INVALID_REQUEST');
    }
    assertError(await admin(ctx, `/admin/v1/workspaces/${UNKNOWN_ID}/credits`, { amountMillicents: 100 }), 404, 'NOT_FOUND');
    assert.equal(await billingStore.sumLedger(ctx.deps.db, t.workspace.id), 0, 'refused grants wrote nothing');
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  // ---- keys ---------------------------------------------------------------------------------

  test('keys: create returns {key, secret} once; only the SHA-256 is stored and the secret works (ADMIN_KEYS_CREATE)', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    const ws = await createPersonalWorkspace(ctx, owner.id);
    const res = await admin(ctx, '/admin/v1/keys', keyBody(owner.id, [ws.id], { transports: ['rest', 'mcp'] }));
    const data = expectOk(res, 'ADMIN_KEYS_CREATE');
    assert.match(data.secret, /^wask_[A-Za-z0-9_-]{43}$/);
    assert.equal(data.key.prefix, data.secret.slice(0, 12));
    assert.deepEqual(data.key.workspaceIds, [ws.id]);
    assert.deepEqual(data.key.transports, ['rest', 'mcp']);
    assert.equal(data.key.revokedAt, null);
    assert.equal('secretHash' in data.key, false);
    const row = await ctx.deps.db.selectFrom('api_keys').selectAll().where('id', '=', data.key.id).executeTakeFirstOrThrow();
    assert.equal(row.secret_hash, sha256Hex(data.secret));
    assert.equal(JSON.stringify(row).includes(data.secret), false, 'the secret itself is not stored');
    assert.equal((await call(ctx, 'GET', '/v1/usage', { secret: data.secret, workspaceId: ws.id })).statusCode, 200);
  });

  test('keys: scopes, operations and transports must be known values (400), scopes and transports non-empty, lists unique', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    const ws = await createPersonalWorkspace(ctx, owner.id);
    for (const extra of [
      { scopes: ['admin:all'] },
      { scopes: [] },
      { scopes: ['jobs:read', 'jobs:read'] },
      { operations: ['mine.bitcoin'] },
      { transports: ['grpc'] },
      { transports: [] },
      { workspaceIds: [] },
      { workspaceIds: [ws.id, ws.id] },
      { workspaceIds: ['nope'] },
      { expiresAt: 'soon' },
    ]) {
      assertError(await admin(ctx, '/admin/v1/keys', keyBody(owner.id, [ws.id], extra)), 400, 'INVALID_REQUEST');
    }
    const { userId: _u, ...withoutUser } = keyBody(owner.id, [ws.id]);
    assertError(await admin(ctx, '/admin/v1/keys', withoutUser), 400, 'INVALID_REQUEST');
    // An empty operations list is a key that runs nothing (read-only), which is allowed.
    const readOnly = expectOk(await admin(ctx, '/admin/v1/keys', keyBody(owner.id, [ws.id], { operations: [], scopes: ['usage:read'] })), 'ADMIN_KEYS_CREATE');
    assert.deepEqual(readOnly.key.operations, []);
  });

  test('keys: every workspace must be owned or administered by the user (403 FORBIDDEN); unknown user or workspace is 404', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    const stranger = await createUser(ctx);
    const member = await createUser(ctx);
    const orgAdmin = await createUser(ctx);
    const mine = await createPersonalWorkspace(ctx, owner.id);
    const org = await createOrganization(ctx, owner.id);
    const team = expectOk(await admin(ctx, '/admin/v1/workspaces', { name: 'Team', plan: 'pro', organizationId: org.id }), 'ADMIN_WORKSPACES_CREATE').workspace;
    expectOk(await admin(ctx, `/admin/v1/organizations/${org.id}/members`, { userId: member.id, role: 'member' }), 'ADMIN_MEMBERS_SET');
    expectOk(await admin(ctx, `/admin/v1/organizations/${org.id}/members`, { userId: orgAdmin.id, role: 'admin' }), 'ADMIN_MEMBERS_SET');

    assertError(await admin(ctx, '/admin/v1/keys', keyBody(stranger.id, [mine.id])), 403, 'FORBIDDEN');
    assertError(await admin(ctx, '/admin/v1/keys', keyBody(member.id, [team.id])), 403, 'FORBIDDEN');
    assertError(await admin(ctx, '/admin/v1/keys', keyBody(orgAdmin.id, [team.id, mine.id])), 403, 'FORBIDDEN');
    expectOk(await admin(ctx, '/admin/v1/keys', keyBody(orgAdmin.id, [team.id])), 'ADMIN_KEYS_CREATE');
    expectOk(await admin(ctx, '/admin/v1/keys', keyBody(owner.id, [team.id, mine.id])), 'ADMIN_KEYS_CREATE');
    assertError(await admin(ctx, '/admin/v1/keys', keyBody(UNKNOWN_ID, [mine.id])), 404, 'NOT_FOUND');
    assertError(await admin(ctx, '/admin/v1/keys', keyBody(owner.id, [mine.id, UNKNOWN_ID])), 404, 'NOT_FOUND');
    const keys = await ctx.deps.db.selectFrom('api_keys').select('id').where('user_id', 'in', [stranger.id, member.id]).execute();
    assert.equal(keys.length, 0, 'refused creations left no half-made key');
  });

  test('keys: ipRanges are validated CIDRs (400 otherwise) and enforced (403 FORBIDDEN_IP outside them)', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    const ws = await createPersonalWorkspace(ctx, owner.id);
    for (const ipRanges of [['10.0.0.0/33'], ['not-an-ip'], ['2001:db8::/129'], ['10.0.0.1/8/1'], ['x'.repeat(65)]]) {
      assertError(await admin(ctx, '/admin/v1/keys', keyBody(owner.id, [ws.id], { ipRanges })), 400, 'INVALID_REQUEST');
    }
    const data = expectOk(await admin(ctx, '/admin/v1/keys', keyBody(owner.id, [ws.id], { ipRanges: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'] })), 'ADMIN_KEYS_CREATE');
    assert.deepEqual(data.key.ipRanges, ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7']);
    assert.equal((await call(ctx, 'GET', '/v1/usage', { secret: data.secret, workspaceId: ws.id, remoteAddress: '203.0.113.9' })).statusCode, 200);
    assertError(await call(ctx, 'GET', '/v1/usage', { secret: data.secret, workspaceId: ws.id, remoteAddress: '192.0.2.1' }), 403, 'FORBIDDEN_IP');
  });

  test('keys: budgets and expiresAt are stored; expiresAt in the past is 400; non-positive budgets are 400', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    const ws = await createPersonalWorkspace(ctx, owner.id);
    const expiresAt = new Date(ctx.clock.now() + 86_400_000).toISOString();
    const data = expectOk(
      await admin(ctx, '/admin/v1/keys', keyBody(owner.id, [ws.id], { expiresAt, budgets: { dailyMillicents: 100, monthlyMillicents: 2000 } })),
      'ADMIN_KEYS_CREATE',
    );
    assert.equal(data.key.expiresAt, expiresAt);
    assert.deepEqual(data.key.budgets, { dailyMillicents: 100, weeklyMillicents: null, monthlyMillicents: 2000 });
    assertError(await admin(ctx, '/admin/v1/keys', keyBody(owner.id, [ws.id], { expiresAt: new Date(ctx.clock.now() - 1).toISOString() })), 400, 'INVALID_REQUEST');
    assertError(await admin(ctx, '/admin/v1/keys', keyBody(owner.id, [ws.id], { budgets: { dailyMillicents: 0 } })), 400, 'INVALID_REQUEST');
    // The key expires with the clock.
    ctx.clock.advance(86_400_001);
    assertError(await call(ctx, 'GET', '/v1/usage', { secret: data.secret, workspaceId: ws.id }), 401, 'UNAUTHENTICATED');
  });

  test('keys: the workspace plan caps active keys (409 ACTIVE_KEY_LIMIT); revoking one frees a slot', async () => {
    const ctx = get();
    const owner = await createUser(ctx);
    const ws = await createPersonalWorkspace(ctx, owner.id);
    expectOk(await admin(ctx, `/admin/v1/workspaces/${ws.id}/settings`, { limits: { activeKeys: 1 } }), 'ADMIN_WORKSPACES_SETTINGS');
    const first = expectOk(await admin(ctx, '/admin/v1/keys', keyBody(owner.id, [ws.id])), 'ADMIN_KEYS_CREATE');
    assertError(await admin(ctx, '/admin/v1/keys', keyBody(owner.id, [ws.id])), 409, 'ACTIVE_KEY_LIMIT');
    expectOk(await admin(ctx, `/admin/v1/keys/${first.key.id}/revoke`), 'ADMIN_KEYS_REVOKE');
    expectOk(await admin(ctx, '/admin/v1/keys', keyBody(owner.id, [ws.id])), 'ADMIN_KEYS_CREATE');
  });

  test('keys: revoke returns {key} with revokedAt; the secret then fails with 401; revoking again keeps the first time (ADMIN_KEYS_REVOKE)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    assert.equal((await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).statusCode, 200);
    const revoked = expectOk(await admin(ctx, `/admin/v1/keys/${t.key.id}/revoke`), 'ADMIN_KEYS_REVOKE');
    assert.equal(revoked.key.id, t.key.id);
    assert.equal(revoked.key.revokedAt, new Date(ctx.clock.now()).toISOString());
    assertError(await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id }), 401, 'UNAUTHENTICATED');
    ctx.clock.advance(5000);
    const again = expectOk(await admin(ctx, `/admin/v1/keys/${t.key.id}/revoke`, {}), 'ADMIN_KEYS_REVOKE');
    assert.equal(again.key.revokedAt, revoked.key.revokedAt);
    assertError(await admin(ctx, `/admin/v1/keys/${UNKNOWN_ID}/revoke`), 404, 'NOT_FOUND');
  });
});
