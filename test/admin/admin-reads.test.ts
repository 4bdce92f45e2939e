/**
 * The operator's reads (decisions.md section 6, issue 19): every list and get of the admin API
 * answers with all of one tenant's rows and none of another's, pages with opaque cursors (a cursor
 * of another list or workspace is 400 INVALID_CURSOR), and never carries a secret: the test
 * collects every secret and stored hash or sealed value of both tenants and greps every answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { sha256Hex } from '../../src/lib/crypto.js';
import { createOrganization, setMember } from '../../src/modules/accounts/service.js';
import { setProviderKey } from '../../src/modules/provider-keys/service.js';
import { admin, describeEachDatabase, TEST_ADMIN_TOKEN, testKeySuite, type TestContext } from '../support/harness.js';
import { LIVE_PROVIDERS } from '../support/live-backend.js';
import { assertError, expectOk } from '../support/assertions.js';
import { drain, run } from '../support/jobs.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { seedWebhook } from '../support/webhook-hosts.js';

const UNKNOWN_ID = '01890000-0000-7000-8000-000000000000';

async function adminGet(ctx: TestContext, url: string, query?: Record<string, string>): Promise<LightMyRequestResponse> {
  return ctx.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, ...(query ? { query } : {}) });
}


/** Every item of a paged admin list, following nextCursor with small pages. */
async function readAll(ctx: TestContext, url: string, limit = 2): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const res = await adminGet(ctx, url, { limit: String(limit), ...(cursor ? { cursor } : {}) });
    const data = expectOk(res, res.json().code);
    assert.ok(data.items.length <= limit);
    items.push(...data.items);
    cursor = data.nextCursor;
    if (!cursor) return items;
  }
  throw new Error('too many pages');
}

interface World {
  a: Tenant;
  b: Tenant;
  secrets: string[];
  orgId: string;
  jobIds: string[];
  webhookId: string;
}

/** Two tenants with keys, jobs (completed and failed), webhooks with deliveries, provider keys; every secret collected. */
async function seedWorld(ctx: TestContext): Promise<World> {
  const a = await seedTenant(ctx.deps, { credits: 1_000_000 });
  const b = await seedTenant(ctx.deps, { credits: 1_000_000 });
  const extra = await seedKey(ctx.deps, a.user.id, [a.workspace.id], { budgets: { dailyMillicents: 50_000 } });
  const org = await createOrganization(ctx.deps, { name: 'Acme', ownerUserId: a.user.id });
  await setMember(ctx.deps, org.id, { userId: b.user.id, role: 'member' });
  const secrets = [a.secret, b.secret, extra.secret];
  const hookA = await seedWebhook(ctx, a.workspace.id, ['job.completed', 'job.failed']);
  const hookB = await seedWebhook(ctx, b.workspace.id, ['job.completed']);
  secrets.push(hookA.secret, hookB.secret);
  const providerKeyValues = ['sk-admin-read-test-value-a-0123456789', 'sk-admin-read-test-value-b-9876543210'];
  await setProviderKey(ctx.deps, a.workspace.id, { provider: 'openai', apiKey: providerKeyValues[0]! });
  await setProviderKey(ctx.deps, b.workspace.id, { provider: 'replicate', apiKey: providerKeyValues[1]! });
  secrets.push(...providerKeyValues);
  // Live jobs on a paid provider's fake (support/live-backend.ts), one at a time so that the
  // second one meets the failed prediction (charged its prediction time).
  const jobIds: string[] = [];
  for (const prompt of ['a cat', 'a dog', 'a bird']) {
    if (prompt === 'a dog') ctx.live!.failNext();
    const res = await run(ctx, a, 'image.generate', { prompt });
    assert.equal(res.statusCode, 202, res.body);
    jobIds.push(res.json().data.jobId);
    await drain(ctx);
  }
  const other = await run(ctx, b, 'image.generate', { prompt: 'b' });
  assert.equal(other.statusCode, 202, other.body);
  await drain(ctx);
  // Stored hashes and sealed values are secrets too.
  for (const r of await ctx.deps.db.selectFrom('api_keys').select(['secret_hash', 'previous_secret_hash']).execute()) {
    secrets.push(r.secret_hash, ...(r.previous_secret_hash ? [r.previous_secret_hash] : []));
  }
  for (const r of await ctx.deps.db.selectFrom('webhooks').select('secret_enc').execute()) secrets.push(r.secret_enc);
  for (const r of await ctx.deps.db.selectFrom('provider_keys').select('sealed_key').execute()) secrets.push(r.sealed_key);
  for (const s of [a.secret, b.secret, extra.secret]) secrets.push(sha256Hex(s));
  return { a, b, secrets, orgId: org.id, jobIds, webhookId: hookA.webhook.id };
}

