/** Webhook endpoints: create, list, update, revoke, rotate (spec Rules 9-10, decisions.md section 1). */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { createDeps } from '../../src/deps.js';
import { FakeClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { createWorkspace } from '../../src/modules/accounts/service.js';
import { addDomain, removeDomain, verifyDomain } from '../../src/modules/domains/service.js';
import { readWebhookSecret } from '../../src/modules/webhooks/secrets.js';
import { MAX_ACTIVE_WEBHOOKS } from '../../src/modules/webhooks/service.js';
import type { DeliveryStatus } from '../../src/db/schema.js';
import { assertError, assertOk } from '../support/assertions.js';
import { createTestDatabase } from '../support/databases.js';
import { call, describeEachDatabase, testConfig, TEST_SECRET_KEY, type TestContext } from '../support/harness.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { PUBLIC_ADDRESS, seedWebhook, uniqueHost, verifyHost } from '../support/webhook-hosts.js';
import { checkRefusals } from '../support/openapi-responses.js';

const SECRET_RE = /^whsec_[A-Za-z0-9_-]{43}$/;
const WEBHOOK_KEYS = ['createdAt', 'enabled', 'eventTypes', 'id', 'livemode', 'revokedAt', 'updatedAt', 'url', 'workspaceId'];

type Who = Pick<Tenant, 'secret' | 'workspace'>;

function create(ctx: TestContext, t: Who, body: unknown) {
  return call(ctx, 'POST', '/v1/webhooks', { secret: t.secret, workspaceId: t.workspace.id, body });
}

function action(ctx: TestContext, t: Who, id: string, verb: 'update' | 'revoke' | 'rotate', body?: unknown, headers?: Record<string, string>) {
  return call(ctx, 'POST', `/v1/webhooks/${id}/${verb}`, { secret: t.secret, workspaceId: t.workspace.id, body, ...(headers ? { headers } : {}) });
}

async function list(ctx: TestContext, t: Who): Promise<any[]> {
  return assertOk(await call(ctx, 'GET', '/v1/webhooks', { secret: t.secret, workspaceId: t.workspace.id })).data.items;
}

async function webhookRow(ctx: TestContext, id: string) {
  return ctx.deps.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function countWebhooks(ctx: TestContext, workspaceId: string): Promise<number> {
  const rows = await ctx.deps.db.selectFrom('webhooks').select('id').where('workspace_id', '=', workspaceId).execute();
  return rows.length;
}

/** Expects 400 WEBHOOK_URL_REJECTED with `reason`; returns the body. */
function assertRejected(res: Awaited<ReturnType<typeof create>>, reason: string) {
  const body = assertError(res, 400, 'WEBHOOK_URL_REJECTED');
  assert.equal(body.details?.reason, reason, res.body);
  return body;
}

/** A delivery row of `webhookId` for a fresh event, in `status`. */
async function seedDelivery(ctx: TestContext, workspaceId: string, webhookId: string, status: DeliveryStatus): Promise<string> {
  const now = ctx.clock.now();
  // The event row is written directly (no fan-out): this test places its deliveries itself.
  const event = { id: newId() };
  await ctx.deps.db.insertInto('events').values({ id: event.id, workspace_id: workspaceId, type: 'job.completed', data_json: '{}', created_at_ms: now }).execute();
  const id = newId();
  await ctx.deps.db
    .insertInto('webhook_deliveries')
    .values({
      id,
      workspace_id: workspaceId,
      webhook_id: webhookId,
      event_id: event.id,
      status,
      attempts: status === 'pending' ? 0 : 1,
      replay_count: 0,
      next_attempt_at_ms: now,
      lease_token: 3,
      lease_owner: status === 'delivering' ? 'worker-1' : null,
      lease_expires_at_ms: status === 'delivering' ? now + 30_000 : null,
      created_at_ms: now,
      updated_at_ms: now,
      delivered_at_ms: status === 'succeeded' ? now : null,
    })
    .execute();
  return id;
}

describeEachDatabase('webhooks', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('create: 200 {webhook, secret} with a whsec_ secret shown once, enabled by default, on a verified host', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const host = await verifyHost(ctx, t.workspace.id);
    const res = await create(ctx, t, { url: `https://${host}/hooks/in?x=1`, eventTypes: ['job.completed', 'media.created'] });
    const body = assertOk(res);
    assert.equal(body.code, 'PUBLIC_WEBHOOKS_CREATE');
    const { webhook, secret } = body.data;
    assert.deepEqual(Object.keys(body.data).sort(), ['secret', 'webhook']);
    assert.match(secret, SECRET_RE);
    assert.equal(Buffer.from(secret.slice('whsec_'.length), 'base64url').length, 32, '32 random bytes');
    assert.deepEqual(Object.keys(webhook).sort(), WEBHOOK_KEYS);
    assert.equal(webhook.workspaceId, t.workspace.id);
    assert.equal(webhook.url, `https://${host}/hooks/in?x=1`);
    assert.deepEqual(webhook.eventTypes, ['job.completed', 'media.created']);
    assert.equal(webhook.enabled, true);
    assert.equal(webhook.createdAt, new Date(ctx.clock.now()).toISOString());
    assert.equal(webhook.updatedAt, webhook.createdAt);
    assert.equal(webhook.revokedAt, null);

    const row = await webhookRow(ctx, webhook.id);
    assert.equal(row.hostname, host);
    assert.equal(Number(row.enabled), 1);
    assert.deepEqual(JSON.parse(row.event_types_json), ['job.completed', 'media.created']);
    assert.equal(row.revoked_at_ms, null);
  });

  test('create: enabled false is kept; an explicit port is fine; the hostname is stored lower-case', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const host = await verifyHost(ctx, t.workspace.id);
    const off = assertOk(await create(ctx, t, { url: `https://${host}/a`, eventTypes: ['job.failed'], enabled: false })).data.webhook;
    assert.equal(off.enabled, false);
    assert.equal(Number((await webhookRow(ctx, off.id)).enabled), 0);
    const port = assertOk(await create(ctx, t, { url: `https://${host.toUpperCase()}:8443/b`, eventTypes: ['job.failed'] })).data.webhook;
    assert.equal(port.url, `https://${host}:8443/b`);
    assert.equal((await webhookRow(ctx, port.id)).hostname, host);
    const defaultPort = assertOk(await create(ctx, t, { url: `https://${host}:443`, eventTypes: ['job.failed'] })).data.webhook;
    assert.equal(defaultPort.url, `https://${host}/`);
    // Internationalised names are stored as their ASCII form; a trailing dot is dropped.
    const label = uniqueHost('x').split('.')[1]!;
    await verifyHost(ctx, t.workspace.id, `bücher.${label}.example`);
    ctx.hostAddresses.set(`xn--bcher-kva.${label}.example`, [PUBLIC_ADDRESS]);
    const idn = assertOk(await create(ctx, t, { url: `https://BÜCHER.${label}.example./in`, eventTypes: ['job.failed'] })).data.webhook;
    assert.equal(idn.url, `https://xn--bcher-kva.${label}.example/in`);
    assert.equal((await webhookRow(ctx, idn.id)).hostname, `xn--bcher-kva.${label}.example`);
  });

  test('secret: stored only sealed (the row does not contain it) and bound to its webhook', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const { webhook, secret } = assertOk(await create(ctx, t, { url: `https://${await verifyHost(ctx, t.workspace.id)}/`, eventTypes: ['job.completed'] })).data;
    const row = await webhookRow(ctx, webhook.id);
    const stored = JSON.stringify(row);
    assert.ok(!stored.includes(secret) && !stored.includes(secret.slice('whsec_'.length)), 'no plaintext at rest');
    assert.match(row.secret_enc, /^v1\./);
    assert.equal(readWebhookSecret(ctx.deps, row), secret);
    assert.throws(() => readWebhookSecret(ctx.deps, { id: newId(), secret_enc: row.secret_enc }), 'a sealed secret copied to another webhook does not open');
  });

  test('url refusals: not https, malformed, userinfo, fragment, over 2048 characters → 400 WEBHOOK_URL_REJECTED with the reason; nothing stored', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const host = await verifyHost(ctx, t.workspace.id);
    const cases: [string, string][] = [
      [`http://${host}/hooks`, 'NOT_HTTPS'],
      [`ftp://${host}/hooks`, 'NOT_HTTPS'],
      [`wss://${host}/hooks`, 'NOT_HTTPS'],
      ['not a url', 'INVALID_URL'],
      [`/${host}/relative`, 'INVALID_URL'],
      ['https://', 'INVALID_URL'],
      [`https://user:pass@${host}/hooks`, 'USERINFO_NOT_ALLOWED'],
      [`https://user@${host}/hooks`, 'USERINFO_NOT_ALLOWED'],
      [`https://${host}/hooks#frag`, 'FRAGMENT_NOT_ALLOWED'],
      [`https://${host}/hooks#`, 'FRAGMENT_NOT_ALLOWED'],
      [`https://${host}/${'a'.repeat(2049 - `https://${host}/`.length)}`, 'TOO_LONG'],
    ];
    for (const [url, reason] of cases) assertRejected(await create(ctx, t, { url, eventTypes: ['job.completed'] }), reason);
    const longest = `https://${host}/${'a'.repeat(2048 - `https://${host}/`.length)}`;
    assert.equal(longest.length, 2048);
    assertOk(await create(ctx, t, { url: longest, eventTypes: ['job.completed'] }));
    assert.equal(await countWebhooks(ctx, t.workspace.id), 1);
  });

  test('url refusals: the exact hostname must be verified in this workspace (unverified, pending, subdomain of a verified parent)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    assertRejected(await create(ctx, t, { url: `https://${uniqueHost()}/`, eventTypes: ['job.completed'] }), 'DOMAIN_NOT_VERIFIED');
    const pending = uniqueHost();
    await addDomain(ctx.deps, t.workspace.id, pending);
    ctx.hostAddresses.set(pending, [PUBLIC_ADDRESS]);
    assertRejected(await create(ctx, t, { url: `https://${pending}/`, eventTypes: ['job.completed'] }), 'DOMAIN_NOT_VERIFIED');
    const parent = await verifyHost(ctx, t.workspace.id);
    ctx.hostAddresses.set(`api.${parent}`, [PUBLIC_ADDRESS]);
    assertRejected(await create(ctx, t, { url: `https://api.${parent}/`, eventTypes: ['job.completed'] }), 'DOMAIN_NOT_VERIFIED');
    assertRejected(await create(ctx, t, { url: 'https://localhost/', eventTypes: ['job.completed'] }), 'DOMAIN_NOT_VERIFIED');
    assert.equal(await countWebhooks(ctx, t.workspace.id), 0);
  });

  test('url refusals: another workspace\'s verification does not count and the refusal does not reveal it; a moved host is refused', async () => {
    const ctx = get();
    const a = await seedTenant(ctx.deps);
    const b = await seedTenant(ctx.deps);
    const theirs = await verifyHost(ctx, b.workspace.id);
    const nobodys = uniqueHost();
    const refusedTheirs = assertRejected(await create(ctx, a, { url: `https://${theirs}/`, eventTypes: ['job.completed'] }), 'DOMAIN_NOT_VERIFIED');
    const refusedNobodys = assertRejected(await create(ctx, a, { url: `https://${nobodys}/`, eventTypes: ['job.completed'] }), 'DOMAIN_NOT_VERIFIED');
    assert.equal(refusedTheirs.message.replace(theirs, 'HOST'), refusedNobodys.message.replace(nobodys, 'HOST'), 'same answer whether or not another workspace verified it');
    assert.deepEqual(refusedTheirs.details, { reason: 'DOMAIN_NOT_VERIFIED' });
    assert.ok(!JSON.stringify(refusedTheirs).includes(b.workspace.id));

    // A host verified in a, then verified in b (it moves): a can no longer point a webhook at it.
    const moving = await verifyHost(ctx, a.workspace.id);
    assertOk(await create(ctx, a, { url: `https://${moving}/first`, eventTypes: ['job.completed'] }));
    await addDomain(ctx.deps, b.workspace.id, moving);
    await verifyDomain(ctx.deps, b.workspace.id, moving, 'operator');
    assertRejected(await create(ctx, a, { url: `https://${moving}/second`, eventTypes: ['job.completed'] }), 'DOMAIN_NOT_VERIFIED');
    assertOk(await create(ctx, b, { url: `https://${moving}/second`, eventTypes: ['job.completed'] }));
    // Removed verification: refused as well.
    const removed = await verifyHost(ctx, a.workspace.id);
    await removeDomain(ctx.deps, a.workspace.id, removed);
    assertRejected(await create(ctx, a, { url: `https://${removed}/`, eventTypes: ['job.completed'] }), 'DOMAIN_NOT_VERIFIED');
  });

  test('url refusals: private, loopback, link-local and metadata IP literals are ADDRESS_NOT_PERMITTED; a public IP literal cannot be verified', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    for (const host of ['127.0.0.1', '10.1.2.3', '192.168.1.1', '169.254.169.254', '100.100.100.200', '[::1]', '[fd00:ec2::254]', '[::ffff:127.0.0.1]', '0x7f.1', '2130706433', '0.0.0.0']) {
      assertRejected(await create(ctx, t, { url: `https://${host}/hooks`, eventTypes: ['job.completed'] }), 'ADDRESS_NOT_PERMITTED');
    }
    for (const host of [PUBLIC_ADDRESS, '[2606:4700::1111]']) {
      assertRejected(await create(ctx, t, { url: `https://${host}/hooks`, eventTypes: ['job.completed'] }), 'DOMAIN_NOT_VERIFIED');
    }
  });

  test('url refusals: a verified name resolving to any non-public address is ADDRESS_NOT_PERMITTED; no address is UNRESOLVABLE', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    for (const addresses of [['127.0.0.1'], ['10.0.0.7'], ['169.254.169.254'], ['::1'], ['fe80::1'], [PUBLIC_ADDRESS, '192.168.0.10'], ['::ffff:10.0.0.1']]) {
      const host = await verifyHost(ctx, t.workspace.id, uniqueHost(), addresses);
      assertRejected(await create(ctx, t, { url: `https://${host}/`, eventTypes: ['job.completed'] }), 'ADDRESS_NOT_PERMITTED');
    }
    const noAddress = await verifyHost(ctx, t.workspace.id, uniqueHost(), []);
    assertRejected(await create(ctx, t, { url: `https://${noAddress}/`, eventTypes: ['job.completed'] }), 'UNRESOLVABLE');
    // A name nobody can resolve (RFC 6761 .invalid), looked up for real.
    const invalid = `hooks.t${newId().slice(0, 8)}.invalid`;
    await addDomain(ctx.deps, t.workspace.id, invalid);
    await verifyDomain(ctx.deps, t.workspace.id, invalid, 'operator');
    assertRejected(await create(ctx, t, { url: `https://${invalid}/`, eventTypes: ['job.completed'] }), 'UNRESOLVABLE');
    assert.equal(await countWebhooks(ctx, t.workspace.id), 0);
  });

  test('eventTypes: must be a non-empty list of known, distinct types; body: no other properties, right types → else 400 INVALID_REQUEST', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const url = `https://${await verifyHost(ctx, t.workspace.id)}/`;
    const bad: unknown[] = [
      { url, eventTypes: [] },
      { url, eventTypes: ['job.started'] },
      { url, eventTypes: ['job.completed', 'job.completed'] },
      { url, eventTypes: 'job.completed' },
      { url, eventTypes: ['JOB.COMPLETED'] },
      { url },
      { eventTypes: ['job.completed'] },
      { url: 42, eventTypes: ['job.completed'] },
      { url: '', eventTypes: ['job.completed'] },
      { url, eventTypes: ['job.completed'], enabled: 'yes' },
      { url, eventTypes: ['job.completed'], secret: 'whsec_mine' },
      [url],
      'text',
    ];
    for (const body of bad) assertError(await create(ctx, t, body), 400, 'INVALID_REQUEST');
    assertError(await call(ctx, 'POST', '/v1/webhooks', { secret: t.secret, workspaceId: t.workspace.id }), 400, 'INVALID_REQUEST');
    const all = assertOk(await create(ctx, t, { url, eventTypes: ['job.completed', 'job.failed', 'job.cancelled', 'media.created'] })).data.webhook;
    assert.equal(all.eventTypes.length, 4);
    assert.equal(await countWebhooks(ctx, t.workspace.id), 1);
  });

  test(`active webhooks are capped at ${MAX_ACTIVE_WEBHOOKS} per workspace (409 WEBHOOK_LIMIT_REACHED, also under concurrency); revoked ones do not count`, async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const url = `https://${await verifyHost(ctx, t.workspace.id)}/`;
    const results = await Promise.all(Array.from({ length: MAX_ACTIVE_WEBHOOKS + 5 }, () => create(ctx, t, { url, eventTypes: ['job.completed'] })));
    const created = results.filter((r) => r.statusCode === 200);
    assert.equal(created.length, MAX_ACTIVE_WEBHOOKS);
    for (const r of results.filter((x) => x.statusCode !== 200)) {
      const body = assertError(r, 409, 'WEBHOOK_LIMIT_REACHED');
      assert.equal(body.details.limit, MAX_ACTIVE_WEBHOOKS);
    }
    assert.equal(await countWebhooks(ctx, t.workspace.id), MAX_ACTIVE_WEBHOOKS);
    const first = created[0]!.json().data.webhook;
    assertOk(await action(ctx, t, first.id, 'revoke'));
    assertOk(await create(ctx, t, { url, eventTypes: ['job.completed'] }));
    assertError(await create(ctx, t, { url, eventTypes: ['job.completed'] }), 409, 'WEBHOOK_LIMIT_REACHED');
  });

  test('list: every webhook of the workspace oldest first, revoked ones with revokedAt, never a secret; other workspaces never', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const other = await seedTenant(ctx.deps);
    assert.deepEqual(await list(ctx, t), []);
    const one = await seedWebhook(ctx, t.workspace.id, ['job.completed']);
    ctx.clock.advance(1000);
    const two = await seedWebhook(ctx, t.workspace.id, ['media.created']);
    await seedWebhook(ctx, other.workspace.id);
    ctx.clock.advance(1000);
    const revoked = assertOk(await action(ctx, t, one.webhook.id, 'revoke')).data.webhook;
    const res = await call(ctx, 'GET', '/v1/webhooks', { secret: t.secret, workspaceId: t.workspace.id });
    const items = assertOk(res).data.items;
    assert.equal(res.json().code, 'PUBLIC_WEBHOOKS_LIST');
    assert.deepEqual(items.map((w: any) => w.id), [one.webhook.id, two.webhook.id]);
    assert.deepEqual(items[0], revoked);
    assert.equal(items[0].revokedAt, new Date(ctx.clock.now()).toISOString());
    assert.equal(items[0].enabled, false);
    assert.deepEqual(items[1], two.webhook);
    for (const w of items) assert.deepEqual(Object.keys(w).sort(), WEBHOOK_KEYS);
    for (const secret of [one.secret, two.secret]) assert.ok(!res.body.includes(secret));
    assert.ok(!res.body.includes('whsec_') && !res.body.includes('v1.'), 'neither the secret nor its sealed form');
  });

  test('update: any non-empty subset of url, eventTypes, enabled; a new url is checked like at creation; updatedAt moves; no secret', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const { webhook, secret } = await seedWebhook(ctx, t.workspace.id, ['job.completed']);
    ctx.clock.advance(5000);
    const disabled = assertOk(await action(ctx, t, webhook.id, 'update', { enabled: false }));
    assert.equal(disabled.code, 'PUBLIC_WEBHOOKS_UPDATE');
    assert.deepEqual(Object.keys(disabled.data), ['webhook']);
    assert.deepEqual(disabled.data.webhook, { ...webhook, enabled: false, updatedAt: new Date(ctx.clock.now()).toISOString() });
    const types = assertOk(await action(ctx, t, webhook.id, 'update', { eventTypes: ['job.failed', 'media.created'], enabled: true })).data.webhook;
    assert.deepEqual(types.eventTypes, ['job.failed', 'media.created']);
    assert.equal(types.enabled, true);
    const newHost = await verifyHost(ctx, t.workspace.id);
    const moved = assertOk(await action(ctx, t, webhook.id, 'update', { url: `https://${newHost}/v2` })).data.webhook;
    assert.equal(moved.url, `https://${newHost}/v2`);
    assert.equal((await webhookRow(ctx, webhook.id)).hostname, newHost);
    assert.equal(readWebhookSecret(ctx.deps, await webhookRow(ctx, webhook.id)), secret, 'update keeps the secret');

    const before = await webhookRow(ctx, webhook.id);
    assertRejected(await action(ctx, t, webhook.id, 'update', { url: `http://${newHost}/` }), 'NOT_HTTPS');
    assertRejected(await action(ctx, t, webhook.id, 'update', { url: `https://${uniqueHost()}/`, enabled: false }), 'DOMAIN_NOT_VERIFIED');
    const privateHost = await verifyHost(ctx, t.workspace.id, uniqueHost(), ['10.0.0.1']);
    assertRejected(await action(ctx, t, webhook.id, 'update', { url: `https://${privateHost}/` }), 'ADDRESS_NOT_PERMITTED');
    for (const body of [{}, { secret: 'x' }, { enabled: true, extra: 1 }, { eventTypes: [] }, { eventTypes: ['nope'] }, { enabled: 'no' }, undefined, [] as unknown]) {
      assertError(await action(ctx, t, webhook.id, 'update', body), 400, 'INVALID_REQUEST');
    }
    assert.deepEqual(await webhookRow(ctx, webhook.id), before, 'refused updates change nothing');
  });

  test('update, revoke, rotate: unknown or another workspace\'s webhook is 404 NOT_FOUND; a malformed id is 400', async () => {
    const ctx = get();
    const a = await seedTenant(ctx.deps);
    const b = await seedTenant(ctx.deps);
    const theirs = await seedWebhook(ctx, b.workspace.id);
    for (const id of [theirs.webhook.id, newId()]) {
      assertError(await action(ctx, a, id, 'update', { enabled: false }), 404, 'NOT_FOUND');
      assertError(await action(ctx, a, id, 'revoke'), 404, 'NOT_FOUND');
      assertError(await action(ctx, a, id, 'rotate'), 404, 'NOT_FOUND');
    }
    for (const id of ['nope', '123', `${newId()}x`]) {
      assertError(await action(ctx, a, id, 'update', { enabled: false }), 400, 'INVALID_REQUEST');
      assertError(await action(ctx, a, id, 'revoke'), 400, 'INVALID_REQUEST');
      assertError(await action(ctx, a, id, 'rotate'), 400, 'INVALID_REQUEST');
    }
    const row = await webhookRow(ctx, theirs.webhook.id);
    assert.equal(row.revoked_at_ms, null);
    assert.equal(readWebhookSecret(ctx.deps, row), theirs.secret);
    assert.equal(Number(row.enabled), 1);
  });

  test('revoke: permanent, enabled false with revokedAt, pending and delivering deliveries abandoned as WEBHOOK_REVOKED; again returns it', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const { webhook } = await seedWebhook(ctx, t.workspace.id);
    const sibling = await seedWebhook(ctx, t.workspace.id);
    const pending = await seedDelivery(ctx, t.workspace.id, webhook.id, 'pending');
    const delivering = await seedDelivery(ctx, t.workspace.id, webhook.id, 'delivering');
    const succeeded = await seedDelivery(ctx, t.workspace.id, webhook.id, 'succeeded');
    const siblings = await seedDelivery(ctx, t.workspace.id, sibling.webhook.id, 'pending');
    ctx.clock.advance(2000);
    const res = await action(ctx, t, webhook.id, 'revoke');
    const body = assertOk(res);
    assert.equal(body.code, 'PUBLIC_WEBHOOKS_REVOKE');
    assert.deepEqual(Object.keys(body.data), ['webhook']);
    const revokedAt = new Date(ctx.clock.now()).toISOString();
    assert.deepEqual(body.data.webhook, { ...webhook, enabled: false, revokedAt, updatedAt: revokedAt });
    assert.ok(!res.body.includes('whsec_'));

    const deliveries = await ctx.deps.db.selectFrom('webhook_deliveries').selectAll().where('workspace_id', '=', t.workspace.id).execute();
    const byId = new Map(deliveries.map((d) => [d.id, d]));
    for (const id of [pending, delivering]) {
      const d = byId.get(id)!;
      assert.equal(d.status, 'failed');
      assert.equal(d.last_error_code, 'WEBHOOK_REVOKED');
      assert.equal(Number(d.lease_token), 4, 'the lease token moves on, fencing a worker mid-send');
      assert.equal(d.lease_owner, null);
    }
    assert.equal(byId.get(succeeded)!.status, 'succeeded');
    assert.equal(byId.get(siblings)!.status, 'pending', "another webhook's deliveries are untouched");

    ctx.clock.advance(2000);
    const again = assertOk(await action(ctx, t, webhook.id, 'revoke', {}));
    assert.deepEqual(again.data.webhook, body.data.webhook, 'revoking again returns it unchanged');
    assertError(await action(ctx, t, webhook.id, 'update', { enabled: true }), 409, 'WEBHOOK_REVOKED');
    assertError(await action(ctx, t, webhook.id, 'rotate'), 409, 'WEBHOOK_REVOKED');
    assert.equal((await webhookRow(ctx, webhook.id)).revoked_at_ms, ctx.clock.now() - 2000);
  });

  test('rotate: a new secret shown once, the old one replaced at once; revoked is 409 WEBHOOK_REVOKED', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const { webhook, secret: old } = await seedWebhook(ctx, t.workspace.id);
    ctx.clock.advance(1000);
    const body = assertOk(await action(ctx, t, webhook.id, 'rotate'));
    assert.equal(body.code, 'PUBLIC_WEBHOOKS_ROTATE');
    assert.deepEqual(Object.keys(body.data).sort(), ['secret', 'webhook']);
    const { secret } = body.data;
    assert.match(secret, SECRET_RE);
    assert.notEqual(secret, old);
    assert.deepEqual(body.data.webhook, { ...webhook, updatedAt: new Date(ctx.clock.now()).toISOString() });
    const row = await webhookRow(ctx, webhook.id);
    assert.equal(readWebhookSecret(ctx.deps, row), secret, 'the worker reads the new secret from the next send on');
    assert.ok(!JSON.stringify(row).includes(secret));
    const third = assertOk(await action(ctx, t, webhook.id, 'rotate', {})).data.secret;
    assert.notEqual(third, secret);
    const listed = await call(ctx, 'GET', '/v1/webhooks', { secret: t.secret, workspaceId: t.workspace.id });
    for (const s of [old, secret, third]) assert.ok(!listed.body.includes(s));
    assertOk(await action(ctx, t, webhook.id, 'revoke'));
    assertError(await action(ctx, t, webhook.id, 'rotate'), 409, 'WEBHOOK_REVOKED');
    assert.equal(readWebhookSecret(ctx.deps, await webhookRow(ctx, webhook.id)), third);
  });

  test('revoke and rotate take no body: nothing, an empty body or {} are fine; anything else is 400 INVALID_REQUEST', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const { webhook } = await seedWebhook(ctx, t.workspace.id);
    for (const verb of ['rotate', 'revoke'] as const) {
      for (const body of [{ reason: 'x' }, [], 'text', 5]) assertError(await action(ctx, t, webhook.id, verb, body), 400, 'INVALID_REQUEST');
      const raw = await ctx.app.inject({
        method: 'POST',
        url: `/v1/webhooks/${webhook.id}/${verb}`,
        headers: { authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id, 'content-type': 'application/json' },
        payload: '',
      });
      assertOk(raw);
      assertOk(await action(ctx, t, webhook.id, verb, {}));
      assertOk(await action(ctx, t, webhook.id, verb));
      if (verb === 'rotate') assertError(await action(ctx, t, webhook.id, verb, '{"a":1}', { 'content-type': 'application/json' }), 400, 'INVALID_REQUEST');
    }
  });

  test('a key with both workspaces cannot reach one workspace\'s webhook through the other\'s header', async () => {
    const ctx = get();
    const a = await seedTenant(ctx.deps);
    const second = await createWorkspace(ctx.deps, { name: 'Second', plan: 'pro', ownerUserId: a.user.id });
    const key = await seedKey(ctx.deps, a.user.id, [a.workspace.id, second.id]);
    const { webhook } = await seedWebhook(ctx, a.workspace.id);
    const viaSecond = { secret: key.secret, workspace: second };
    assertError(await action(ctx, viaSecond, webhook.id, 'rotate'), 404, 'NOT_FOUND');
    assertError(await action(ctx, viaSecond, webhook.id, 'revoke'), 404, 'NOT_FOUND');
    assert.deepEqual(await list(ctx, viaSecond), []);
    assert.equal((await list(ctx, { secret: key.secret, workspace: a.workspace })).length, 1);
  });
});

