/**
 * The oracle of test/admin/admin-fuzz.test.ts: the answer a generated admin request must get,
 * predicted from the database state before it (`predict`), what an accepted request must have done
 * and nothing else (`verifyAccepted`, row diffs per table; a created key authenticates with exactly
 * what it was given), and the world the requests run in (users, organizations, workspaces).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { sha256Hex } from '../../src/lib/crypto.js';
import { normaliseHostname } from '../../src/modules/domains/service.js';
import { readProviderKey } from '../../src/modules/provider-keys/service.js';
import { PLAN_DEFAULTS } from '../../src/modules/usage/plans.js';
import { admin, call, type TestContext } from './harness.js';
import { seedTenant, type Tenant } from './seed.js';
import { activeKeys, assertChanges, assertEnvelope, canon, diff, ids, limitsOf, manages, memberRole, num, owners, rowOf, snapshot, sumRemaining, type Diff, type Snapshot } from './admin-state.js';
import { GOOD_RANGES, MAX_SAFE, PLANS, PROBE_ADDRESSES, SECRET_RE, type AdminPlan, type Made } from './admin-requests.js';
import { LIVE_OPERATIONS } from './live-backend.js';

// ---- the oracle --------------------------------------------------------------------------------

/** What the answer must be for a request whose values are all certainly valid: 'OK' or an error code. */
export function predict(plan: AdminPlan, m: Made, s: Snapshot, ctx: TestContext, txtPublished: boolean): string {
  const b = m.body ?? {};
  const now = ctx.clock.now();
  switch (plan.ep) {
    case 'users':
      return [...s.users.values()].some((u) => u.email === String(b.email).trim().toLowerCase()) ? 'CONFLICT' : 'OK';
    case 'orgs':
      return rowOf(s, 'users', b.ownerUserId) ? 'OK' : 'NOT_FOUND';
    case 'membersSet': {
      const [org] = m.pathIds;
      if (!rowOf(s, 'organizations', org) || !rowOf(s, 'users', b.userId)) return 'NOT_FOUND';
      if (memberRole(s, org!, b.userId) === 'owner' && b.role !== 'owner' && owners(s, org!) <= 1) return 'CONFLICT';
      return 'OK';
    }
    case 'membersRemove': {
      const [org, user] = m.pathIds;
      if (!rowOf(s, 'organizations', org)) return 'NOT_FOUND';
      const role = memberRole(s, org!, user!);
      if (!role) return 'NOT_FOUND';
      return role === 'owner' && owners(s, org!) <= 1 ? 'CONFLICT' : 'OK';
    }
    case 'workspaces':
      if (b.ownerUserId !== undefined) return rowOf(s, 'users', b.ownerUserId) ? 'OK' : 'NOT_FOUND';
      return rowOf(s, 'organizations', b.organizationId) ? 'OK' : 'NOT_FOUND';
    case 'settings':
      return rowOf(s, 'workspaces', m.pathIds[0]) ? 'OK' : 'NOT_FOUND';
    case 'credits': {
      const ws = rowOf(s, 'workspaces', m.pathIds[0]);
      if (!ws) return 'NOT_FOUND';
      return sumRemaining(s, String(ws.id)) + Number(b.amountMillicents) > MAX_SAFE ? 'INVALID_REQUEST' : 'OK';
    }
    case 'domainsAdd':
      return rowOf(s, 'workspaces', m.pathIds[0]) ? 'OK' : 'NOT_FOUND';
    case 'domainsVerify': {
      const ws = rowOf(s, 'workspaces', m.pathIds[0]);
      const host = normaliseHostname(m.hostname!);
      if (!ws || !s.domains.has(`${ws.id}|${host}`)) return 'NOT_FOUND';
      if (b.method === 'operator' || (b.method === 'dns' && txtPublished)) return 'OK';
      return 'DOMAIN_NOT_VERIFIED';
    }
    case 'domainsRemove': {
      const ws = rowOf(s, 'workspaces', m.pathIds[0]);
      return ws && s.domains.has(`${ws.id}|${normaliseHostname(m.hostname!)}`) ? 'OK' : 'NOT_FOUND';
    }
    case 'providerKeys':
      return rowOf(s, 'workspaces', m.pathIds[0]) ? 'OK' : 'NOT_FOUND';
    case 'keysCreate': {
      if (!rowOf(s, 'users', b.userId)) return 'NOT_FOUND';
      for (const id of [...new Set((b.workspaceIds as string[]).map(canon))].sort()) {
        const ws = rowOf(s, 'workspaces', id);
        if (!ws) return 'NOT_FOUND';
        if (!manages(s, b.userId, ws)) return 'FORBIDDEN';
        if (activeKeys(s, id, now) >= limitsOf(ws).activeKeys!) return 'ACTIVE_KEY_LIMIT';
      }
      return 'OK';
    }
    case 'keysRevoke':
      return rowOf(s, 'api_keys', m.pathIds[0]) ? 'OK' : 'NOT_FOUND';
    case 'notifications':
      return rowOf(s, 'workspaces', m.pathIds[0]) ? 'OK' : 'NOT_FOUND';
  }
}