function assertSecretFree(body: string, secrets: string[], where: string): void {
  for (const s of secrets) assert.ok(!body.includes(s), `${where} must not contain a secret (${s.slice(0, 8)}…)`);
  assert.doesNotMatch(body, /wask_[A-Za-z0-9_-]{20,}|whsec_[A-Za-z0-9_-]{20,}/, `${where}: no secret-shaped text`);
  assert.doesNotMatch(body, /secret_?hash|secretEnc|sealed/i, `${where}: no hash or sealed field`);
}

describeEachDatabase('admin reads', (get) => {
  let w: World;

  test('admin reads: every list and get answers with the envelope and ADMIN_* code, and no answer carries a secret, hash or sealed value', async () => {
    const ctx = get();
    w = await seedWorld(ctx);
    const { a } = w;
    const urls: [string, string][] = [
      ['/admin/v1/users', 'ADMIN_USERS_LIST'],
      [`/admin/v1/users/${a.user.id}`, 'ADMIN_USERS_GET'],
      [`/admin/v1/users/${a.user.id}/keys`, 'ADMIN_USER_KEYS_LIST'],
      ['/admin/v1/organizations', 'ADMIN_ORGANIZATIONS_LIST'],
      [`/admin/v1/organizations/${w.orgId}`, 'ADMIN_ORGANIZATIONS_GET'],
      ['/admin/v1/workspaces', 'ADMIN_WORKSPACES_LIST'],
      [`/admin/v1/workspaces/${a.workspace.id}`, 'ADMIN_WORKSPACES_GET'],
      [`/admin/v1/workspaces/${a.workspace.id}/keys`, 'ADMIN_WORKSPACE_KEYS_LIST'],
      [`/admin/v1/keys/${a.key.id}`, 'ADMIN_KEYS_GET'],
      [`/admin/v1/workspaces/${a.workspace.id}/jobs`, 'ADMIN_JOBS_LIST'],
      [`/admin/v1/jobs/${w.jobIds[0]}`, 'ADMIN_JOBS_GET'],
      [`/admin/v1/workspaces/${a.workspace.id}/transactions`, 'ADMIN_TRANSACTIONS_LIST'],
      [`/admin/v1/workspaces/${a.workspace.id}/webhooks`, 'ADMIN_WEBHOOKS_LIST'],
      [`/admin/v1/workspaces/${a.workspace.id}/webhooks/${w.webhookId}/deliveries`, 'ADMIN_DELIVERIES_LIST'],
      [`/admin/v1/workspaces/${a.workspace.id}/provider-keys`, 'ADMIN_PROVIDER_KEYS_LIST'],
    ];
    for (const [url, code] of urls) {
      const res = await adminGet(ctx, url);
      expectOk(res, code);
      assertSecretFree(res.body, w.secrets, url);
    }
  });

  test('admin reads: users, organizations (with members) and workspaces list everything, newest first, across pages; gets show memberships and workspaces', async () => {
    const ctx = get();
    const users = await readAll(ctx, '/admin/v1/users');
    const userRows = await ctx.deps.db.selectFrom('users').select('id').orderBy('id', 'desc').execute();
    assert.deepEqual(users.map((u) => u.id), userRows.map((r) => r.id));
    const workspaces = await readAll(ctx, '/admin/v1/workspaces', 1);
    assert.deepEqual(workspaces.map((x) => x.id), (await ctx.deps.db.selectFrom('workspaces').select('id').orderBy('id', 'desc').execute()).map((r) => r.id));
    const orgs = await readAll(ctx, '/admin/v1/organizations');
    assert.ok(orgs.some((o) => o.id === w.orgId));

    const user = expectOk(await adminGet(ctx, `/admin/v1/users/${w.a.user.id}`), 'ADMIN_USERS_GET');
    assert.equal(user.user.email, w.a.user.email);
    assert.deepEqual(user.memberships, [{ organizationId: w.orgId, name: 'Acme', role: 'owner' }]);
    assert.deepEqual(user.workspaceIds, [w.a.workspace.id]);
    const org = expectOk(await adminGet(ctx, `/admin/v1/organizations/${w.orgId}`), 'ADMIN_ORGANIZATIONS_GET');
    assert.deepEqual(
      org.members.map((m: any) => [m.userId, m.role, m.email]),
      [
        [w.a.user.id, 'owner', w.a.user.email],
        [w.b.user.id, 'member', w.b.user.email],
      ],
    );
  });

  test('admin reads: a workspace shows plan, limits, overrides, budgets with what is spent and held, and its balance', async () => {
    const ctx = get();
    const id = w.a.workspace.id;
    await admin(ctx, `/admin/v1/workspaces/${id}/settings`, { limits: { waitingJobs: 7 }, budgets: { dailyMillicents: 900_000 } });
    const d = expectOk(await adminGet(ctx, `/admin/v1/workspaces/${id}`), 'ADMIN_WORKSPACES_GET');
    assert.equal(d.workspace.plan, 'pro');
    assert.equal(d.limits.waitingJobs, 7);
    assert.deepEqual(d.limitOverrides, { waitingJobs: 7 });
    assert.equal(d.budgets.dailyMillicents, 900_000);
    const spent = -(await ctx.deps.db.selectFrom('credit_transactions').select('amount_mc').where('workspace_id', '=', id).where('type', '=', 'usage').execute()).reduce((s, r) => s + Number(r.amount_mc), 0);
    assert.ok(spent > 0);
    assert.deepEqual(
      d.budgetUsage.map((b: any) => [b.scope, b.period, b.limitMillicents, b.spentMillicents, b.reservedMillicents]),
      [['workspace', 'day', 900_000, spent, 0]],
    );
    assert.deepEqual(d.balance, { totalMillicents: 1_000_000 - spent, reservedMillicents: 0, spendableMillicents: 1_000_000 - spent });
  });

  test("admin reads: keys by workspace and by user are exactly the tenant's keys, metadata only; a key's get shows its budget usage", async () => {
    const ctx = get();
    const byWs = await readAll(ctx, `/admin/v1/workspaces/${w.a.workspace.id}/keys`, 1);
    const expected = (await ctx.deps.db.selectFrom('api_key_workspaces').select('key_id').where('workspace_id', '=', w.a.workspace.id).orderBy('key_id', 'desc').execute()).map((r) => r.key_id);
    assert.deepEqual(byWs.map((k) => k.id), expected);
    assert.equal(expected.length, 2);
    assert.ok(byWs.every((k) => k.workspaceIds.includes(w.a.workspace.id) && k.userId === w.a.user.id));
    const byUser = await readAll(ctx, `/admin/v1/users/${w.b.user.id}/keys`);
    assert.deepEqual(byUser.map((k) => k.id), [w.b.key.id]);
    for (const k of [...byWs, ...byUser]) {
      assert.deepEqual(Object.keys(k).sort(), ['budgets', 'createdAt', 'expiresAt', 'id', 'ipRanges', 'mode', 'operations', 'prefix', 'previousSecretExpiresAt', 'revokedAt', 'scopes', 'suspendedUntil', 'transports', 'userId', 'workspaceIds']);
    }
    const budgeted = byWs.find((k) => k.budgets.dailyMillicents === 50_000)!;
    const d = expectOk(await adminGet(ctx, `/admin/v1/keys/${budgeted.id}`), 'ADMIN_KEYS_GET');
    assert.deepEqual(d.budgetUsage.map((b: any) => [b.scope, b.period, b.limitMillicents, b.spentMillicents]), [['key', 'day', 50_000, 0]]);
  });

  test('admin reads: jobs of a workspace carry every field (attempt, provider, model, funding, errorCode, costs); a job get adds the input', async () => {
    const ctx = get();
    const jobs = await readAll(ctx, `/admin/v1/workspaces/${w.a.workspace.id}/jobs`);
    assert.deepEqual(jobs.map((j) => j.id), [...w.jobIds].sort().reverse());
    const failed = jobs.find((j) => j.id === w.jobIds[1])!;
    assert.equal(failed.status, 'failed');
    assert.equal(failed.errorCode, 'PROVIDER_ERROR');
    for (const j of jobs) {
      assert.equal(j.workspaceId, w.a.workspace.id);
      assert.equal(j.keyId, w.a.key.id);
      assert.equal(j.funding, 'credits');
      assert.equal(j.provider, LIVE_PROVIDERS.image);
      assert.equal(j.attempt, 1);
      assert.equal(j.operationId, 'image.generate');
      assert.ok(j.costMillicents > 0 && j.costMillicents <= j.maximumCostMillicents);
    }
    const one = expectOk(await adminGet(ctx, `/admin/v1/jobs/${w.jobIds[0]}`), 'ADMIN_JOBS_GET').job;
    assert.equal(one.input.prompt, 'a cat');
    assert.equal(one.status, 'completed');
    assert.match(one.outputSha256, /^[0-9a-f]{64}$/);
  });

  test("admin reads: the ledger lists every entry of the workspace newest first and sums to its balance; webhooks show recent deliveries; provider keys only names", async () => {
    const ctx = get();
    const ledger = await readAll(ctx, `/admin/v1/workspaces/${w.a.workspace.id}/transactions`, 3);
    const rows = await ctx.deps.db.selectFrom('credit_transactions').select(['id', 'amount_mc']).where('workspace_id', '=', w.a.workspace.id).orderBy('id', 'desc').execute();
    assert.deepEqual(ledger.map((t) => t.id), rows.map((r) => r.id));
    assert.ok(ledger.every((t) => t.workspaceId === w.a.workspace.id));
    assert.deepEqual(new Set(ledger.map((t) => t.type)), new Set(['purchase', 'usage']));

    const hooks = expectOk(await adminGet(ctx, `/admin/v1/workspaces/${w.a.workspace.id}/webhooks`), 'ADMIN_WEBHOOKS_LIST').items;
    assert.deepEqual(hooks.map((h: any) => h.id), [w.webhookId]);
    const deliveryRows = await ctx.deps.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', w.webhookId).orderBy('id', 'desc').execute();
    assert.equal(deliveryRows.length, 3, 'two completed and one failed job event');
    assert.deepEqual(hooks[0].recentDeliveries.map((d: any) => d.id), deliveryRows.map((r) => r.id));
    const deliveries = await readAll(ctx, `/admin/v1/workspaces/${w.a.workspace.id}/webhooks/${w.webhookId}/deliveries`, 2);
    assert.deepEqual(deliveries.map((d) => d.id), deliveryRows.map((r) => r.id));

    const keys = expectOk(await adminGet(ctx, `/admin/v1/workspaces/${w.a.workspace.id}/provider-keys`), 'ADMIN_PROVIDER_KEYS_LIST').items;
    assert.deepEqual(keys.map((k: any) => Object.keys(k).sort()), [['createdAt', 'id', 'provider', 'updatedAt', 'workspaceId']]);
    assert.equal(keys[0].provider, 'openai');
  });

  test("admin reads: another workspace's webhook is 404 under this one; unknown ids 404; malformed ids, unknown query parameters and foreign cursors 400", async () => {
    const ctx = get();
    const hookB = (await ctx.deps.db.selectFrom('webhooks').select('id').where('workspace_id', '=', w.b.workspace.id).executeTakeFirstOrThrow()).id;
    assertError(await adminGet(ctx, `/admin/v1/workspaces/${w.a.workspace.id}/webhooks/${hookB}/deliveries`), 404, 'NOT_FOUND');
    for (const url of [`/admin/v1/users/${UNKNOWN_ID}`, `/admin/v1/organizations/${UNKNOWN_ID}`, `/admin/v1/workspaces/${UNKNOWN_ID}`, `/admin/v1/workspaces/${UNKNOWN_ID}/jobs`, `/admin/v1/keys/${UNKNOWN_ID}`, `/admin/v1/jobs/${UNKNOWN_ID}`, `/admin/v1/users/${UNKNOWN_ID}/keys`, `/admin/v1/workspaces/${UNKNOWN_ID}/provider-keys`]) {
      assertError(await adminGet(ctx, url), 404, 'NOT_FOUND');
    }
    assertError(await adminGet(ctx, '/admin/v1/jobs/not-a-uuid'), 400, 'INVALID_REQUEST');
    assertError(await adminGet(ctx, '/admin/v1/users', { limit: '0' }), 400, 'INVALID_REQUEST');
    assertError(await adminGet(ctx, '/admin/v1/users', { limit: '101' }), 400, 'INVALID_REQUEST');
    assertError(await adminGet(ctx, `/admin/v1/workspaces/${w.a.workspace.id}`, { extra: '1' }), 400, 'INVALID_REQUEST');
    // A cursor of workspace A's jobs does not page workspace B's jobs, nor another list.
    const first = expectOk(await adminGet(ctx, `/admin/v1/workspaces/${w.a.workspace.id}/jobs`, { limit: '1' }), 'ADMIN_JOBS_LIST');
    assert.ok(first.nextCursor);
    assertError(await adminGet(ctx, `/admin/v1/workspaces/${w.b.workspace.id}/jobs`, { cursor: first.nextCursor }), 400, 'INVALID_CURSOR');
    assertError(await adminGet(ctx, `/admin/v1/workspaces/${w.a.workspace.id}/transactions`, { cursor: first.nextCursor }), 400, 'INVALID_CURSOR');
    // Without the token: 401; the token in the query string: 401 even beside the header.
    assertError(await ctx.app.inject({ method: 'GET', url: '/admin/v1/users' }), 401, 'UNAUTHENTICATED');
    assertError(await adminGet(ctx, '/admin/v1/users', { token: TEST_ADMIN_TOKEN }), 401, 'UNAUTHENTICATED');
  });
  // The operator's views show live money and live jobs only: real work on a paid provider's fake.
}, testKeySuite({ live: true }));
