/**
 * Property tests of the operator's reads and changes (decisions.md section 6, issue 19): random
 * path ids, queries and bodies on every admin read and change. Never a 5xx; every refusal is a
 * registered error that writes nothing; reads write nothing and never show a secret; accepted
 * adjustments keep the ledger invariants and rolls give a working secret.
 *
 * ADMIN_FUZZ_RUNS (default 100) scales every property's number of runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sha256Hex } from '../../src/lib/crypto.js';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { admin, describeEachDatabase, TEST_ADMIN_TOKEN, testKeySuite } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { seedWebhook } from '../support/webhook-hosts.js';
import { drain, run } from '../support/jobs.js';
import { check } from '../support/fast-check.js';
import { assertEnvelope, assertNothingWritten, canon, snapshot } from '../support/admin-state.js';
import { BAD_RANGES, BAD_TIMES, MAX_SAFE, NOW, rawIdArb, runs, SECRET_RE, unicodeText, UNPARSEABLE_TIMES, WEIRD_STRINGS } from '../support/admin-requests.js';

// ---- operator reads and changes (decisions.md section 6, issue 19) -----------------------------

type ReadKind = 'user' | 'org' | 'ws' | 'key' | 'job' | 'webhook';
/** Each read and change with the kinds of its path ids. */
const READS_AND_CHANGES: { method: 'GET' | 'POST'; path: (ids: string[]) => string; kinds: ReadKind[]; paged?: boolean; body?: 'update' | 'roll' | 'adjust' }[] = [
  { method: 'GET', path: () => '/admin/v1/users', kinds: [], paged: true },
  { method: 'GET', path: ([u]) => `/admin/v1/users/${u}`, kinds: ['user'] },
  { method: 'GET', path: ([u]) => `/admin/v1/users/${u}/keys`, kinds: ['user'], paged: true },
  { method: 'GET', path: () => '/admin/v1/organizations', kinds: [], paged: true },
  { method: 'GET', path: ([o]) => `/admin/v1/organizations/${o}`, kinds: ['org'] },
  { method: 'GET', path: () => '/admin/v1/workspaces', kinds: [], paged: true },
  { method: 'GET', path: ([w]) => `/admin/v1/workspaces/${w}`, kinds: ['ws'] },
  { method: 'GET', path: ([w]) => `/admin/v1/workspaces/${w}/keys`, kinds: ['ws'], paged: true },
  { method: 'GET', path: ([w]) => `/admin/v1/workspaces/${w}/jobs`, kinds: ['ws'], paged: true },
  { method: 'GET', path: ([w]) => `/admin/v1/workspaces/${w}/transactions`, kinds: ['ws'], paged: true },
  { method: 'GET', path: ([w]) => `/admin/v1/workspaces/${w}/webhooks`, kinds: ['ws'] },
  { method: 'GET', path: ([w, h]) => `/admin/v1/workspaces/${w}/webhooks/${h}/deliveries`, kinds: ['ws', 'webhook'], paged: true },
  { method: 'GET', path: ([w]) => `/admin/v1/workspaces/${w}/provider-keys`, kinds: ['ws'] },
  { method: 'GET', path: ([k]) => `/admin/v1/keys/${k}`, kinds: ['key'] },
  { method: 'GET', path: ([j]) => `/admin/v1/jobs/${j}`, kinds: ['job'] },
  { method: 'POST', path: ([k]) => `/admin/v1/keys/${k}/update`, kinds: ['key'], body: 'update' },
  { method: 'POST', path: ([k]) => `/admin/v1/keys/${k}/roll`, kinds: ['key'], body: 'roll' },
  { method: 'POST', path: ([w]) => `/admin/v1/workspaces/${w}/credits/adjust`, kinds: ['ws'], body: 'adjust' },
];

