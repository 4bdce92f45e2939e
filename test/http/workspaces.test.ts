/**
 * Workspaces and keys (spec "Workspace" resource, GET /v1/workspaces, Authentication 2 and 4):
 * the list shows exactly the workspaces included in the key that its owner still manages, and
 * workspace authorization is re-checked on every request, so a lost organization role takes
 * effect on the very next request.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { Deps } from '../../src/deps.js';
import * as accounts from '../../src/modules/accounts/service.js';
import { admin, call, describeEachDatabase, type TestContext } from '../support/harness.js';
import { seedKey, seedTenant, uniqueEmail, keyBody } from '../support/seed.js';
import { assertError, assertOk } from '../support/assertions.js';
import { checkRefusals } from '../support/openapi-responses.js';

type Res = LightMyRequestResponse;


const usage = (ctx: TestContext, secret: string, workspaceId: string) => call(ctx, 'GET', '/v1/usage', { secret, workspaceId });

async function newUser(deps: Deps) {
  return accounts.createUser(deps, { email: uniqueEmail(), name: 'User' });
}


function randomUuid(): string {
  return `00000000-0000-4000-8000-${randomBytes(6).toString('hex')}`;
}

describeEachDatabase('workspaces', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  describe('re-authorization on every request', () => {
    async function orgSetup(ctx: TestContext, role: 'admin' | 'owner' = 'admin') {
      const owner = await newUser(ctx.deps);
      const member = await newUser(ctx.deps);
      const org = await accounts.createOrganization(ctx.deps, { name: 'Acme', ownerUserId: owner.id });
      const orgWs = await accounts.createWorkspace(ctx.deps, { name: 'Acme shared', plan: 'starter', organizationId: org.id });
      const personal = await accounts.createWorkspace(ctx.deps, { name: 'Personal', plan: 'free', ownerUserId: member.id });
      await accounts.setMember(ctx.deps, org.id, { userId: member.id, role });
      const { key, secret } = await seedKey(ctx.deps, member.id, [orgWs.id, personal.id]);
      return { owner, member, org, orgWs, personal, key, secret };
    }

    async function listIds(ctx: TestContext, secret: string, workspaceId: string): Promise<string[]> {
      const body = assertOk(await call(ctx, 'GET', '/v1/workspaces', { secret, workspaceId }));
      return body.data.items.map((w: { id: string }) => w.id).sort();
    }

    test('organization workspace: usable while the key owner is an org admin; demoted to member → the very next request is 403 FORBIDDEN_WORKSPACE and the list drops it', async () => {
      const ctx = get();
      const s = await orgSetup(ctx);
      assertOk(await usage(ctx, s.secret, s.orgWs.id));
      assert.deepEqual(await listIds(ctx, s.secret, s.orgWs.id), [s.orgWs.id, s.personal.id].sort());

      await accounts.setMember(ctx.deps, s.org.id, { userId: s.member.id, role: 'member' });
      assertError(await usage(ctx, s.secret, s.orgWs.id), 403, 'FORBIDDEN_WORKSPACE');
      assertError(await call(ctx, 'GET', '/v1/workspaces', { secret: s.secret, workspaceId: s.orgWs.id }), 403, 'FORBIDDEN_WORKSPACE');
      assert.deepEqual(await listIds(ctx, s.secret, s.personal.id), [s.personal.id]);

      await accounts.setMember(ctx.deps, s.org.id, { userId: s.member.id, role: 'admin' });
      assertOk(await usage(ctx, s.secret, s.orgWs.id));
    });

    test('organization workspace: after removeMember the very next request is 403 FORBIDDEN_WORKSPACE', async () => {
      const ctx = get();
      const s = await orgSetup(ctx);
      assertOk(await usage(ctx, s.secret, s.orgWs.id));
      await accounts.removeMember(ctx.deps, s.org.id, s.member.id);
      assertError(await usage(ctx, s.secret, s.orgWs.id), 403, 'FORBIDDEN_WORKSPACE');
      assert.deepEqual(await listIds(ctx, s.secret, s.personal.id), [s.personal.id]);
    });

    test('key creation: refused for another user\'s personal workspace, for an org where the user is only a member, and for unknown workspaces', async () => {
      const ctx = get();
      const s = await orgSetup(ctx);
      const stranger = await seedTenant(ctx.deps);
      assertError(await admin(ctx, '/admin/v1/keys', keyBody(s.member.id, [stranger.workspace.id])), 403, 'FORBIDDEN');
      assertError(await admin(ctx, '/admin/v1/keys', keyBody(s.member.id, [s.personal.id, stranger.workspace.id])), 403, 'FORBIDDEN');
      await accounts.setMember(ctx.deps, s.org.id, { userId: s.member.id, role: 'member' });
      assertError(await admin(ctx, '/admin/v1/keys', keyBody(s.member.id, [s.orgWs.id])), 403, 'FORBIDDEN');
      assertError(await admin(ctx, '/admin/v1/keys', keyBody(s.member.id, [randomUuid()])), 404, 'NOT_FOUND');
      // Nothing half-made: the refused attempts created no key.
      const keys = await ctx.deps.db.selectFrom('api_keys').select('id').where('user_id', '=', s.member.id).execute();
      assert.deepEqual(keys.map((k) => k.id), [s.key.id]);
    });
  });

  describe('GET /v1/workspaces', () => {
    test('GET /v1/workspaces: lists the personal and organization workspaces included in the key with id, name, organizationId, role, plan — and no others', async () => {
      const ctx = get();
      const user = await newUser(ctx.deps);
      const boss = await newUser(ctx.deps);
      const personal = await accounts.createWorkspace(ctx.deps, { name: 'Mine', plan: 'free', ownerUserId: user.id });
      const notInKey = await accounts.createWorkspace(ctx.deps, { name: 'Mine too', plan: 'pro', ownerUserId: user.id });
      const ownOrg = await accounts.createOrganization(ctx.deps, { name: 'Own org', ownerUserId: user.id });
      const ownOrgWs = await accounts.createWorkspace(ctx.deps, { name: 'Own org ws', plan: 'pro', organizationId: ownOrg.id });
      const adminOrg = await accounts.createOrganization(ctx.deps, { name: 'Boss org', ownerUserId: boss.id });
      await accounts.setMember(ctx.deps, adminOrg.id, { userId: user.id, role: 'admin' });
      const adminOrgWs = await accounts.createWorkspace(ctx.deps, { name: 'Boss org ws', plan: 'starter', organizationId: adminOrg.id });
      await accounts.createWorkspace(ctx.deps, { name: 'Boss org other', plan: 'starter', organizationId: adminOrg.id });
      const strangers = await seedTenant(ctx.deps);
      const { secret } = await seedKey(ctx.deps, user.id, [personal.id, ownOrgWs.id, adminOrgWs.id]);

      const body = assertOk(await call(ctx, 'GET', '/v1/workspaces', { secret, workspaceId: personal.id }));
      assert.equal(body.code, 'PUBLIC_WORKSPACES_LIST');
      const items = [...body.data.items].sort((a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id));
      const expected = [
        { id: personal.id, name: 'Mine', organizationId: null, role: 'owner', plan: 'free' },
        { id: ownOrgWs.id, name: 'Own org ws', organizationId: ownOrg.id, role: 'owner', plan: 'pro' },
        { id: adminOrgWs.id, name: 'Boss org ws', organizationId: adminOrg.id, role: 'admin', plan: 'starter' },
      ].sort((a, b) => a.id.localeCompare(b.id));
      assert.deepEqual(items, expected);
      assert.equal(body.data.items.some((w: { id: string }) => w.id === notInKey.id || w.id === strangers.workspace.id), false);
      assert.deepEqual(Object.keys(body.data), ['items']);
      // The same list whichever included workspace the header selects.
      const fromOrg = assertOk(await call(ctx, 'GET', '/v1/workspaces', { secret, workspaceId: adminOrgWs.id }));
      assert.equal(fromOrg.data.items.length, 3);
    });

    test('GET /v1/workspaces: requires X-Service-Workspace naming an included workspace (missing → 400, not included → 403)', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const other = await seedTenant(ctx.deps);
      assertError(await call(ctx, 'GET', '/v1/workspaces', { secret: t.secret }), 400, 'INVALID_REQUEST');
      assertError(await call(ctx, 'GET', '/v1/workspaces', { secret: t.secret, workspaceId: '' }), 400, 'INVALID_REQUEST');
      assertError(await call(ctx, 'GET', '/v1/workspaces', { secret: t.secret, workspaceId: `${t.workspace.id},${t.workspace.id}` }), 400, 'INVALID_REQUEST');
      assertError(await call(ctx, 'GET', '/v1/workspaces', { secret: t.secret, workspaceId: other.workspace.id }), 403, 'FORBIDDEN_WORKSPACE');
      // The header is case-insensitive as UUIDs are.
      assertOk(await call(ctx, 'GET', '/v1/workspaces', { secret: t.secret, workspaceId: t.workspace.id.toUpperCase() }));
    });

    test('GET /v1/workspaces: at most 100 items — a key holds 1 to 100 workspaces, a 100-workspace key lists all 100', async () => {
      const ctx = get();
      const user = await newUser(ctx.deps);
      const ids: string[] = [];
      for (let i = 0; i < 101; i++) ids.push((await accounts.createWorkspace(ctx.deps, { name: `W${i}`, plan: 'free', ownerUserId: user.id })).id);
      assertError(await admin(ctx, '/admin/v1/keys', keyBody(user.id, ids)), 400, 'INVALID_REQUEST');
      await assert.rejects(seedKey(ctx.deps, user.id, ids), (err: { code?: string }) => err.code === 'INVALID_REQUEST');
      await assert.rejects(seedKey(ctx.deps, user.id, []), (err: { code?: string }) => err.code === 'INVALID_REQUEST');
      const { secret } = await seedKey(ctx.deps, user.id, ids.slice(0, 100));
      const body = assertOk(await call(ctx, 'GET', '/v1/workspaces', { secret, workspaceId: ids[0]! }));
      assert.equal(body.data.items.length, 100);
      assert.deepEqual(body.data.items.map((w: { id: string }) => w.id).sort(), ids.slice(0, 100).sort());
    });
  });
});
