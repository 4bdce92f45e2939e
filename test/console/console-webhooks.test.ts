/**
 * The console's domains and webhooks (issue 35, item 8) over HTTP: a domain added, its
 * verification instructions, a check by DNS TXT record (the admin API's verifyDomain; the
 * operator's word is not the owner's to give); webhooks created only on verified hostnames, listed
 * without secrets, a secret rotated and shown once, revoked; deliveries with status and attempts
 * against the real HTTPS receiver, a failed one replayed (same rules and codes as the public API).
 * Organization roles: members read, only owners and admins change (403 FORBIDDEN, nothing
 * changed). Another user's workspace, webhook or delivery is 404 on every endpoint; bad input is
 * 400 with the documented code; Origin and CSRF token on every change.
 *
 * Runs with SIMULATE_LIVE off (testKeySuite, issue 34): it runs no operation with a live key, so
 * a production server answers it the same. Test mode (`mode=test`): the test webhooks a test key
 * lists, each mode changing its own only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertError, assertOk } from '../support/assertions.js';
import { assertEnvelope, SECRET_RE } from '../support/api-fuzz.js';
import { call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { seedTenant } from '../support/seed.js';
import { PUBLIC_ADDRESS, seedWebhook, uniqueHost } from '../support/webhook-hosts.js';
import { createHook, emit, onlyDelivery, WEBHOOK_TEST_ENV, worker } from '../support/webhooks.js';
import { consoleCall, seedSignedInOrganization, signInAs, type ConsoleLogin } from '../support/console.js';

const receiver = HttpsReceiver.forThisFile();
const wsUrl = (workspaceId: string) => `/console/api/workspaces/${workspaceId}`;
const UNKNOWN = '0190a000-0000-7000-8000-00000000abcd';

/** Adds `hostname` through the console and verifies it by its DNS TXT record (the fake resolver). */
async function verifyByDns(ctx: TestContext, login: ConsoleLogin, workspaceId: string, hostname: string, addresses = [PUBLIC_ADDRESS]) {
  const added = assertOk(await consoleCall(ctx, login, 'POST', `${wsUrl(workspaceId)}/domains`, { body: { hostname } })).data.domain;
  ctx.txtRecords.set(added.dnsRecordName, [[added.verificationToken]]);
  ctx.hostAddresses.set(hostname, addresses);
  const checked = assertOk(await consoleCall(ctx, login, 'POST', `${wsUrl(workspaceId)}/domains/${hostname}/check`, { body: { method: 'dns' } })).data.domain;
  assert.equal(checked.status, 'verified');
  return checked;
}