type PathRef = { ref: 'own'; pick: number } | { ref: 'other'; pick: number } | { ref: 'unknown'; id: string } | { ref: 'raw'; text: string };
const pathRefArb: fc.Arbitrary<PathRef> = fc.oneof(
  { weight: 12, arbitrary: fc.nat().map((pick): PathRef => ({ ref: 'own', pick })) },
  { weight: 1, arbitrary: fc.nat().map((pick): PathRef => ({ ref: 'other', pick })) },
  { weight: 1, arbitrary: fc.uuid().map((id): PathRef => ({ ref: 'unknown', id })) },
  { weight: 1, arbitrary: rawIdArb.filter((t) => !/^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/i.test(t)).map((text): PathRef => ({ ref: 'raw', text })) },
);
const LIMITS = ['1', '2', '25', '100', '0', '101', '-1', '1e1', '0x10', '2.0', '', ' 5', 'abc', '9007199254740993'];
const queryArb = fc.record(
  {
    limit: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('1', '2', '25', '100') }, { weight: 1, arbitrary: fc.oneof(fc.constantFrom(...LIMITS), fc.string({ maxLength: 6 })) }),
    cursor: fc.oneof({ weight: 2, arbitrary: fc.constant('captured') }, { weight: 1, arbitrary: fc.oneof(fc.string({ minLength: 0, maxLength: 40 }), fc.constant('x'.repeat(201))) }),
    extra: fc.constantFrom('1', 'x'),
  },
  { requiredKeys: [] },
);
const anyJson = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string({ maxLength: 10 }), fc.constantFrom(...WEIRD_STRINGS.slice(0, 16)));
const futureIso = fc.integer({ min: 1000, max: 400 * 86_400_000 }).map((d) => new Date(NOW + d).toISOString());
const isoArb = fc.oneof(
  fc.integer({ min: -86_400_000, max: 400 * 86_400_000 }).map((d) => new Date(NOW + d).toISOString()),
  fc.constantFrom(...UNPARSEABLE_TIMES, ...BAD_TIMES),
  fc.constant(null),
);
const budgetArb = fc.dictionary(fc.constantFrom('dailyMillicents', 'weeklyMillicents', 'monthlyMillicents', 'hourlyMillicents'), fc.oneof(fc.integer({ min: -5, max: 2_000_000 }), fc.constant(null), anyJson), { maxKeys: 3 });
const goodBudgetArb = fc.dictionary(fc.constantFrom('dailyMillicents', 'weeklyMillicents', 'monthlyMillicents'), fc.oneof(fc.integer({ min: 1, max: 2_000_000 }), fc.constant(null)), { maxKeys: 3 });
/** Mostly bodies a change accepts (so accepted changes are checked too), else anything. */
const mostlyGood = <T, U>(goodArb: fc.Arbitrary<T>, anyArb: fc.Arbitrary<U>) => fc.oneof({ weight: 3, arbitrary: goodArb as fc.Arbitrary<unknown> }, { weight: 2, arbitrary: anyArb as fc.Arbitrary<unknown> });
const changeBodyArb = {
  update: mostlyGood(
    fc
      .record(
        {
          scopes: fc.subarray([...SCOPES], { minLength: 1 }),
          operations: fc.subarray([...OPERATION_IDS]),
          transports: fc.subarray(['rest', 'mcp'], { minLength: 1 }),
          expiresAt: fc.oneof(futureIso, fc.constant(null)),
          ipRanges: fc.subarray(['203.0.113.0/24', '2001:db8::/32', '198.51.100.7']),
          budgets: goodBudgetArb,
        },
        { requiredKeys: [] },
      )
      .filter((b) => Object.keys(b).length > 0),
    fc.record(
      {
        scopes: fc.oneof(fc.array(fc.oneof(fc.constantFrom(...SCOPES), fc.string({ maxLength: 8 })), { maxLength: 3 }), anyJson),
        operations: fc.array(fc.string({ maxLength: 12 }), { maxLength: 2 }),
        transports: fc.oneof(fc.constant(['rest', 'rest']), fc.constant(['smtp']), fc.constant([])),
        expiresAt: isoArb,
        ipRanges: fc.array(fc.constantFrom(...BAD_RANGES), { maxLength: 2 }),
        budgets: budgetArb,
        secret: fc.string({ maxLength: 5 }),
      },
      { requiredKeys: [] },
    ),
  ),
  roll: mostlyGood(fc.record({ overlapSeconds: fc.integer({ min: 0, max: 2_592_000 }) }), fc.record({ overlapSeconds: fc.oneof(fc.integer({ min: -5, max: 2_600_000 }), anyJson) }, { requiredKeys: [] })),
  adjust: mostlyGood(
    fc.record(
      {
        amountMillicents: fc.integer({ min: -3_000_000, max: 3_000_000 }).filter((n) => n !== 0),
        reason: fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ]{0,40}$/),
        provenance: fc.constantFrom('refund', 'goodwill', 'chargeback'),
      },
      { requiredKeys: ['amountMillicents', 'reason'] },
    ),
    fc.record(
      {
        amountMillicents: fc.oneof(fc.integer({ min: -3_000_000, max: 3_000_000 }), fc.constantFrom(0, MAX_SAFE, -MAX_SAFE, MAX_SAFE + 2), anyJson),
        reason: fc.oneof(unicodeText, fc.constantFrom('', '   ', 'x'.repeat(501), 'a\u0000b', '\ud800')),
        provenance: fc.oneof(fc.constantFrom('refund', 'goodwill', 'chargeback'), fc.string({ maxLength: 8 })),
        expiresAt: isoArb,
      },
      { requiredKeys: [] },
    ),
  ),
};

