/**
 * Property tests of the console API's inputs (issue 35), like the public API's *-fuzz tests:
 * random key bodies (create and update), roll bodies, path ids, sign-in bodies and cookies, domain
 * and webhook bodies, webhook, delivery and media ids, and uploads (answered exactly as the public
 * upload answers the same bytes). Oracles from the contract:
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
import { EVENT_TYPES } from '../../src/modules/events/store.js';
import { normaliseHostname } from '../../src/modules/domains/service.js';
import { multipartBuffer } from '../support/media.js';
import { contentArb, declaredArb } from '../support/media-upload-arbitraries.js';
import { seedWebhook, uniqueHost, verifyHost } from '../support/webhook-hosts.js';
import { emit, onlyDelivery } from '../support/webhooks.js';

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
      fc.oneof(wrongType, fc.record({ overlapSeconds: fc.oneof(fc.integer({ max: -1 }), fc.integer({ min: 30 * 24 * 3600 + 1 }), fc.double({ noDefaultInfinity: true, noNaN: true }).filter((d) => !Number.isInteger(d)), wrongType.filter((v) => !Number.isInteger(v))) }), fc.constant({})).map((body) => ({ body, valid: false })),
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

  test('random domain and webhook bodies to own, foreign and unknown workspaces', async () => {
    const ctx = get();
    const mine = await seedTenant(ctx.deps);
    const theirs = await seedTenant(ctx.deps);
    await ctx.deps.db.updateTable('workspaces').set({ name: 'Their secret workspace' }).where('id', '=', theirs.workspace.id).execute();
    const myHost = await verifyHost(ctx, mine.workspace.id);
    const their = await seedWebhook(ctx, theirs.workspace.id);
    const theirHost = new URL(their.webhook.url).hostname;
    const login = await signInAs(ctx, mine.user.id);
    const foreign = ['Their secret workspace', their.webhook.id, theirHost];
    const targets = { own: mine.workspace.id, foreign: theirs.workspace.id, unknown: '0190a000-0000-7000-8000-00000000abcd', malformed: 'ws-1' } as const;
    type Url = { url: unknown; expect: 'ok' | 'DOMAIN_NOT_VERIFIED' | 'NOT_HTTPS' | 'rejected' | 'schema' };
    const urlArb: fc.Arbitrary<Url> = fc.oneof(
      fc.stringMatching(/^\/[a-z0-9/_-]{0,20}$/).map((path): Url => ({ url: `https://${myHost}${path}`, expect: 'ok' })),
      fc.constantFrom<Url>({ url: `https://${theirHost}/x`, expect: 'DOMAIN_NOT_VERIFIED' }, { url: `https://${uniqueHost()}/x`, expect: 'DOMAIN_NOT_VERIFIED' }, { url: `http://${myHost}/x`, expect: 'NOT_HTTPS' }),
      fc.string({ minLength: 1, maxLength: 40 }).map((url): Url => ({ url, expect: 'rejected' })),
      fc.oneof(wrongType, fc.constant('')).map((url): Url => ({ url, expect: 'schema' })),
    );
    const eventTypesArb = fc.oneof(
      { weight: 4, arbitrary: fc.uniqueArray(fc.constantFrom(...EVENT_TYPES), { minLength: 1, maxLength: 4 }).map((v) => ({ v: v as unknown, valid: true })) },
      { weight: 1, arbitrary: fc.oneof(wrongType, fc.constant([]), fc.constant(['job.nope']), fc.constant(['job.completed', 'job.completed'])).map((v) => ({ v, valid: false })) },
    );
    const hostnameArb = fc.oneof(
      fc.stringMatching(/^[a-z0-9]{1,12}\.example$/).map((h) => ({ v: h as unknown, schema: true })),
      fc.string({ minLength: 1, maxLength: 60 }).map((h) => ({ v: h as unknown, schema: true })),
      fc.oneof(wrongType, fc.constant(''), fc.constant('x'.repeat(254))).map((h) => ({ v: h, schema: false })),
    );
    const caseArb = fc.oneof(
      fc.record({ kind: fc.constant('webhook' as const), url: urlArb, eventTypes: eventTypesArb, enabled: maybe(fc.oneof(fc.boolean(), wrongType)), extra: fc.boolean() }),
      fc.record({ kind: fc.constant('domain' as const), hostname: hostnameArb, extra: fc.boolean() }),
    );
    await check(
      fc.asyncProperty(caseArb, fc.constantFrom(...(Object.keys(targets) as (keyof typeof targets)[])), async (c, target) => {
        let body: Record<string, unknown>;
        let schemaValid: boolean;
        if (c.kind === 'webhook') {
          body = { url: c.url.url, eventTypes: c.eventTypes.v, ...(c.enabled === ABSENT ? {} : { enabled: c.enabled }), ...(c.extra ? { secret: 'whsec_x' } : {}) };
          schemaValid = c.url.expect !== 'schema' && c.eventTypes.valid && (c.enabled === ABSENT || typeof c.enabled === 'boolean') && !c.extra;
        } else {
          body = { hostname: c.hostname.v, ...(c.extra ? { workspaceId: mine.workspace.id } : {}) };
          schemaValid = c.hostname.schema && !c.extra;
        }
        const res = await consoleCall(ctx, login, 'POST', `/console/api/workspaces/${targets[target]}/${c.kind === 'webhook' ? 'webhooks' : 'domains'}`, { body });
        assert.ok(res.statusCode < 500, res.body);
        assertNoForeignData(foreign, JSON.stringify(body), res.body, c.kind);
        if (target === 'malformed' || !schemaValid) return void assert.equal(assertEnvelope(res).code, 'INVALID_REQUEST', `${JSON.stringify(body)}: ${res.body}`);
        if (target !== 'own') return void assert.equal(assertEnvelope(res).code, 'NOT_FOUND', res.body);
        if (c.kind === 'domain') {
          let hostname: string | undefined;
          try {
            hostname = normaliseHostname(c.hostname.v as string);
          } catch {
            hostname = undefined;
          }
          if (hostname === undefined) return void assert.equal(assertEnvelope(res).code, 'INVALID_REQUEST', res.body);
          assert.equal(res.statusCode, 200, res.body);
          return void assert.equal(res.json().data.domain.hostname, hostname);
        }
        if (c.url.expect === 'ok') {
          assert.equal(res.statusCode, 200, `${JSON.stringify(body)}: ${res.body}`);
          const revoked = await consoleCall(ctx, login, 'POST', `/console/api/workspaces/${mine.workspace.id}/webhooks/${res.json().data.webhook.id}/revoke`);
          return void assert.equal(revoked.statusCode, 200, revoked.body);
        }
        const refused = assertEnvelope(res);
        assert.equal(refused.code, 'WEBHOOK_URL_REJECTED', `${JSON.stringify(body)}: ${res.body}`);
        if (c.url.expect !== 'rejected') assert.equal(refused.details.reason, c.url.expect);
      }),
      RUNS,
    );
    const theirRow = await ctx.deps.db.selectFrom('webhooks').select(['revoked_at_ms']).where('workspace_id', '=', theirs.workspace.id).execute();
    assert.deepEqual(theirRow, [{ revoked_at_ms: null }], 'their webhook is untouched');
  });

  test('random webhook, delivery and media ids on every path', async () => {
    const ctx = get();
    const mine = await seedTenant(ctx.deps);
    const theirs = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, mine.user.id);
    const hooks = { mine: (await seedWebhook(ctx, mine.workspace.id)).webhook.id, theirs: (await seedWebhook(ctx, theirs.workspace.id)).webhook.id };
    await emit(ctx, mine.workspace.id);
    await emit(ctx, theirs.workspace.id);
    const deliveries = { mine: (await onlyDelivery(ctx, hooks.mine)).id, theirs: (await onlyDelivery(ctx, hooks.theirs)).id };
    const upload = async (t: typeof mine) => {
      const form = multipartBuffer(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64'));
      const res = await call(ctx, 'POST', '/v1/media/upload', { secret: t.secret, workspaceId: t.workspace.id, body: form.body, headers: { 'content-type': form.contentType } });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.id as string;
    };
    const media = { mine: await upload(mine), theirs: await upload(theirs) };
    const theirRows = async () => ctx.deps.db.selectFrom('webhooks').selectAll().where('workspace_id', '=', theirs.workspace.id).execute();
    const before = await theirRows();
    const idArb = fc.constantFrom('mine', 'theirs', 'unknown', 'malformed');
    const pick = (ids: { mine: string; theirs: string }, which: string) => ({ ...ids, unknown: '0190a000-0000-7000-8000-00000000abcd', malformed: '0190a000-0000-7000-8000' })[which as 'mine']!;
    const paths = ['rotate', 'deliveries', 'replay', 'download'] as const;
    await check(
      fc.asyncProperty(fc.constantFrom(...paths), fc.constantFrom('mine', 'theirs', 'unknown', 'malformed'), idArb, idArb, async (path, ws, first, second) => {
        const workspaceId = pick({ mine: mine.workspace.id, theirs: theirs.workspace.id }, ws);
        const base = `/console/api/workspaces/${workspaceId}`;
        const [method, url, ids] = {
          rotate: ['POST', `${base}/webhooks/${pick(hooks, first)}/rotate`, [first]],
          deliveries: ['GET', `${base}/webhooks/${pick(hooks, first)}/deliveries`, [first]],
          replay: ['POST', `${base}/webhooks/${pick(hooks, first)}/deliveries/${pick(deliveries, second)}/replay`, [first, second]],
          download: ['GET', `${base}/media/${pick(media, first)}/download`, [first]],
        }[path] as ['GET' | 'POST', string, string[]];
        const res = await consoleCall(ctx, login, method, url);
        assert.ok(res.statusCode < 500, res.body);
        assertNoForeignData([hooks.theirs, deliveries.theirs, media.theirs], url, res.body, path);
        if (ws === 'malformed' || ids.includes('malformed')) return void assert.equal(assertEnvelope(res).code, 'INVALID_REQUEST', `${url}: ${res.body}`);
        if (ws !== 'mine' || ids.some((i) => i !== 'mine')) return void assert.equal(assertEnvelope(res).code, 'NOT_FOUND', `${url}: ${res.body}`);
        // A pending delivery is not replayable; everything else of one's own succeeds.
        if (path === 'replay') return void assert.equal(assertEnvelope(res).code, 'DELIVERY_NOT_FAILED', res.body);
        assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      }),
      RUNS,
    );
    assert.deepEqual(await theirRows(), before, 'their webhook was never rotated');
    assert.equal((await onlyDelivery(ctx, hooks.theirs)).replay_count, 0);
  });

  test('random uploads: the console answers exactly as the public upload does; never into a foreign workspace', async () => {
    const ctx = get();
    const mine = await seedTenant(ctx.deps);
    const theirs = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, mine.user.id);
    const countTheirs = async () => (await ctx.deps.db.selectFrom('media').select('id').where('workspace_id', '=', theirs.workspace.id).execute()).length;
    const uploadArb = contentArb.chain((content) => declaredArb(content).map((declared) => ({ content, declared: declared ?? 'application/octet-stream' })));
    await check(
      fc.asyncProperty(uploadArb, fc.constantFrom('own', 'foreign'), fc.stringMatching(/^[A-Za-z0-9._-]{1,16}$/), async ({ content, declared }, target, filename) => {
        const form = multipartBuffer(content.bytes, declared, filename);
        const workspaceId = target === 'own' ? mine.workspace.id : theirs.workspace.id;
        const res = await consoleCall(ctx, login, 'POST', `/console/api/workspaces/${workspaceId}/media/upload`, { body: form.body, headers: { 'content-type': form.contentType } });
        assert.ok(res.statusCode < 500, res.body);
        if (target === 'foreign') return void assert.equal(assertEnvelope(res).code, 'NOT_FOUND', res.body);
        const api = await call(ctx, 'POST', '/v1/media/upload', { secret: mine.secret, workspaceId, body: form.body, headers: { 'content-type': form.contentType } });
        assert.equal(res.statusCode, api.statusCode, `${content.kind} as ${declared}: console ${res.body}, API ${api.body}`);
        if (api.statusCode !== 200) {
          const [a, b] = [assertEnvelope(res), assertEnvelope(api)];
          return void assert.deepEqual([a.code, a.message, a.details], [b.code, b.message, b.details]);
        }
        const [a, b] = [res.json().data.media, api.json().data];
        assert.deepEqual([a.name, a.mimeType, a.sizeBytes, a.sha256], [b.name, b.mimeType, b.sizeBytes, b.sha256]);
      }),
      RUNS,
    );
    assert.equal(await countTheirs(), 0, 'nothing reached their workspace');
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