describeEachDatabase(
  'console webhooks and domains',
  (get) => {
    test('a domain: added with its instructions, refused until the TXT record holds the token, then verified', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const login = await signInAs(ctx, t.user.id);
      const hostname = uniqueHost();
      const added = assertOk(await consoleCall(ctx, login, 'POST', `${wsUrl(t.workspace.id)}/domains`, { body: { hostname: ` ${hostname.toUpperCase()}. ` } }));
      assert.equal(added.code, 'CONSOLE_DOMAINS_ADD');
      const domain = added.data.domain;
      assert.equal(domain.hostname, hostname);
      assert.equal(domain.status, 'pending');
      assert.match(domain.verificationToken, /^service-verify=/);
      assert.equal(domain.dnsRecordName, `_service-verify.${hostname}`);
      assert.equal(domain.httpFileUrl, `https://${hostname}/.well-known/service-verify.txt`);
      // Adding it again returns the same row.
      assert.equal(assertOk(await consoleCall(ctx, login, 'POST', `${wsUrl(t.workspace.id)}/domains`, { body: { hostname } })).data.domain.verificationToken, domain.verificationToken);

      const check = (body: unknown, host = hostname) => consoleCall(ctx, login, 'POST', `${wsUrl(t.workspace.id)}/domains/${host}/check`, { body });
      const refused = assertError(await check({ method: 'dns' }), 400, 'DOMAIN_NOT_VERIFIED');
      assert.match(refused.message, new RegExp(`_service-verify\\.${hostname.replace(/\./g, '\\.')}`));
      ctx.txtRecords.set(domain.dnsRecordName, [['service-verify=somebody-else']]);
      assertError(await check({ method: 'dns' }), 400, 'DOMAIN_NOT_VERIFIED');
      ctx.txtRecords.set(domain.dnsRecordName, [[domain.verificationToken]]);
      const verified = assertOk(await check({ method: 'dns' }));
      assert.equal(verified.code, 'CONSOLE_DOMAINS_CHECK');
      assert.equal(verified.data.domain.status, 'verified');
      assert.equal(verified.data.domain.verifiedMethod, 'dns');

      const list = assertOk(await consoleCall(ctx, login, 'GET', `${wsUrl(t.workspace.id)}/domains`));
      assert.equal(list.code, 'CONSOLE_DOMAINS_LIST');
      assert.equal(list.data.canManage, true);
      assert.deepEqual(list.data.items.map((d: { hostname: string; status: string }) => [d.hostname, d.status]), [[hostname, 'verified']]);

      // Bad input: the documented 400s, never 500.
      for (const body of [{}, { hostname: '' }, { hostname: 'localhost' }, { hostname: '127.0.0.1' }, { hostname: 'a b.example' }, { hostname: 7 }, { hostname, extra: 1 }]) {
        assertError(await consoleCall(ctx, login, 'POST', `${wsUrl(t.workspace.id)}/domains`, { body }), 400, 'INVALID_REQUEST');
      }
      for (const body of [{}, { method: 'operator' }, { method: 'smtp' }, null]) assertError(await check(body), 400, 'INVALID_REQUEST');
      assertError(await check({ method: 'dns' }, uniqueHost()), 404, 'NOT_FOUND');
      assertError(await check({ method: 'dns' }, 'bad_host.example'), 400, 'INVALID_REQUEST');
      assertError(await check({ method: 'dns' }, '127.0.0.1'), 400, 'INVALID_REQUEST');
    });

    test('test mode (mode=test): the test webhooks a test key lists, on the live workspace\'s verified domains; each mode changes its own only', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { mode: 'test' });
      const login = await signInAs(ctx, t.user.id);
      const hooks = `${wsUrl(t.workspace.id)}/webhooks`;
      const hostname = uniqueHost();
      await verifyByDns(ctx, login, t.workspace.id, hostname);
      const testHook = assertOk(await consoleCall(ctx, login, 'POST', `${hooks}?mode=test`, { body: { url: `https://${hostname}/test`, eventTypes: ['job.completed'] } })).data.webhook;
      const liveHook = assertOk(await consoleCall(ctx, login, 'POST', hooks, { body: { url: `https://${hostname}/live`, eventTypes: ['job.completed'] } })).data.webhook;
      assert.deepEqual({ workspaceId: testHook.workspaceId, livemode: testHook.livemode }, { workspaceId: t.workspace.id, livemode: false });
      assert.equal(liveHook.livemode, true);
      // The test key lists the test webhook only, as the console does in test mode; the live list the live one.
      const apiList = assertOk(await call(ctx, 'GET', '/v1/webhooks', { secret: t.secret, workspaceId: t.workspace.id })).data.items;
      assert.deepEqual(apiList.map((w: { id: string }) => w.id), [testHook.id]);
      const testList = assertOk(await consoleCall(ctx, login, 'GET', `${hooks}?mode=test`)).data.items;
      assert.deepEqual(testList, apiList);
      assert.deepEqual(assertOk(await consoleCall(ctx, login, 'GET', hooks)).data.items.map((w: { id: string }) => w.id), [liveHook.id]);
      // The other mode's webhook is 404 on every change and on its deliveries.
      for (const [id, q] of [[liveHook.id, '?mode=test'], [testHook.id, '']] as const) {
        for (const [method, url] of [['POST', `${hooks}/${id}/rotate${q}`], ['POST', `${hooks}/${id}/revoke${q}`], ['GET', `${hooks}/${id}/deliveries${q}`]] as const) {
          assertError(await consoleCall(ctx, login, method, url, method === 'POST' ? { body: {} } : {}), 404, 'NOT_FOUND');
        }
      }
      assert.match(assertOk(await consoleCall(ctx, login, 'POST', `${hooks}/${testHook.id}/rotate?mode=test`, { body: {} })).data.secret, SECRET_RE);
      assert.equal(assertOk(await consoleCall(ctx, login, 'POST', `${hooks}/${testHook.id}/revoke?mode=test`, { body: {} })).data.webhook.revokedAt !== null, true);
      assert.equal(assertOk(await consoleCall(ctx, login, 'GET', hooks)).data.items[0].revokedAt, null, 'the live webhook untouched');
    });

    test('webhooks: only on a verified hostname; the secret shown at create and rotate only; revoke', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const login = await signInAs(ctx, t.user.id);
      const hooks = `${wsUrl(t.workspace.id)}/webhooks`;
      const hostname = uniqueHost();
      const unverified = await consoleCall(ctx, login, 'POST', hooks, { body: { url: `https://${hostname}/hooks`, eventTypes: ['job.completed'] } });
      assert.equal(assertError(unverified, 400, 'WEBHOOK_URL_REJECTED').details.reason, 'DOMAIN_NOT_VERIFIED');
      await verifyByDns(ctx, login, t.workspace.id, hostname);
      const created = assertOk(await consoleCall(ctx, login, 'POST', hooks, { body: { url: `https://${hostname}/hooks`, eventTypes: ['job.completed', 'job.failed'] } }));
      assert.equal(created.code, 'CONSOLE_WEBHOOKS_CREATE');
      assert.match(created.data.secret, SECRET_RE);
      const webhook = created.data.webhook;
      assert.equal(webhook.enabled, true);

      const list = assertOk(await consoleCall(ctx, login, 'GET', hooks));
      assert.equal(list.code, 'CONSOLE_WEBHOOKS_LIST');
      assert.deepEqual(list.data.items.map((w: { id: string }) => w.id), [webhook.id]);
      assert.ok(list.data.eventTypes.includes('job.completed'));
      assert.equal(list.data.canManage, true);
      assert.equal(SECRET_RE.test(list.body), false, 'the list never carries a secret');
      // The public API sees the same webhook.
      assert.equal(assertOk(await call(ctx, 'GET', '/v1/webhooks', { secret: t.secret, workspaceId: t.workspace.id })).data.items[0].id, webhook.id);

      const rotated = assertOk(await consoleCall(ctx, login, 'POST', `${hooks}/${webhook.id}/rotate`));
      assert.equal(rotated.code, 'CONSOLE_WEBHOOKS_ROTATE');
      assert.match(rotated.data.secret, SECRET_RE);
      assert.notEqual(rotated.data.secret, created.data.secret);
      const revoked = assertOk(await consoleCall(ctx, login, 'POST', `${hooks}/${webhook.id}/revoke`));
      assert.equal(revoked.code, 'CONSOLE_WEBHOOKS_REVOKE');
      assert.ok(revoked.data.webhook.revokedAt);
      assertError(await consoleCall(ctx, login, 'POST', `${hooks}/${webhook.id}/rotate`), 409, 'WEBHOOK_REVOKED');

      for (const body of [{}, { url: `https://${hostname}/h` }, { url: `https://${hostname}/h`, eventTypes: [] }, { url: `https://${hostname}/h`, eventTypes: ['job.nope'] }, { url: `https://${hostname}/h`, eventTypes: ['job.completed', 'job.completed'] }, { url: 5, eventTypes: ['job.completed'] }, { url: `https://${hostname}/h`, eventTypes: ['job.completed'], secret: 'x' }]) {
        assertError(await consoleCall(ctx, login, 'POST', hooks, { body }), 400, 'INVALID_REQUEST');
      }
      for (const [url, reason] of [[`http://${hostname}/h`, 'NOT_HTTPS'], [`https://u:p@${hostname}/h`, 'USERINFO_NOT_ALLOWED'], ['not a url', 'INVALID_URL']] as const) {
        assert.equal(assertError(await consoleCall(ctx, login, 'POST', hooks, { body: { url, eventTypes: ['job.completed'] } }), 400, 'WEBHOOK_URL_REJECTED').details.reason, reason);
      }
      assertError(await consoleCall(ctx, login, 'POST', `${hooks}/${webhook.id}/revoke`, { body: { now: true } }), 400, 'INVALID_REQUEST');
      assertError(await consoleCall(ctx, login, 'POST', `${hooks}/not-a-uuid/rotate`), 400, 'INVALID_REQUEST');
      assertError(await consoleCall(ctx, login, 'POST', `${hooks}/${UNKNOWN}/rotate`), 404, 'NOT_FOUND');
    });

    test('deliveries with status and attempts; a failed one is replayed, with the public API\'s rules', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      const login = await signInAs(ctx, hook.tenant.user.id);
      const deliveries = `${wsUrl(hook.tenant.workspace.id)}/webhooks/${hook.webhookId}/deliveries`;
      const eventId = await emit(ctx, hook.tenant.workspace.id);
      receiver.reply({ status: 410 });
      await worker(ctx).runOnce();
      const row = await onlyDelivery(ctx, hook.webhookId);
      const listed = assertOk(await consoleCall(ctx, login, 'GET', deliveries));
      assert.equal(listed.code, 'CONSOLE_WEBHOOKS_DELIVERIES');
      assert.equal(listed.data.hasMore, false);
      const [d] = listed.data.items;
      assert.deepEqual([d.id, d.eventId, d.status, d.attempts, d.replayCount, d.lastStatusCode], [row.id, eventId, 'failed', 1, 0, 410]);

      const replayed = assertOk(await consoleCall(ctx, login, 'POST', `${deliveries}/${row.id}/replay`));
      assert.equal(replayed.code, 'CONSOLE_WEBHOOKS_REPLAY');
      assert.deepEqual([replayed.data.delivery.status, replayed.data.delivery.replayCount], ['pending', 1]);
      assertError(await consoleCall(ctx, login, 'POST', `${deliveries}/${row.id}/replay`), 409, 'DELIVERY_NOT_FAILED');
      await worker(ctx).runOnce();
      const after = assertOk(await consoleCall(ctx, login, 'GET', deliveries)).data.items[0];
      assert.deepEqual([after.status, after.attempts, after.replayCount, after.lastStatusCode], ['succeeded', 2, 1, 200]);
      assert.equal(receiver.requests.length, 2);
      assert.ok(receiver.requests.every((r) => r.headers['service-event-id'] === eventId));

      assertError(await consoleCall(ctx, login, 'POST', `${deliveries}/${UNKNOWN}/replay`), 404, 'NOT_FOUND');
      assertError(await consoleCall(ctx, login, 'POST', `${deliveries}/nope/replay`), 400, 'INVALID_REQUEST');
      for (const q of ['limit=0', 'limit=x', 'cursor=', 'extra=1']) assertError(await consoleCall(ctx, login, 'GET', `${deliveries}?${q}`), 400, 'INVALID_REQUEST');
      const badCursor = await consoleCall(ctx, login, 'GET', `${deliveries}?cursor=garbage`);
      assert.equal(badCursor.statusCode, 400, badCursor.body);
      assertEnvelope(badCursor);
    });

    test('roles: members read without changing anything (403); admins change', async () => {
      const ctx = get();
      const o = await seedSignedInOrganization(ctx);
      const base = wsUrl(o.workspace.id);
      const hostname = uniqueHost();
      await verifyByDns(ctx, o.admin, o.workspace.id, hostname);
      const pending = assertOk(await consoleCall(ctx, o.owner, 'POST', `${base}/domains`, { body: { hostname: uniqueHost() } })).data.domain;
      const created = assertOk(await consoleCall(ctx, o.admin, 'POST', `${base}/webhooks`, { body: { url: `https://${hostname}/h`, eventTypes: ['job.completed'] } })).data;
      const webhookId = created.webhook.id as string;
      const eventId = await emit(ctx, o.workspace.id);
      assert.ok(eventId);
      const delivery = await onlyDelivery(ctx, webhookId);
      await ctx.deps.db.updateTable('webhook_deliveries').set({ status: 'failed' }).where('id', '=', delivery.id).execute();

      const domains = assertOk(await consoleCall(ctx, o.member, 'GET', `${base}/domains`)).data;
      assert.equal(domains.canManage, false);
      assert.equal(domains.items.length, 2);
      const hooks = assertOk(await consoleCall(ctx, o.member, 'GET', `${base}/webhooks`)).data;
      assert.equal(hooks.canManage, false);
      assert.deepEqual(hooks.items.map((w: { id: string }) => w.id), [webhookId]);
      assert.equal(assertOk(await consoleCall(ctx, o.member, 'GET', `${base}/webhooks/${webhookId}/deliveries`)).data.items[0].status, 'failed');

      const changes: [string, unknown][] = [
        [`${base}/domains`, { hostname: uniqueHost() }],
        [`${base}/domains/${pending.hostname}/check`, { method: 'dns' }],
        [`${base}/webhooks`, { url: `https://${hostname}/other`, eventTypes: ['job.completed'] }],
        [`${base}/webhooks/${webhookId}/rotate`, undefined],
        [`${base}/webhooks/${webhookId}/revoke`, undefined],
        [`${base}/webhooks/${webhookId}/deliveries/${delivery.id}/replay`, undefined],
      ];
      ctx.txtRecords.set(pending.dnsRecordName, [[pending.verificationToken]]);
      for (const [url, body] of changes) {
        const refused = assertError(await consoleCall(ctx, o.member, 'POST', url, { body }), 403, 'FORBIDDEN');
        assert.match(refused.message, /owners and admins/);
      }
      const still = assertOk(await consoleCall(ctx, o.owner, 'GET', `${base}/webhooks`)).data.items;
      assert.deepEqual(still.map((w: { id: string; revokedAt: string | null }) => [w.id, w.revokedAt]), [[webhookId, null]]);
      assert.equal((await onlyDelivery(ctx, webhookId)).status, 'failed');
      assert.equal(assertOk(await consoleCall(ctx, o.owner, 'GET', `${base}/domains`)).data.items.length, 2);
      assert.equal((await ctx.deps.db.selectFrom('domains').select('status').where('hostname', '=', pending.hostname).executeTakeFirstOrThrow()).status, 'pending');

      // The admin may do each of them.
      assert.equal(assertOk(await consoleCall(ctx, o.admin, 'POST', `${base}/domains/${pending.hostname}/check`, { body: { method: 'dns' } })).data.domain.status, 'verified');
      assert.match(assertOk(await consoleCall(ctx, o.admin, 'POST', `${base}/webhooks/${webhookId}/rotate`)).data.secret, SECRET_RE);
      assertOk(await consoleCall(ctx, o.admin, 'POST', `${base}/webhooks/${webhookId}/deliveries/${delivery.id}/replay`));
    });

    test('another user\'s workspace, webhook or delivery is 404 on every endpoint; changes need Origin and CSRF token', async () => {
      const ctx = get();
      const mine = await seedTenant(ctx.deps);
      const theirs = await seedTenant(ctx.deps);
      const login = await signInAs(ctx, mine.user.id);
      const their = await seedWebhook(ctx, theirs.workspace.id);
      const eventId = await emit(ctx, theirs.workspace.id);
      assert.ok(eventId);
      const theirDelivery = await onlyDelivery(ctx, their.webhook.id);
      const theirHost = new URL(their.webhook.url).hostname;
      const mineHook = await seedWebhook(ctx, mine.workspace.id);

      const endpoints = (ws: string, hook: string, delivery: string, host: string): ['GET' | 'POST', string, unknown][] => [
        ['GET', `${wsUrl(ws)}/domains`, undefined],
        ['POST', `${wsUrl(ws)}/domains`, { hostname: uniqueHost() }],
        ['POST', `${wsUrl(ws)}/domains/${host}/check`, { method: 'dns' }],
        ['GET', `${wsUrl(ws)}/webhooks`, undefined],
        ['POST', `${wsUrl(ws)}/webhooks`, { url: `https://${host}/x`, eventTypes: ['job.completed'] }],
        ['POST', `${wsUrl(ws)}/webhooks/${hook}/rotate`, undefined],
        ['POST', `${wsUrl(ws)}/webhooks/${hook}/revoke`, undefined],
        ['GET', `${wsUrl(ws)}/webhooks/${hook}/deliveries`, undefined],
        ['POST', `${wsUrl(ws)}/webhooks/${hook}/deliveries/${delivery}/replay`, undefined],
      ];
      for (const [method, url, body] of [...endpoints(theirs.workspace.id, their.webhook.id, theirDelivery.id, theirHost), ...endpoints(UNKNOWN, their.webhook.id, theirDelivery.id, theirHost)]) {
        const res = await consoleCall(ctx, login, method, url, { body });
        assertError(res, 404, 'NOT_FOUND');
        assert.equal(res.body.includes(theirHost), false, `${url} reveals nothing`);
      }
      // Their webhook, delivery and hostname through my own workspace's paths.
      for (const [method, url, body] of endpoints(mine.workspace.id, their.webhook.id, theirDelivery.id, theirHost).filter(([, u]) => u.includes(their.webhook.id) || u.includes('/check'))) {
        assertError(await consoleCall(ctx, login, method, url, { body }), 404, 'NOT_FOUND');
      }
      // Their hostname is not verified here: a webhook on it is refused.
      const onTheirs = await consoleCall(ctx, login, 'POST', `${wsUrl(mine.workspace.id)}/webhooks`, { body: { url: `https://${theirHost}/x`, eventTypes: ['job.completed'] } });
      assert.equal(assertError(onTheirs, 400, 'WEBHOOK_URL_REJECTED').details.reason, 'DOMAIN_NOT_VERIFIED');
      const theirRow = await ctx.deps.db.selectFrom('webhooks').select(['revoked_at_ms']).where('id', '=', their.webhook.id).executeTakeFirstOrThrow();
      assert.equal(theirRow.revoked_at_ms, null);
      assert.equal((await onlyDelivery(ctx, their.webhook.id)).replay_count, theirDelivery.replay_count);

      // CSRF, origin, API keys.
      const rotate = `${wsUrl(mine.workspace.id)}/webhooks/${mineHook.webhook.id}/rotate`;
      assertError(await consoleCall(ctx, login, 'POST', rotate, { origin: null }), 403, 'FORBIDDEN_ORIGIN');
      assertError(await consoleCall(ctx, login, 'POST', rotate, { origin: 'https://evil.example' }), 403, 'FORBIDDEN_ORIGIN');
      assertError(await consoleCall(ctx, login, 'POST', rotate, { csrfToken: null }), 403, 'FORBIDDEN');
      assertError(await consoleCall(ctx, undefined, 'POST', rotate), 401, 'UNAUTHENTICATED');
      assertError(await consoleCall(ctx, login, 'GET', `${wsUrl(mine.workspace.id)}/webhooks`, { headers: { authorization: `Bearer ${mine.secret}` } }), 401, 'UNAUTHENTICATED');
      assertError(await consoleCall(ctx, login, 'POST', `${wsUrl(mine.workspace.id)}/domains`, { body: { hostname: uniqueHost() }, csrfToken: null }), 403, 'FORBIDDEN');
      assert.equal(assertOk(await consoleCall(ctx, login, 'GET', `${wsUrl(mine.workspace.id)}/domains`)).data.items.length, 1);
    });
  },
  testKeySuite({ env: WEBHOOK_TEST_ENV }),
);