describeEachDatabase(
  'webhooks with EGRESS_ALLOW_CIDRS',
  (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
    test('loopback destinations are accepted only inside EGRESS_ALLOW_CIDRS, and still need a verified hostname', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const loopback = await verifyHost(ctx, t.workspace.id, uniqueHost('local'), ['127.0.0.1']);
      const created = assertOk(await create(ctx, t, { url: `https://${loopback}:8443/hook`, eventTypes: ['job.completed'] })).data.webhook;
      assert.equal(created.url, `https://${loopback}:8443/hook`);
      const v6 = await verifyHost(ctx, t.workspace.id, uniqueHost('local6'), ['::1', '127.0.0.1']);
      assertOk(await create(ctx, t, { url: `https://${v6}/`, eventTypes: ['job.completed'] }));
      // The allow list lifts the address block only: a bare IP still cannot be a verified hostname.
      assertRejected(await create(ctx, t, { url: 'https://127.0.0.1:8443/hook', eventTypes: ['job.completed'] }), 'DOMAIN_NOT_VERIFIED');
      assertRejected(await create(ctx, t, { url: 'https://localhost:8443/hook', eventTypes: ['job.completed'] }), 'DOMAIN_NOT_VERIFIED');
      // Outside the allowed ranges the block stands.
      const privateHost = await verifyHost(ctx, t.workspace.id, uniqueHost(), ['10.0.0.1']);
      assertRejected(await create(ctx, t, { url: `https://${privateHost}/`, eventTypes: ['job.completed'] }), 'ADDRESS_NOT_PERMITTED');
    });
  },
  { env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8,::1' } },
);