// ---- what an accepted request must have done ---------------------------------------------------------

export interface Fuzz {
  ctx: TestContext;
  /** Provider-key markers and key secrets that must never be seen in a later response. */
  secrets: Set<string>;
  stats: Record<string, number>;
}

const iso = (ms: unknown) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());

export async function verifyAccepted(f: Fuzz, plan: AdminPlan, m: Made, data: any, before: Snapshot, after: Snapshot): Promise<void> {
  const { ctx } = f;
  const b = m.body ?? {};
  const d = diff(before, after);
  const nowIso = new Date(ctx.clock.now()).toISOString();
  switch (plan.ep) {
    case 'users': {
      assertChanges(d, { users: { added: 1 } });
      const row = d.users.added[0]!;
      assert.deepEqual(data, { user: { id: row.id, email: b.email.trim().toLowerCase(), name: b.name.trim(), createdAt: nowIso } });
      assert.equal(row.email, data.user.email);
      assert.equal(row.name, data.user.name, 'the stored name is the name answered');
      return;
    }
    case 'orgs': {
      assertChanges(d, { organizations: { added: 1 }, organization_members: { added: 1 } });
      const org = d.organizations.added[0]!;
      assert.deepEqual(data, { organization: { id: org.id, name: b.name.trim(), createdAt: nowIso } });
      assert.equal(org.name, data.organization.name);
      const member = d.organization_members.added[0]!;
      assert.deepEqual([member.organization_id, member.user_id, member.role], [org.id, canon(b.ownerUserId), 'owner'], 'ownerUserId becomes its owner');
      return;
    }
    case 'membersSet': {
      const [org] = m.pathIds.map(canon);
      assertChanges(d, { organization_members: { added: [0, 1], changed: [0, 1] } });
      assert.deepEqual(data, { member: { organizationId: org, userId: canon(b.userId), role: b.role } });
      assert.equal(after.organization_members.get(`${org}|${canon(b.userId)}`)?.role, b.role);
      return;
    }
    case 'membersRemove': {
      const [org, user] = m.pathIds.map(canon);
      assertChanges(d, { organization_members: { removed: 1 } });
      assert.equal(d.organization_members.removed[0]!.user_id, user);
      assert.equal(d.organization_members.removed[0]!.organization_id, org);
      assert.deepEqual(data, { removed: true });
      return;
    }
    case 'workspaces': {
      assertChanges(d, { workspaces: { added: 1 } });
      const ws = d.workspaces.added[0]!;
      assert.deepEqual(data, {
        workspace: { id: ws.id, name: b.name.trim(), plan: b.plan, ownerUserId: b.ownerUserId === undefined ? null : canon(b.ownerUserId), organizationId: b.organizationId === undefined ? null : canon(b.organizationId), lowCreditsMillicents: b.lowCreditsMillicents ?? null, createdAt: nowIso },
      });
      assert.deepEqual([ws.name, ws.plan, ws.owner_user_id, ws.organization_id], [data.workspace.name, b.plan, data.workspace.ownerUserId, data.workspace.organizationId]);
      return;
    }
    case 'settings': {
      const id = canon(m.pathIds[0]);
      assertChanges(d, { workspaces: { changed: [0, 1] } });
      const old = before.workspaces.get(id)!;
      const overrides: Record<string, number> = JSON.parse(String(old.limits_json));
      for (const [k, v] of Object.entries(b.limits ?? {})) {
        if (v === null) delete overrides[k];
        else overrides[k] = v as number;
      }
      const budgets = { dailyMillicents: num(old.budget_daily_mc), weeklyMillicents: num(old.budget_weekly_mc), monthlyMillicents: num(old.budget_monthly_mc), ...(b.budgets ?? {}) };
      const plan = b.plan ?? old.plan;
      assert.deepEqual(data.limits, { ...PLAN_DEFAULTS[plan as (typeof PLANS)[number]], ...overrides }, 'limits: plan defaults with the overrides merged (null = default)');
      assert.deepEqual(data.budgets, budgets, 'budgets merged per period (null removes one)');
      assert.equal(data.workspace.id, id);
      assert.equal(data.workspace.plan, plan);
      const row = after.workspaces.get(id)!;
      assert.equal(row.plan, plan);
      assert.deepEqual(JSON.parse(String(row.limits_json)), overrides);
      assert.deepEqual([num(row.budget_daily_mc), num(row.budget_weekly_mc), num(row.budget_monthly_mc)], [budgets.dailyMillicents, budgets.weeklyMillicents, budgets.monthlyMillicents]);
      return;
    }
    case 'credits': {
      const ws = canon(m.pathIds[0]);
      assertChanges(d, { credit_allocations: { added: 1 }, credit_transactions: { added: 1 } });
      const a = d.credit_allocations.added[0]!;
      const t = d.credit_transactions.added[0]!;
      const expiresAt = b.expiresAt == null ? null : new Date(Date.parse(b.expiresAt)).toISOString();
      assert.deepEqual(data, {
        allocation: { id: a.id, workspaceId: ws, livemode: true, amountMillicents: b.amountMillicents, remainingMillicents: b.amountMillicents, expiresAt, provenance: b.provenance ?? 'purchase', createdAt: nowIso },
      });
      assert.deepEqual([a.workspace_id, Number(a.amount_mc), Number(a.remaining_mc), iso(a.expires_at_ms), a.provenance], [ws, b.amountMillicents, b.amountMillicents, expiresAt, b.provenance ?? 'purchase']);
      assert.deepEqual([t.workspace_id, t.type, Number(t.amount_mc), t.allocation_id], [ws, 'purchase', b.amountMillicents, a.id], 'one purchase transaction of that amount');
      return;
    }
    case 'domainsAdd': {
      const ws = canon(m.pathIds[0]);
      const host = normaliseHostname(b.hostname);
      const existed = before.domains.get(`${ws}|${host}`);
      assertChanges(d, { domains: { added: existed ? 0 : 1 } });
      const row = after.domains.get(`${ws}|${host}`)!;
      assert.ok(row, 'the hostname is stored in its normal form');
      assert.deepEqual(data.domain, {
        workspaceId: ws,
        hostname: host,
        status: row.status,
        verificationToken: row.verification_token,
        verifiedMethod: row.verified_method,
        verifiedAt: iso(row.verified_at_ms),
        createdAt: iso(row.created_at_ms),
      });
      if (!existed) assert.equal(row.status, 'pending');
      assert.match(String(row.verification_token), /^service-verify=[A-Za-z0-9_-]+$/);
      return;
    }
    case 'domainsVerify': {
      const ws = canon(m.pathIds[0]);
      const host = normaliseHostname(m.hostname!);
      const moved = [...before.domains.values()].filter((r) => r.hostname === host && r.workspace_id !== ws && r.status === 'verified').length;
      assertChanges(d, { domains: { changed: [moved, moved + 1] } });
      for (const c of d.domains.changed) {
        if (c.after.workspace_id === ws) continue;
        assert.equal(c.after.hostname, host);
        assert.equal(c.after.status, 'pending', 'verifying elsewhere moves the hostname');
      }
      const row = after.domains.get(`${ws}|${host}`)!;
      assert.deepEqual([row.status, row.verified_method, num(row.verified_at_ms)], ['verified', b.method, ctx.clock.now()]);
      assert.equal(data.domain.status, 'verified');
      assert.equal(data.domain.hostname, host);
      return;
    }
    case 'domainsRemove': {
      const ws = canon(m.pathIds[0]);
      assertChanges(d, { domains: { removed: 1 } });
      assert.deepEqual([d.domains.removed[0]!.workspace_id, d.domains.removed[0]!.hostname], [ws, normaliseHostname(m.hostname!)]);
      assert.deepEqual(data, { removed: true });
      return;
    }
    case 'providerKeys': {
      const ws = canon(m.pathIds[0]);
      const existed = [...before.provider_keys.values()].find((r) => r.workspace_id === ws && r.provider === b.provider);
      assertChanges(d, { provider_keys: existed ? { changed: 1 } : { added: 1 } });
      assert.deepEqual(Object.keys(data.providerKey).sort(), ['createdAt', 'id', 'provider', 'updatedAt', 'workspaceId']);
      assert.deepEqual([data.providerKey.workspaceId, data.providerKey.provider], [ws, b.provider]);
      if (existed) assert.equal(data.providerKey.id, existed.id, 'setting a key again replaces it');
      const row = (existed ? after.provider_keys.get(String(existed.id)) : d.provider_keys.added[0])!;
      assert.equal(String(row.sealed_key).includes(b.apiKey), false, 'stored sealed, never as plaintext');
      assert.equal(await readProviderKey(ctx.deps, ws, b.provider), b.apiKey, 'the stored key opens to exactly the key sent');
      return;
    }
    case 'keysCreate':
      return verifyKeyCreated(f, b, data, d);
    case 'keysRevoke': {
      const id = canon(m.pathIds[0]);
      const old = before.api_keys.get(id)!;
      assertChanges(d, { api_keys: { changed: old.revoked_at_ms === null ? 1 : 0 } });
      assert.equal(data.key.id, id);
      assert.equal(data.key.revokedAt, old.revoked_at_ms === null ? nowIso : iso(old.revoked_at_ms), 'revoking again keeps the first time');
      assert.equal(num(after.api_keys.get(id)!.revoked_at_ms), Date.parse(data.key.revokedAt));
      return;
    }
    case 'notifications':
      assertChanges(d, {});
      assert.ok(Array.isArray(data.items));
      assert.ok(data.nextCursor === null || typeof data.nextCursor === 'string');
      return;
  }
}