describeEachDatabase('admin reads and changes fuzz', (get) => {
  test(`admin rule: random path ids, queries and bodies on the operator's reads and changes never give a 5xx; every refusal is a registered error that writes nothing; reads write nothing and never show a secret; accepted adjustments keep the ledger invariants and rolls give a working secret (${runs(0.5, 20)} runs)`, async (t) => {
    const ctx = get();
    const a = await seedTenant(ctx.deps, { credits: 2_000_000 });
    const b = await seedTenant(ctx.deps, { credits: 50_000 });
    await admin(ctx, `/admin/v1/workspaces/${a.workspace.id}/provider-keys`, { provider: 'openai', apiKey: 'sk-fuzz-provider-key-value-0123456789' });
    // Live jobs (the operator's reads show live ones) on a paid provider's fake (support/live-backend.ts).
    for (const tenant of [a, b]) assert.equal((await run(ctx, tenant, 'image.generate', { prompt: 'fuzz' })).statusCode, 202);
    await drain(ctx);
    assert.equal((await run(ctx, a, 'image.generate', { prompt: 'held' })).statusCode, 202);
    await admin(ctx, '/admin/v1/organizations', { name: 'Fuzz org', ownerUserId: a.user.id });
    const hook = await seedWebhook(ctx, a.workspace.id);
    const secrets = new Set([a.secret, b.secret, hook.secret, 'sk-fuzz-provider-key-value-0123456789']);
    const collectStored = async () => {
      for (const r of await ctx.deps.db.selectFrom('api_keys').select(['secret_hash', 'previous_secret_hash']).execute()) {
        secrets.add(r.secret_hash);
        if (r.previous_secret_hash) secrets.add(r.previous_secret_hash);
      }
      for (const r of await ctx.deps.db.selectFrom('webhooks').select('secret_enc').execute()) secrets.add(r.secret_enc);
      for (const r of await ctx.deps.db.selectFrom('provider_keys').select('sealed_key').execute()) secrets.add(r.sealed_key);
    };
    await collectStored();
    const idsOf = async (kind: ReadKind): Promise<string[]> => {
      const table = { user: 'users', org: 'organizations', ws: 'workspaces', key: 'api_keys', job: 'jobs', webhook: 'webhooks' } as const;
      return (await ctx.deps.db.selectFrom(table[kind] as 'users').select('id').orderBy('id').execute()).map((r) => r.id);
    };
    let captured = 'none';
    const stats: Record<string, number> = {};
    // Six plain reads of existing rows first, so that the coverage assertion at the end holds
    // whatever the seed (the generated cases follow). No query, own ids: each must be 200.
    const quiet = { log: () => {}, size: () => 0, toString: () => '' } as unknown as fc.ContextValue;
    const coverage: [number, PathRef[], Record<string, string>, number, fc.ContextValue][] = ['/admin/v1/users', '/admin/v1/users/{user}', '/admin/v1/organizations', '/admin/v1/workspaces/{ws}', '/admin/v1/workspaces/{ws}/provider-keys', '/admin/v1/jobs/{job}'].map((template) => {
      const pick = READS_AND_CHANGES.findIndex((ep) => ep.method === 'GET' && ep.path(ep.kinds.map((k) => `{${k}}`)) === template);
      assert.ok(pick >= 0, template);
      return [pick, [{ ref: 'own', pick: 0 }, { ref: 'own', pick: 0 }], {}, 1, quiet];
    });
    await check(
      fc.asyncProperty(fc.nat(), fc.array(pathRefArb, { minLength: 2, maxLength: 2 }), queryArb, fc.nat(), fc.context(), async (pick, refs, query, bodyPick, log) => {
        const ep = READS_AND_CHANGES[pick % READS_AND_CHANGES.length]!;
        const ids: string[] = [];
        let quality: 'good' | 'bad' | 'unknown' = 'good';
        for (const [i, kind] of ep.kinds.entries()) {
          const ref = refs[i]!;
          if (ref.ref === 'raw') {
            ids.push(encodeURIComponent(ref.text));
            quality = 'bad';
          } else if (ref.ref === 'unknown') {
            ids.push(ref.id);
            if (quality === 'good') quality = 'unknown';
          } else {
            const otherKind = (['user', 'org', 'ws', 'key', 'job', 'webhook'] as const).filter((k) => k !== kind)[ref.pick % 5]!;
            const list = await idsOf(ref.ref === 'own' ? kind : otherKind);
            ids.push(list[ref.pick % list.length] ?? randomUUID());
            if (ref.ref === 'other' && quality === 'good') quality = 'unknown';
          }
        }
        // The webhook is workspace A's: under another workspace it is not found.
        if (ep.kinds.includes('webhook') && quality === 'good' && ids[0] !== a.workspace.id) quality = 'unknown';
        const q: Record<string, string> = {};
        if (ep.paged && query.limit !== undefined) q.limit = query.limit;
        if (ep.paged && query.cursor !== undefined) q.cursor = query.cursor === 'captured' ? captured : query.cursor;
        if (query.extra !== undefined && bodyPick % 4 === 0) q.extra = query.extra;
        let payload: unknown;
        if (ep.body) payload = fc.sample(changeBodyArb[ep.body], { seed: bodyPick, numRuns: 1 })[0];
        log.log(`${ep.method} ${ep.path(ids)} ${JSON.stringify(q)} ${JSON.stringify(payload)?.slice(0, 300)}`);
        const before = await snapshot(ctx);
        const res = await ctx.app.inject({
          method: ep.method,
          url: ep.path(ids),
          headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
          ...(Object.keys(q).length ? { query: q } : {}),
          ...(payload !== undefined ? { payload: payload as object } : {}),
        });
        const body = assertEnvelope(res);
        for (const s of secrets) assert.equal(res.body.includes(s), false, `no answer shows a secret, hash or sealed value (${s.slice(0, 10)}…)`);
        const after = await snapshot(ctx);
        const outcome = res.statusCode === 200 ? 'OK' : body.code;
        const name = `${ep.method} ${ep.path(ep.kinds.map((k) => `{${k}}`))}`;
        stats[`${name}:${outcome}`] = (stats[`${name}:${outcome}`] ?? 0) + 1;
        if (body.data?.nextCursor) captured = body.data.nextCursor;
        if (quality === 'bad') assert.ok(['INVALID_REQUEST', 'NOT_FOUND'].includes(outcome), `a malformed id is 400 (404 where the router cannot match it): ${res.body}`);
        const queryOk = (q.limit === undefined || /^(100|[1-9][0-9]?)$/.test(q.limit)) && q.cursor === undefined && q.extra === undefined;
        if (ep.method === 'GET' && queryOk && quality !== 'bad') assert.equal(outcome, quality === 'good' ? 'OK' : 'NOT_FOUND', res.body);
        if (ep.method === 'GET' && q.extra !== undefined) assert.equal(outcome === 'OK', false, 'unknown query parameters of a read are refused');
        if (ep.method === 'GET' || res.statusCode !== 200) {
          assertNothingWritten(before, after, `${res.statusCode} ${outcome} for ${name}`);
          return;
        }
        if (ep.body === 'adjust') {
          const ws = canon(ids[0]);
          await assertLedgerInvariants(ctx.deps, ws);
          const p = payload as { amountMillicents: number };
          assert.equal(body.data.adjustment.transactions.reduce((s: number, e: { amountMillicents: number }) => s + e.amountMillicents, 0), p.amountMillicents);
          assert.ok(body.data.balance.spendableMillicents >= 0);
        }
        if (ep.body === 'roll') {
          assert.match(body.data.secret, SECRET_RE);
          const row = after.api_keys.get(canon(ids[0]))!;
          assert.equal(row.secret_hash, sha256Hex(body.data.secret));
          assert.equal(row.previous_secret_hash, before.api_keys.get(canon(ids[0]))!.secret_hash);
          secrets.add(body.data.secret);
          await collectStored();
        }
        if (ep.body === 'update') {
          const row = after.api_keys.get(canon(ids[0]))!;
          const p = payload as Record<string, unknown>;
          if (p.scopes) assert.deepEqual(JSON.parse(row.scopes_json), p.scopes);
          if (p.ipRanges) assert.deepEqual(JSON.parse(row.ip_ranges_json), p.ipRanges);
          assert.equal(row.secret_hash, before.api_keys.get(canon(ids[0]))!.secret_hash, 'an update never changes the secret');
        }
      }),
      { numRuns: runs(0.5, 20), examples: coverage },
    );
    t.diagnostic(`outcomes: ${JSON.stringify(Object.fromEntries(Object.entries(stats).sort()))}`);
    assert.ok(Object.keys(stats).filter((k) => k.endsWith(':OK')).length >= Math.min(6, runs(0.5, 20) / 10), JSON.stringify(stats));
  });
}, testKeySuite({ live: true }));