test('webhook secrets never reach the logs (request logging on, debug level)', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const database = await createTestDatabase('sqlite');
  const dataDir = mkdtempSync(join(tmpdir(), 'was-webhook-logs-'));
  const hostAddresses = new Map<string, string[]>();
  const deps = await createDeps({
    config: testConfig(dataDir),
    secretKey: TEST_SECRET_KEY,
    database: database.handle,
    clock: new FakeClock(Date.UTC(2026, 10, 18, 12)),
    log: pino({ level: 'debug' }, sink),
    epochPollMs: 0,
    net: { resolveTxt: async () => [], lookupAddresses: async (h) => hostAddresses.get(h) ?? [] },
  });
  const app = await buildApp(deps, { logRequests: true });
  try {
    await app.ready();
    const ctx = { deps, app, hostAddresses } as unknown as TestContext;
    const t = await seedTenant(deps);
    const host = await verifyHost(ctx, t.workspace.id);
    const secrets: string[] = [];
    const created = await create(ctx, t, { url: `https://${host}/`, eventTypes: ['job.completed'] });
    secrets.push(assertOk(created).data.secret);
    const id = created.json().data.webhook.id;
    secrets.push(assertOk(await action(ctx, t, id, 'rotate')).data.secret);
    assertOk(await action(ctx, t, id, 'update', { enabled: false }));
    assertOk(await action(ctx, t, id, 'revoke'));
    assertError(await action(ctx, t, id, 'rotate'), 409, 'WEBHOOK_REVOKED');
    const log = lines.join('');
    assert.ok(log.includes('webhook created') && log.includes('webhook secret rotated') && log.includes('request completed'), 'the log was captured');
    for (const secret of secrets) {
      assert.ok(!log.includes(secret), 'no secret in the log');
      assert.ok(!log.includes(secret.slice('whsec_'.length)));
    }
    assert.ok(!log.includes('whsec_'));
  } finally {
    await app.close();
    await deps.close();
    await database.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