/** A created key: stored as a hash, presented as given, and its secret works with exactly what it was given. */
async function verifyKeyCreated(f: Fuzz, b: any, data: any, d: Diff): Promise<void> {
  const { ctx } = f;
  const workspaceIds = [...new Set((b.workspaceIds as string[]).map(canon))].sort();
  assertChanges(d, { api_keys: { added: 1 }, api_key_workspaces: { added: workspaceIds.length } });
  const { key, secret } = data;
  assert.match(secret, SECRET_RE);
  const row = d.api_keys.added[0]!;
  assert.equal(row.id, key.id);
  assert.equal(row.secret_hash, sha256Hex(secret));
  assert.equal(JSON.stringify(row).includes(secret.slice(12)), false, 'the stored row holds no plaintext secret');
  assert.equal(key.prefix, secret.slice(0, 12));
  assert.deepEqual(d.api_key_workspaces.added.map((l) => l.workspace_id).sort(), workspaceIds);
  assert.deepEqual(
    { userId: key.userId, workspaceIds: key.workspaceIds, scopes: key.scopes, operations: key.operations, transports: key.transports, ipRanges: key.ipRanges, expiresAt: key.expiresAt, revokedAt: key.revokedAt },
    {
      userId: canon(b.userId),
      workspaceIds,
      scopes: b.scopes,
      operations: b.operations,
      transports: b.transports,
      ipRanges: b.ipRanges ?? [],
      expiresAt: b.expiresAt == null ? null : new Date(Date.parse(b.expiresAt)).toISOString(),
      revokedAt: null,
    },
  );
  assert.deepEqual(key.budgets, { dailyMillicents: null, weeklyMillicents: null, monthlyMillicents: null, ...(b.budgets ?? {}) });
  assert.equal(key.mode, 'live', 'a key without a mode is live');
  f.secrets.add(secret);

  // The secret on the public API, from an address inside its ranges (127.0.0.1 without ranges).
  const ranges: string[] = b.ipRanges ?? [];
  const inside = ranges.length === 0 ? '127.0.0.1' : PROBE_ADDRESSES.find((a) => ranges.some((r) => GOOD_RANGES[r]?.includes(a)));
  if (inside === undefined) return; // only unclear ranges: their meaning is not checked here
  const probe = (url: string, workspaceId: string, remoteAddress = inside) => call(ctx, 'GET', url, { secret, workspaceId, remoteAddress });
  const rest = (b.transports as string[]).includes('rest');
  const expect = async (res: LightMyRequestResponse, allowed: boolean, refusal: string) => {
    const body = assertEnvelope(res);
    assert.equal(res.body.includes(secret), false, 'no response shows the secret again');
    if (!allowed) return assert.equal(body.code, refusal, res.body);
    // Allowed: 200, or 429 when the fuzzed workspace limits leave no points (the limit comes after authorization).
    assert.ok(res.statusCode === 200 || body.code === 'RATE_LIMITED', `allowed request answered ${res.statusCode} ${res.body}`);
    return res.statusCode === 200 ? body.data : undefined;
  };
  const first = workspaceIds[0]!;
  const wsList = await expect(await probe('/v1/workspaces', first), rest && b.scopes.includes('workspaces:read'), rest ? 'FORBIDDEN_SCOPE' : 'FORBIDDEN_TRANSPORT');
  if (wsList) assert.deepEqual(wsList.items.map((w: { id: string }) => w.id).sort(), workspaceIds, 'exactly the workspaces given');
  const tools = await expect(await probe('/v1/tools', first), rest && b.scopes.includes('tools:read'), rest ? 'FORBIDDEN_SCOPE' : 'FORBIDDEN_TRANSPORT');
  if (tools) {
    const ops = tools.items.flatMap((t: { operations: { operationId: string }[] }) => t.operations.map((o) => o.operationId)).sort();
    // A live key runs what the deployment offers live keys (the suite's providers file,
    // support/live-backend.ts): exactly the operations given among those.
    assert.deepEqual(ops, [...b.operations].filter((op: string) => LIVE_OPERATIONS.includes(op)).sort(), 'exactly the operations given (among those offered to live keys)');
  }
  const elsewhere = ids(await snapshot(ctx), 'workspaces').find((id) => !workspaceIds.includes(id));
  if (elsewhere && rest) assert.equal(assertEnvelope(await probe('/v1/usage', elsewhere)).code, 'FORBIDDEN_WORKSPACE', 'no workspace outside the key');
  const outside = PROBE_ADDRESSES.find((a) => !ranges.some((r) => GOOD_RANGES[r]?.includes(a)));
  if (ranges.length > 0 && outside !== undefined && ranges.every((r) => GOOD_RANGES[r])) {
    assert.equal(assertEnvelope(await probe('/v1/usage', first, outside)).code, 'FORBIDDEN_IP', `refused from ${outside} outside ${ranges.join(', ')}`);
  }
  f.stats.keysProbed = (f.stats.keysProbed ?? 0) + 1;
}

