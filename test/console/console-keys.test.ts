/**
 * The console's workspaces and keys (issue 35) over HTTP: what a signed-in owner sees, the keys it
 * creates working on the public API and refused there once revoked, organization roles (a member
 * may not manage keys), CSRF protection of every change, and another user's workspace never
 * reachable through any console endpoint (404, like a workspace that does not exist).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as accounts from '../../src/modules/accounts/service.js';
import { call, describeEachDatabase, type TestContext } from '../support/harness.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { consoleCall, seedSignedInOrganization, signInAs, SMALL_KEY_BODY, type ConsoleLogin } from '../support/console.js';

const keysUrl = (workspaceId: string) => `/console/api/workspaces/${workspaceId}/keys`;

async function createConsoleKey(ctx: TestContext, login: ConsoleLogin, workspaceId: string, body: object = SMALL_KEY_BODY) {
  const res = await consoleCall(ctx, login, 'POST', keysUrl(workspaceId), { body });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { key: { id: string; prefix: string }; secret: string };
}

describeEachDatabase('console keys', (get) => {
  test('an owner creates a key with every option; the secret works once shown and never again appears', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, t.user.id);
    const expiresAt = new Date(ctx.clock.now() + 7 * 24 * 3600 * 1000).toISOString();
    const body = {
      scopes: ['workspaces:read', 'usage:read'],
      operations: ['link.preview', 'chat.generate'],
      transports: ['rest', 'mcp'],
      expiresAt,
      ipRanges: ['127.0.0.0/8', '::1/128'],
      budgets: { dailyMillicents: 1000, monthlyMillicents: 20000 },
    };
    const created = await consoleCall(ctx, login, 'POST', keysUrl(t.workspace.id), { body });
    assert.equal(created.statusCode, 200, created.body);
    const { key, secret } = created.json().data;
    assert.equal(created.json().code, 'CONSOLE_KEYS_CREATE');
    assert.match(secret, /^wask_/);
    assert.doesNotMatch(secret, /^wask_test_/);
    assert.equal(key.mode, 'live', 'live unless test is chosen');
    assert.equal(key.userId, t.user.id);
    assert.deepEqual(key.workspaceIds, [t.workspace.id]);
    assert.deepEqual(key.scopes, body.scopes);
    assert.deepEqual(key.transports, body.transports);
    assert.deepEqual(key.ipRanges, body.ipRanges);
    assert.equal(key.expiresAt, expiresAt);
    assert.deepEqual(key.budgets, { dailyMillicents: 1000, weeklyMillicents: null, monthlyMillicents: 20000 });

    const api = await call(ctx, 'GET', '/v1/workspaces', { secret, workspaceId: t.workspace.id, remoteAddress: '127.0.0.1' });
    assert.equal(api.statusCode, 200, api.body);
    const list = await consoleCall(ctx, login, 'GET', keysUrl(t.workspace.id));
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json().data.items.map((k: { id: string }) => k.id).sort(), [key.id, t.key.id].sort());
    assert.equal(list.body.includes(secret), false, 'the list never carries a secret');
    assert.equal(/secretHash|secret_hash|"secret"/.test(list.body), false);
  });

  test('revoking in the console makes the public API refuse the key (401); rolling gives a new secret', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, t.user.id);
    const a = await createConsoleKey(ctx, login, t.workspace.id);
    assert.equal((await call(ctx, 'GET', '/v1/workspaces', { secret: a.secret, workspaceId: t.workspace.id })).statusCode, 200);
    const revoked = await consoleCall(ctx, login, 'POST', `${keysUrl(t.workspace.id)}/${a.key.id}/revoke`);
    assert.equal(revoked.statusCode, 200, revoked.body);
    assert.ok(revoked.json().data.key.revokedAt);
    assert.equal((await call(ctx, 'GET', '/v1/workspaces', { secret: a.secret, workspaceId: t.workspace.id })).statusCode, 401);
    const again = await consoleCall(ctx, login, 'POST', `${keysUrl(t.workspace.id)}/${a.key.id}/roll`, { body: { overlapSeconds: 0 } });
    assert.equal(again.statusCode, 409, 'a revoked key cannot be rolled');

    const b = await createConsoleKey(ctx, login, t.workspace.id);
    const rolled = await consoleCall(ctx, login, 'POST', `${keysUrl(t.workspace.id)}/${b.key.id}/roll`, { body: { overlapSeconds: 0 } });
    assert.equal(rolled.statusCode, 200, rolled.body);
    const fresh = rolled.json().data.secret as string;
    assert.notEqual(fresh, b.secret);
    assert.equal((await call(ctx, 'GET', '/v1/workspaces', { secret: fresh, workspaceId: t.workspace.id })).statusCode, 200);
    assert.equal((await call(ctx, 'GET', '/v1/workspaces', { secret: b.secret, workspaceId: t.workspace.id })).statusCode, 401);
  });

  test('updating a key in the console changes what the public API lets it do', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, t.user.id);
    const a = await createConsoleKey(ctx, login, t.workspace.id);
    const url = `${keysUrl(t.workspace.id)}/${a.key.id}/update`;
    const changed = await consoleCall(ctx, login, 'POST', url, { body: { scopes: ['jobs:read'], budgets: { dailyMillicents: 500 } } });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal(changed.json().code, 'CONSOLE_KEYS_UPDATE');
    assert.deepEqual(changed.json().data.key.scopes, ['jobs:read']);
    assert.equal(changed.json().data.key.budgets.dailyMillicents, 500);
    const refused = await call(ctx, 'GET', '/v1/workspaces', { secret: a.secret, workspaceId: t.workspace.id });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().code, 'FORBIDDEN_SCOPE');
    for (const body of [{}, { scopes: [] }, { scopes: ['nope'] }, { userId: t.user.id }]) {
      const bad = await consoleCall(ctx, login, 'POST', url, { body });
      assert.equal(bad.statusCode, 400, JSON.stringify(body));
    }
  });

  test('bad key bodies are 400 with the documented code, never 500', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, t.user.id);
    const bad: object[] = [
      {},
      { ...SMALL_KEY_BODY, scopes: [] },
      { ...SMALL_KEY_BODY, scopes: ['everything'] },
      { ...SMALL_KEY_BODY, operations: ['no.such'] },
      { ...SMALL_KEY_BODY, transports: ['smtp'] },
      { ...SMALL_KEY_BODY, ipRanges: ['10.0.0.0/33'] },
      { ...SMALL_KEY_BODY, expiresAt: new Date(ctx.clock.now() - 1000).toISOString() },
      { ...SMALL_KEY_BODY, budgets: { dailyMillicents: 0 } },
      { ...SMALL_KEY_BODY, userId: t.user.id },
      { ...SMALL_KEY_BODY, workspaceIds: [t.workspace.id] },
      { ...SMALL_KEY_BODY, mode: 'sandbox' },
      { ...SMALL_KEY_BODY, mode: null },
    ];
    for (const body of bad) {
      const res = await consoleCall(ctx, login, 'POST', keysUrl(t.workspace.id), { body });
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
      assert.equal(res.json().code, 'INVALID_REQUEST');
    }
    const roll = await consoleCall(ctx, login, 'POST', `${keysUrl(t.workspace.id)}/${t.key.id}/roll`, { body: { overlapSeconds: -1 } });
    assert.equal(roll.statusCode, 400);
  });

  test('every change needs the console origin and the session CSRF token', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, t.user.id);
    const other = await signInAs(ctx, (await seedTenant(ctx.deps)).user.id);
    const changes: [string, object | undefined][] = [
      [keysUrl(t.workspace.id), SMALL_KEY_BODY],
      [`${keysUrl(t.workspace.id)}/${t.key.id}/revoke`, undefined],
      [`${keysUrl(t.workspace.id)}/${t.key.id}/roll`, { overlapSeconds: 0 }],
      [`${keysUrl(t.workspace.id)}/${t.key.id}/update`, { scopes: ['jobs:read'] }],
      [`/console/api/workspaces/${t.workspace.id}/test-credits`, { amountMillicents: 1_000 }],
      ['/console/api/sign-out', undefined],
    ];
    for (const [url, body] of changes) {
      for (const [origin, expected] of [[null, 'FORBIDDEN_ORIGIN'], ['https://evil.example', 'FORBIDDEN_ORIGIN'], ['null', 'FORBIDDEN_ORIGIN']] as const) {
        const res = await consoleCall(ctx, login, 'POST', url, { body, origin });
        assert.equal(res.statusCode, 403, `${url} origin ${origin}`);
        assert.equal(res.json().code, expected);
      }
      for (const csrfToken of [null, 'x'.repeat(64), other.csrfToken]) {
        const res = await consoleCall(ctx, login, 'POST', url, { body, csrfToken });
        assert.equal(res.statusCode, 403, `${url} csrf ${csrfToken}`);
        assert.equal(res.json().code, 'FORBIDDEN');
      }
    }
    assert.equal((await call(ctx, 'GET', '/v1/workspaces', { secret: t.secret, workspaceId: t.workspace.id })).statusCode, 200, 'nothing was revoked or rolled');
    assert.equal((await consoleCall(ctx, login, 'GET', `/console/api/workspaces/${t.workspace.id}/balance?mode=test`)).json().data.totalMillicents, 0, 'no test credits were added');
    assert.equal((await consoleCall(ctx, login, 'GET', '/console/api/me')).statusCode, 200, 'nor signed out');
  });

  test('organization roles: owners and admins manage keys, a member sees the workspace but may not', async () => {
    const ctx = get();
    const o = await seedSignedInOrganization(ctx);
    const me = await consoleCall(ctx, o.member, 'GET', '/console/api/me');
    const seen = me.json().data.workspaces.find((w: { id: string }) => w.id === o.workspace.id);
    assert.deepEqual({ role: seen.role, canManageKeys: seen.canManageKeys, organizationName: seen.organizationName }, { role: 'member', canManageKeys: false, organizationName: 'Acme' });
    const ownerView = (await consoleCall(ctx, o.owner, 'GET', '/console/api/me')).json().data.workspaces[0];
    assert.deepEqual([ownerView.role, ownerView.canManageKeys], ['owner', true]);

    const adminKey = await createConsoleKey(ctx, o.admin, o.workspace.id);
    const ownerKey = await createConsoleKey(ctx, o.owner, o.workspace.id);
    for (const [method, url, body] of [
      ['POST', keysUrl(o.workspace.id), SMALL_KEY_BODY],
      ['GET', keysUrl(o.workspace.id), undefined],
      ['POST', `${keysUrl(o.workspace.id)}/${adminKey.key.id}/revoke`, undefined],
      ['POST', `${keysUrl(o.workspace.id)}/${adminKey.key.id}/roll`, { overlapSeconds: 0 }],
      ['POST', `${keysUrl(o.workspace.id)}/${adminKey.key.id}/update`, { scopes: ['jobs:read'] }],
    ] as const) {
      const res = await consoleCall(ctx, o.member, method, url, { body });
      assert.equal(res.statusCode, 403, `member ${method} ${url}: ${res.body}`);
      assert.equal(res.json().code, 'FORBIDDEN');
    }
    const byOwner = await consoleCall(ctx, o.owner, 'POST', `${keysUrl(o.workspace.id)}/${adminKey.key.id}/revoke`);
    assert.equal(byOwner.statusCode, 200, 'an owner revokes an admin’s key of the workspace');
    assert.equal((await call(ctx, 'GET', '/v1/workspaces', { secret: ownerKey.secret, workspaceId: o.workspace.id })).statusCode, 200);

    await accounts.setMember(ctx.deps, o.org.id, { userId: (await consoleCall(ctx, o.admin, 'GET', '/console/api/me')).json().data.user.id, role: 'member' });
    const demoted = await consoleCall(ctx, o.admin, 'POST', keysUrl(o.workspace.id), { body: SMALL_KEY_BODY });
    assert.equal(demoted.statusCode, 403, 'a role change takes effect at once');
  });

  test('a key that also includes a workspace the user does not manage cannot be changed from the console', async () => {
    const ctx = get();
    const o = await seedSignedInOrganization(ctx);
    const adminId = (await consoleCall(ctx, o.admin, 'GET', '/console/api/me')).json().data.user.id as string;
    const personal = await accounts.createWorkspace(ctx.deps, { name: 'Admin personal', plan: 'pro', ownerUserId: adminId });
    const shared = await seedKey(ctx.deps, adminId, [o.workspace.id, personal.id]);
    const res = await consoleCall(ctx, o.owner, 'POST', `${keysUrl(o.workspace.id)}/${shared.key.id}/revoke`);
    assert.equal(res.statusCode, 403, res.body);
    assert.equal((await consoleCall(ctx, o.admin, 'POST', `${keysUrl(o.workspace.id)}/${shared.key.id}/revoke`)).statusCode, 200, 'its owner, who manages both, may');
  });

  test("another user's workspace and keys are never reachable: every console endpoint answers 404", async () => {
    const ctx = get();
    const mine: Tenant = await seedTenant(ctx.deps);
    const theirs: Tenant = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, mine.user.id);
    const foreignKey = `${keysUrl(theirs.workspace.id)}/${theirs.key.id}`;
    const missing = '0190a000-0000-7000-8000-000000000000';
    const probes: ['GET' | 'POST', string, object | undefined][] = [
      ['GET', keysUrl(theirs.workspace.id), undefined],
      ['POST', keysUrl(theirs.workspace.id), SMALL_KEY_BODY],
      ['POST', `${foreignKey}/revoke`, undefined],
      ['POST', `${foreignKey}/roll`, { overlapSeconds: 0 }],
      ['POST', `${foreignKey}/update`, { scopes: ['jobs:read'] }],
      ['POST', `/console/api/workspaces/${theirs.workspace.id}/test-credits`, { amountMillicents: 1_000 }],
      // Their key through my workspace's path, and an id that exists nowhere.
      ['POST', `${keysUrl(mine.workspace.id)}/${theirs.key.id}/revoke`, undefined],
      ['POST', `${keysUrl(mine.workspace.id)}/${theirs.key.id}/roll`, { overlapSeconds: 0 }],
      ['POST', `${keysUrl(mine.workspace.id)}/${theirs.key.id}/update`, { scopes: ['jobs:read'] }],
      ['GET', keysUrl(missing), undefined],
      ['POST', `${keysUrl(mine.workspace.id)}/${missing}/revoke`, undefined],
    ];
    for (const [method, url, body] of probes) {
      const res = await consoleCall(ctx, login, method, url, { body });
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
      assert.equal(res.json().code, 'NOT_FOUND');
      assert.equal(res.body.includes(theirs.key.prefix), false);
    }
    const me = await consoleCall(ctx, login, 'GET', '/console/api/me');
    assert.equal(me.body.includes(theirs.workspace.id), false);
    assert.equal((await call(ctx, 'GET', '/v1/workspaces', { secret: theirs.secret, workspaceId: theirs.workspace.id })).statusCode, 200, 'their key still works');
  });
});