// ---- the fixture -------------------------------------------------------------------------------------

interface AdminWorld {
  owner: string;
  orgOwner: string;
  orgAdmin: string;
  member: string;
  stranger: string;
  org: string;
  personal: string;
  team: string;
  tenant: Tenant;
}

function ok(res: LightMyRequestResponse, code: string): any {
  return assertEnvelope(res, code).data;
}

export async function buildAdminWorld(ctx: TestContext): Promise<AdminWorld> {
  const user = async (name: string) => ok(await admin(ctx, '/admin/v1/users', { email: `${name}-${randomBytes(4).toString('hex')}@example.com`, name }), 'ADMIN_USERS_CREATE').user.id as string;
  const owner = await user('owner');
  const orgOwner = await user('org-owner');
  const orgAdmin = await user('org-admin');
  const member = await user('member');
  const stranger = await user('stranger');
  const org = ok(await admin(ctx, '/admin/v1/organizations', { name: 'Acme', ownerUserId: orgOwner }), 'ADMIN_ORGANIZATIONS_CREATE').organization.id as string;
  ok(await admin(ctx, `/admin/v1/organizations/${org}/members`, { userId: orgAdmin, role: 'admin' }), 'ADMIN_MEMBERS_SET');
  ok(await admin(ctx, `/admin/v1/organizations/${org}/members`, { userId: member, role: 'member' }), 'ADMIN_MEMBERS_SET');
  const personal = ok(await admin(ctx, '/admin/v1/workspaces', { name: 'Personal', plan: 'pro', ownerUserId: owner }), 'ADMIN_WORKSPACES_CREATE').workspace.id as string;
  const team = ok(await admin(ctx, '/admin/v1/workspaces', { name: 'Team', plan: 'starter', organizationId: org }), 'ADMIN_WORKSPACES_CREATE').workspace.id as string;
  ok(await admin(ctx, '/admin/v1/workspaces', { name: 'Stranger', plan: 'free', ownerUserId: stranger }), 'ADMIN_WORKSPACES_CREATE');
  ok(await admin(ctx, `/admin/v1/workspaces/${personal}/domains`, { hostname: 'hooks.example.com' }), 'ADMIN_DOMAINS_ADD');
  ok(await admin(ctx, `/admin/v1/workspaces/${team}/domains`, { hostname: 'hooks.example.com' }), 'ADMIN_DOMAINS_ADD');
  ok(await admin(ctx, `/admin/v1/workspaces/${team}/domains`, { hostname: 'verified.example.org' }), 'ADMIN_DOMAINS_ADD');
  ok(await admin(ctx, `/admin/v1/workspaces/${team}/domains/verified.example.org/verify`, { method: 'operator' }), 'ADMIN_DOMAINS_VERIFY');
  ok(await admin(ctx, `/admin/v1/workspaces/${personal}/credits`, { amountMillicents: 5_000 }), 'ADMIN_CREDITS_GRANT');
  ok(await admin(ctx, `/admin/v1/keys`, { userId: owner, workspaceIds: [personal], scopes: ['usage:read'], operations: [], transports: ['rest'] }), 'ADMIN_KEYS_CREATE');
  const tenant = await seedTenant(ctx.deps, { credits: 10_000 });
  // Domain verification by HTTPS must stay on this machine: every name resolves to loopback,
  // which the egress guard refuses (so 'http' verification fails without any network).
  ctx.hostAddresses.get = () => ['127.0.0.1'];
  return { owner, orgOwner, orgAdmin, member, stranger, org, personal, team, tenant };
}
