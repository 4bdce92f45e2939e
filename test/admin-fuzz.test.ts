/**
 * Property tests of the operator's admin API (decisions.md section 4, README "Operator
 * commands") and of job streams (GET /v1/jobs/{id}/stream, decisions.md section 1 rows "SSE
 * payload", "SSE resume", "Job version"; docs/decisions.md "Job streams (SSE)").
 *
 * Admin API: random bodies, path ids, query strings and tokens against every admin endpoint.
 * Each generated value knows whether it is certainly valid, certainly invalid or unclear, so the
 * expected answer is predicted from the database state before the request:
 *   - never a 5xx; every answer is the envelope, an error's code is registered in ERROR_REGISTRY
 *     and carries its registered status;
 *   - a refusal writes nothing (every row of the watched tables is unchanged);
 *   - an accepted request does exactly what the README says and nothing else (row diffs per
 *     table), a created key's secret authenticates with exactly what it was given, and no
 *     provider key or key secret ever appears in a later response.
 * Job streams: random Last-Event-ID and Accept headers, plans, tenants and job ids over a real
 * socket, and sequences of opened, dropped and finished streams against the plan's limit.
 *
 * ADMIN_FUZZ_RUNS (default 100) scales every property's number of runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { BODY_LIMIT_BYTES } from '../src/app.js';
import { ERROR_REGISTRY, EXTRA_STATUSES } from '../src/http/errors.js';
import { sha256Hex } from '../src/lib/crypto.js';
import { QUERY_KEY_PARAMS } from '../src/modules/auth/service.js';
import { SCOPES } from '../src/modules/auth/scopes.js';
import { normaliseHostname } from '../src/modules/domains/service.js';
import { readProviderKey } from '../src/modules/provider-keys/service.js';
import { PLAN_DEFAULTS } from '../src/modules/usage/plans.js';
import { OPERATION_IDS } from '../src/operations/ids.js';
import { admin, call, describeEachDatabase, TEST_ADMIN_TOKEN, type TestContext } from './support/harness.js';
import { seedTenant, type Tenant } from './support/seed.js';
import { assertLedgerInvariants } from './support/ledger.js';
import { seedWebhook } from './support/webhook-hosts.js';
import { drain, getJob, run } from './support/jobs.js';
import { apiHeaders, baseUrl, frameReader, httpGet, streamGet, waitFor, type Frame } from './support/sse.js';

const RUNS = Math.max(1, Number(process.env.ADMIN_FUZZ_RUNS ?? 100));
/** Runs of a property: its share of ADMIN_FUZZ_RUNS, at least `min`. */
const runs = (share: number, min = 5) => Math.max(min, Math.round(RUNS * share));

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const SECRET_RE = /^wask_[A-Za-z0-9_-]{43}$/;
const KEY_PARAM_NAMES = new Set(QUERY_KEY_PARAMS.map((p) => p.toLowerCase()));

/** fc.assert, with the failing assertion's message in the error (node:test prints only the message). */
async function check<T>(property: fc.IAsyncProperty<T>, params: fc.Parameters<T>): Promise<void> {
  // FC_SEED (and FC_PATH) replay a reported failure.
  const replay = process.env.FC_SEED ? { seed: Number(process.env.FC_SEED), ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}) } : {};
  try {
    await fc.assert(property, { ...params, ...replay });
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof Error) (err as Error).message += `\nCause: ${cause.message}`;
    throw err;
  }
}

// ---- envelopes ------------------------------------------------------------------------------

type Res = Pick<LightMyRequestResponse, 'statusCode' | 'body' | 'headers'>;

/** The envelope of any answer: registered code and status for errors; returns the parsed body. */
function assertEnvelope(res: Res, successCode?: string): any {
  assert.ok(res.statusCode < 500, `never a 5xx: ${res.statusCode} ${res.body.slice(0, 500)}`);
  const body = JSON.parse(res.body);
  assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  assert.equal(typeof body.message, 'string');
  if (res.statusCode === 200) {
    assert.equal(body.success, true, res.body);
    if (successCode) assert.equal(body.code, successCode);
    return body;
  }
  assert.equal(body.success, false, res.body);
  assert.ok(Object.hasOwn(ERROR_REGISTRY, body.code), `registered code: ${body.code}`);
  const code = body.code as keyof typeof ERROR_REGISTRY;
  // A code answers with its registered status, or a second one the shared spec fixes (EXTRA_STATUSES).
  assert.ok([ERROR_REGISTRY[code][0], ...(EXTRA_STATUSES[code] ?? [])].includes(res.statusCode), `status of ${body.code}: ${res.statusCode} ${res.body}`);
  assert.equal(body.requestId, res.headers['x-request-id']);
  return body;
}

// ---- database snapshots -----------------------------------------------------------------------

/** Tables an admin request may write, with their primary keys. */
const WATCHED = {
  users: ['id'],
  organizations: ['id'],
  organization_members: ['organization_id', 'user_id'],
  workspaces: ['id'],
  api_keys: ['id'],
  api_key_workspaces: ['key_id', 'workspace_id'],
  credit_allocations: ['id'],
  credit_transactions: ['id'],
  domains: ['workspace_id', 'hostname'],
  provider_keys: ['id'],
} as const;
type Table = keyof typeof WATCHED;
const TABLES = Object.keys(WATCHED) as Table[];
type Row = Record<string, any>;
type Snapshot = Record<Table, Map<string, Row>>;

async function snapshot(ctx: TestContext): Promise<Snapshot> {
  const out = {} as Snapshot;
  for (const table of TABLES) {
    const rows = (await ctx.deps.db.selectFrom(table as 'users').selectAll().execute()) as Row[];
    out[table] = new Map(rows.map((r) => [WATCHED[table].map((c) => String(r[c])).join('|'), r]));
  }
  return out;
}

interface TableDiff {
  added: Row[];
  removed: Row[];
  changed: { before: Row; after: Row }[];
}
type Diff = Record<Table, TableDiff>;

function diff(a: Snapshot, b: Snapshot): Diff {
  const out = {} as Diff;
  for (const table of TABLES) {
    const d: TableDiff = { added: [], removed: [], changed: [] };
    for (const [k, row] of b[table]) {
      const old = a[table].get(k);
      if (!old) d.added.push(row);
      else if (JSON.stringify(old) !== JSON.stringify(row)) d.changed.push({ before: old, after: row });
    }
    for (const [k, row] of a[table]) if (!b[table].has(k)) d.removed.push(row);
    out[table] = d;
  }
  return out;
}

function describeDiff(d: Diff): string {
  return JSON.stringify(
    Object.fromEntries(TABLES.map((t) => [t, { added: d[t].added.length, removed: d[t].removed.length, changed: d[t].changed.length }]).filter(([, v]) => JSON.stringify(v) !== '{"added":0,"removed":0,"changed":0}')),
  );
}

/** Asserts that only the listed tables changed, by exactly the listed counts (ranges as [min, max]). */
function assertChanges(d: Diff, expected: Partial<Record<Table, Partial<Record<keyof TableDiff, number | [number, number]>>>>): void {
  for (const table of TABLES) {
    for (const kind of ['added', 'removed', 'changed'] as const) {
      const want = expected[table]?.[kind] ?? 0;
      const [min, max] = Array.isArray(want) ? want : [want, want];
      const got = d[table][kind].length;
      assert.ok(got >= min && got <= max, `${table}.${kind}: ${got}, expected ${min === max ? min : `${min}..${max}`} (changes: ${describeDiff(d)})`);
    }
  }
}

function assertNothingWritten(before: Snapshot, after: Snapshot, what: string): void {
  const d = diff(before, after);
  assert.equal(describeDiff(d), '{}', `a refusal writes nothing (${what})`);
}

const ids = (s: Snapshot, table: Table) => [...s[table].keys()].sort();
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

// ---- generated values ----------------------------------------------------------------------

/** How sure a generated value is: certainly valid, certainly refused with 400, or unclear. */
type Quality = 'good' | 'bad' | 'vague';
interface Cell {
  v: unknown;
  q: Quality;
}
const good = (v: unknown): Cell => ({ v, q: 'good' });
const bad = (v: unknown): Cell => ({ v, q: 'bad' });
const vague = (v: unknown): Cell => ({ v, q: 'vague' });
/** A property left out of the body. */
const OMIT = undefined;

/** JSON text sent as it is (numbers JSON.stringify cannot write: 9007199254740993, 1e400, 1.0). */
class RawJson {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Kind = 'user' | 'org' | 'ws' | 'key';
const KIND_TABLE: Record<Kind, Table> = { user: 'users', org: 'organizations', ws: 'workspaces', key: 'api_keys' };
/** An id resolved when the request is made: one of the existing rows (also those made by earlier runs), an unknown UUID, or text. */
type IdRef =
  | { ref: Kind; pick: number; form: 'plain' | 'upper' | 'mixed' | 'urn' }
  /** A user who owns or administers a workspace (any user when none does), and a workspace that user manages. */
  | { ref: 'manager'; pick: number; form: 'plain' | 'upper' | 'urn' }
  | { ref: 'managedBy'; user: number; pick: number }
  | { ref: 'unknown'; id: string }
  | { ref: 'raw'; text: string };

const RAW_IDS = [
  '',
  ' ',
  'not-a-uuid',
  '01890000-0000-7000-8000-00000000000',
  '01890000-0000-7000-8000-00000000000g',
  '01890000-0000-7000-8000-0000000000000',
  ' 01890000-0000-7000-8000-000000000000',
  '01890000000070008000000000000000',
  '{01890000-0000-7000-8000-000000000000}',
  '01890000_0000_7000_8000_000000000000',
  '٠١٨٩٠٠٠٠-٠٠٠٠-٧٠٠٠-٨٠٠٠-٠٠٠٠٠٠٠٠٠٠٠٠',
  'null',
  '0',
  '-1',
  '../..',
  'x'.repeat(300),
];
const rawIdArb = fc.oneof(fc.constantFrom(...RAW_IDS), fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 20 }));

function idRef(kind: Kind): fc.Arbitrary<IdRef> {
  const others = (['user', 'org', 'ws', 'key'] as const).filter((k) => k !== kind);
  return fc.oneof(
    { weight: 10, arbitrary: fc.record({ ref: fc.constant(kind), pick: fc.nat(), form: fc.constantFrom<'plain' | 'upper' | 'mixed'>('plain', 'plain', 'plain', 'upper', 'mixed') }) },
    { weight: 1, arbitrary: fc.record({ ref: fc.constantFrom(...others), pick: fc.nat(), form: fc.constant<'plain'>('plain') }) },
    { weight: 2, arbitrary: fc.uuid().map((id): IdRef => ({ ref: 'unknown', id })) },
    { weight: 1, arbitrary: fc.record({ ref: fc.constant(kind), pick: fc.nat(), form: fc.constant<'urn'>('urn') }) },
    { weight: 1, arbitrary: rawIdArb.filter((t) => !/^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/i.test(t)).map((text): IdRef => ({ ref: 'raw', text })) },
  );
}

function idQuality(r: IdRef): Quality {
  if (r.ref === 'raw') return 'bad';
  return 'good';
}

function mixCase(id: string, seed: number): string {
  return [...id].map((c, i) => ((seed >> i % 30) & 1 ? c.toUpperCase() : c)).join('');
}

/** The text of an id reference for this snapshot. */
function idText(r: IdRef, s: Snapshot): string {
  if (r.ref === 'raw') return r.text;
  if (r.ref === 'unknown') return r.id;
  if (r.ref === 'manager') {
    const id = managerOf(s, r.pick);
    return r.form === 'upper' ? id.toUpperCase() : r.form === 'urn' ? `urn:uuid:${id}` : id;
  }
  if (r.ref === 'managedBy') {
    const user = managerOf(s, r.user);
    const all = ids(s, 'workspaces');
    const managed = all.filter((id) => manages(s, user, s.workspaces.get(id)!));
    const list = managed.length ? managed : all;
    return list[r.pick % list.length]!;
  }
  const list = ids(s, KIND_TABLE[r.ref]);
  const id = list[r.pick % list.length]!;
  if (r.form === 'upper') return id.toUpperCase();
  if (r.form === 'mixed') return mixCase(id, r.pick);
  if (r.form === 'urn') return `urn:uuid:${id}`;
  return id;
}

function managerOf(s: Snapshot, pick: number): string {
  const users = ids(s, 'users');
  const managers = users.filter((u) => [...s.workspaces.values()].some((ws) => manages(s, u, ws)));
  const list = managers.length ? managers : users;
  return list[pick % list.length]!;
}

function isIdRef(v: unknown): v is IdRef {
  return typeof v === 'object' && v !== null && 'ref' in v && typeof (v as { ref: unknown }).ref === 'string';
}

/** A body value with its id references resolved. */
function materialise(v: unknown, s: Snapshot): unknown {
  if (isIdRef(v)) return idText(v, s);
  if (v instanceof RawJson) return v;
  if (Array.isArray(v)) return v.map((x) => materialise(x, s));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, materialise(x, s)]));
  return v;
}

/** JSON text of a materialised body (RawJson written as it is). */
function jsonText(v: unknown): string {
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : jsonText(x))).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => `${JSON.stringify(k)}:${jsonText(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** A body: properties with their qualities, or a whole body that is no object at all. */
type WholeBody = 'none' | 'null' | 'array' | 'string' | 'number' | 'bad-json' | 'empty-object';
interface BodyPlan {
  fields: [string, Cell][];
  extra?: [string, unknown];
  whole?: WholeBody;
}

const unicodeText = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 });
/** More than the body limit (1 MiB): 413 PAYLOAD_TOO_LARGE before anything else. */
const HUGE = 'x'.repeat(BODY_LIMIT_BYTES + 1);
const WEIRD_STRINGS = ['\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\u202eevil', '\ufeff', '\u00a0', '\u3000', '\t\n', 'ü', '𝕏', '👩‍👩‍👧', 'Ω'.repeat(200), 'a'.repeat(201), 'é'.repeat(201), 'x'.repeat(5000), HUGE];

/** Code points, as JSON Schema's minLength/maxLength count them. */
const codePoints = (s: string) => [...s].length;
const hasLoneSurrogate = (s: string) => /\p{Surrogate}/u.test(s);

/**
 * Names (users, organizations, workspaces): 1 to 200 code points, not blank. A NUL or an unpaired
 * surrogate is refused too: neither can be stored as UTF-8 text (PostgreSQL rejects NUL; an
 * unpaired surrogate would be stored as U+FFFD, unlike the name the response shows).
 */
function classifyName(v: unknown): Quality {
  if (typeof v !== 'string') return 'bad';
  if (v.includes('\u0000') || hasLoneSurrogate(v)) return 'bad';
  if (codePoints(v) < 1 || codePoints(v) > 200 || v.trim() === '') return 'bad';
  return 'good';
}
const nameCell: fc.Arbitrary<Cell> = fc
  .oneof(
    { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) },
    { weight: 3, arbitrary: unicodeText },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
    { weight: 4, arbitrary: fc.constantFrom(...WEIRD_STRINGS, '', '   ', 'Acme', '  Padded  ') },
    { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({})) },
  )
  .map((v) => ({ v, q: classifyName(v) }));
const requiredName = fc.oneof({ weight: 12, arbitrary: nameCell }, { weight: 1, arbitrary: fc.constant(bad(OMIT)) });

/** Emails: plain shapes that are valid or invalid for sure, and anything else as unclear. */
const localPart = fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,15}[a-z0-9]$/).filter((s) => !s.includes('..'));
const goodEmail = fc.tuple(localPart, fc.constantFrom('example.com', 'EXAMPLE.org', 'mail.example.co.uk', 'xn--bcher-kva.example'), fc.boolean()).map(([l, d, upper]) => {
  const e = `${l}@${d}`;
  return upper ? e.toUpperCase() : e;
});
const BAD_EMAILS = ['', 'plain', 'a@', '@example.com', 'a@b', 'a b@example.com', 'a@exa mple.com', 'ü@example.com', 'a@ex_ample.com', 'a@@example.com', ' a@example.com', 'a@example.com ', 'a@example.com\n', `${'a'.repeat(320)}@example.com`, 'a@-example.com'];
const emailCell: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 5, arbitrary: goodEmail.map(good) },
  { weight: 3, arbitrary: fc.constantFrom(...BAD_EMAILS).map(bad) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constant(null), fc.constant(['a@example.com'])).map(bad) },
  { weight: 2, arbitrary: fc.emailAddress().map(vague) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((s) => (s.includes('@') ? vague(s) : bad(s))) },
  { weight: 1, arbitrary: fc.constant(bad(OMIT)) },
);

const PLANS = ['free', 'starter', 'pro'] as const;
const planCell: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...PLANS).map(good) },
  { weight: 2, arbitrary: fc.constantFrom('gold', 'Pro', 'PRO', ' pro', 'pro ', '', 'enterprise', 'free\u0000', 'ｐｒｏ').map(bad) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constant(null), fc.constant(['pro'])).map(bad) },
);

function idCell(kind: Kind): fc.Arbitrary<Cell> {
  return fc.oneof(
    { weight: 12, arbitrary: idRef(kind).map((r) => ({ v: r, q: idQuality(r) })) },
    { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constant(null), fc.constant([]), fc.constant(true)).map(bad) },
  );
}

/** Integers: in range, at the edges, beyond 2^53 (also as raw JSON), fractional, of other types. */
function classifyInt(v: unknown, min: number): Quality {
  const n = v instanceof RawJson ? JSON.parse(v.text) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= MAX_SAFE ? 'good' : 'bad';
}
const RAW_NUMBERS = ['9007199254740993', '9007199254740992', '18446744073709551616', '1e400', '-1e400', '1.0', '100.00', '1E3', '0.1e1', '-0', '5e-324', '1.5', '9007199254740991'];
function intValue(min: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 5, arbitrary: fc.integer({ min: Math.max(min, 1), max: 1_000_000 }) },
    { weight: 2, arbitrary: fc.integer({ min, max: 5 }) },
    { weight: 1, arbitrary: fc.constantFrom(min, MAX_SAFE, MAX_SAFE - 1, 2 ** 53, 2 ** 53 + 2, 2 ** 64, 1e21, -1, 0, -MAX_SAFE, 0.5, 1.5, 2.000001) },
    { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
    { weight: 1, arbitrary: fc.bigInt({ min: 2n ** 53n, max: 2n ** 80n }).map((b) => new RawJson(b.toString())) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_NUMBERS).map((t) => new RawJson(t)) },
    { weight: 1, arbitrary: fc.oneof(fc.integer().map(String), fc.constant(true), fc.constant([1]), fc.constant({})) },
  );
}
const amountCell = (min: number): fc.Arbitrary<Cell> => intValue(min).map((v) => ({ v, q: classifyInt(v, min) }));
const nullableAmountCell = (min: number): fc.Arbitrary<Cell> => fc.oneof({ weight: 5, arbitrary: amountCell(min) }, { weight: 1, arbitrary: fc.constant(good(null)) });

/** Times: RFC 3339 in many spellings, past or future, and times the schema accepts but no Date can hold. */
const NOW = Date.UTC(2026, 10, 18, 12, 0, 0);
function isoWith(ms: number, style: number): string {
  const iso = new Date(ms).toISOString();
  switch (style % 7) {
    case 0:
      return iso;
    case 1:
      return iso.replace('.000Z', 'Z').toLowerCase();
    case 2: {
      // the same instant written with a +05:30 offset
      const local = new Date(ms + 5.5 * 3_600_000).toISOString().replace('Z', '+05:30');
      return local;
    }
    case 3:
      return iso.replace('Z', '123456Z');
    case 4:
      return iso.replace('T', ' ');
    case 5:
      return new Date(ms - 4 * 3_600_000).toISOString().replace('Z', '-04:00');
    default:
      return new Date(ms + 3_600_000).toISOString().replace('Z', '+0100');
  }
}
/** Schema-valid date-times that Date.parse cannot read (leap seconds, hour-only offsets). */
const UNPARSEABLE_TIMES = ['2027-12-31T23:59:60Z', '2027-01-01T00:00:00+05', '2027-06-30T23:59:60.5Z', '2027-01-01T00:59:60+01:00'];
const BAD_TIMES = ['tomorrow', '2027-13-01T00:00:00Z', '2027-02-29T00:00:00Z', '2027-01-01', '2027-01-01T00:00:00', '27-01-01T00:00:00Z', '2027-01-01T24:00:00Z', '2027-01-01T00:00:00+24:00', '1798761600000', '', '2027-01-01T00:00:00Z ', '２０２７-01-01T00:00:00Z', '+275760-09-13T00:00:00Z'];
const timeCell: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.integer({ min: 1, max: 400 * 86_400_000 }), fc.nat()).map(([d, st]) => good(isoWith(NOW + d, st))) },
  { weight: 1, arbitrary: fc.constantFrom('9999-12-31T23:59:59Z', '9999-12-31T23:59:59.999999Z').map(good) },
  { weight: 2, arbitrary: fc.tuple(fc.integer({ min: 0, max: 60 * 365 * 86_400_000 }), fc.nat()).map(([d, st]) => bad(isoWith(NOW - d, st))) },
  { weight: 1, arbitrary: fc.constantFrom('1970-01-01T00:00:00Z', '0000-01-01T00:00:00Z', '2026-11-18T12:00:00Z', '2026-11-18T12:00:00.0004Z').map(bad) },
  { weight: 3, arbitrary: fc.constantFrom(...UNPARSEABLE_TIMES).map(bad) },
  { weight: 2, arbitrary: fc.constantFrom(...BAD_TIMES).map(bad) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constant(true), fc.constant({})).map(bad) },
);
const optionalTime: fc.Arbitrary<Cell> = fc.oneof({ weight: 2, arbitrary: fc.constant(good(OMIT)) }, { weight: 1, arbitrary: fc.constant(good(null)) }, { weight: 4, arbitrary: timeCell });

const provenanceCell: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(good(OMIT)) },
  { weight: 3, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_-]{0,20}$/).map(good) },
  { weight: 1, arbitrary: fc.constant(good(`p${'a'.repeat(63)}`)) },
  { weight: 2, arbitrary: fc.constantFrom('', 'Promo', '1promo', 'promo 2026', 'promo\n', `p${'a'.repeat(64)}`, 'prömo', '-x', '_x', 'purchase\u0000').map(bad) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constant(null)).map(bad) },
);

/** Hostnames: DNS names (also IDN, upper case, a trailing dot) and what is not one. */
const goodHostname = fc.oneof(
  // (labels starting xn-- are punycode that may not decode: not certainly valid)
  fc.domain().filter((d) => d.length <= 90 && d.split('.').length >= 2 && !/(^|\.)xn--/.test(d)),
  fc.constantFrom('hooks.example.com', 'HOOKS.EXAMPLE.COM', 'hooks.example.com.', 'bücher.example', 'xn--bcher-kva.example', 'a-b.c-d.example', 'x1.example.net'),
);
const BAD_HOSTNAMES = ['', 'localhost', '127.0.0.1', '127.1', '0x7f.1', '[::1]', '::1', 'exa%41mple.com', 'a:b.example', 'a/b.example', 'a b.example', '_dmarc.example.com', '-a.example.com', 'a-.example.com', 'a..example.com', '.example.com', 'a'.repeat(64) + '.example.com', `${'a.'.repeat(127)}com`, 'ex@mple.com', 'example.com\u0000', '\u202eexample.com'];
const hostnameCell: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 5, arbitrary: goodHostname.map(good) },
  { weight: 3, arbitrary: fc.constantFrom(...BAD_HOSTNAMES).map(bad) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map(vague) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(5, null, OMIT, ['hooks.example.com']).map(bad) },
);

/**
 * Provider keys carry a marker that is looked for in every later response. A key with an
 * unpaired surrogate is refused: it could not be stored as the text that was sent.
 */
function classifyApiKey(v: unknown): Quality {
  if (typeof v !== 'string') return 'bad';
  if (hasLoneSurrogate(v)) return 'bad';
  return codePoints(v) >= 1 && codePoints(v) <= 4096 ? 'good' : 'bad';
}
const apiKeyCell: fc.Arbitrary<Cell> = fc
  .tuple(
    fc.constantFrom('sk-', 'r8_', '', 'key '),
    fc.oneof({ weight: 4, arbitrary: fc.constant('') }, { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) }, { weight: 1, arbitrary: fc.constantFrom('\ud800', 'x'.repeat(4090), 'x'.repeat(5000), '👩‍👩‍👧', '\u0000') }),
  )
  .map(([prefix, tail]) => `${prefix}PK${randomBytes(8).toString('hex')}${tail}`)
  .map((v) => ({ v, q: classifyApiKey(v) }));
const apiKeyField = fc.oneof({ weight: 10, arbitrary: apiKeyCell }, { weight: 1, arbitrary: fc.oneof(fc.constant(''), fc.integer(), fc.constant(null), fc.constant(OMIT)).map(bad) });
const providerCell: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom('openai', 'replicate', 'elevenlabs', 'stability.ai', 'a', '0', 'x_y-z.1').map(good) },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9_.-]{0,20}$/).map(good) },
  { weight: 2, arbitrary: fc.constantFrom('', 'OpenAI', '-x', '.x', 'open ai', 'ö', 'x'.repeat(65), 'openai\n').map(bad) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constant(null), fc.constant(OMIT)).map(bad) },
);

function listCell(items: readonly string[], opts: { minItems: number; badItems: string[] }): fc.Arbitrary<Cell> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.uniqueArray(fc.constantFrom(...items), { minLength: opts.minItems, maxLength: items.length }).map(good) },
    { weight: 1, arbitrary: fc.constant(items.slice()).map(good) },
    { weight: 1, arbitrary: fc.constantFrom(...items).map((x) => bad([x, x])) },
    { weight: 1, arbitrary: fc.tuple(fc.uniqueArray(fc.constantFrom(...items), { maxLength: 3 }), fc.constantFrom(...opts.badItems)).map(([xs, b]) => bad([...xs, b])) },
    { weight: 1, arbitrary: fc.oneof(fc.constant(items.join(',')), fc.constant(null), fc.constant(OMIT), fc.constant([1])).map(bad) },
    ...(opts.minItems > 0 ? [{ weight: 1, arbitrary: fc.constant(bad([])) }] : []),
  );
}

/** IP ranges with what they contain of PROBE_ADDRESSES (to try a created key from inside and outside). */
const PROBE_ADDRESSES = ['203.0.113.9', '10.1.2.3', '2001:db8::1', '198.51.100.7', '192.0.2.5', '127.0.0.1'];
const GOOD_RANGES: Record<string, string[]> = {
  '203.0.113.0/24': ['203.0.113.9'],
  '10.0.0.0/8': ['10.1.2.3'],
  '2001:db8::/32': ['2001:db8::1'],
  '198.51.100.7': ['198.51.100.7'],
  '0.0.0.0/0': ['203.0.113.9', '10.1.2.3', '198.51.100.7', '192.0.2.5', '127.0.0.1'],
  '::/0': ['2001:db8::1'],
  '::ffff:192.0.2.0/120': ['192.0.2.5'],
  '192.0.2.5/32': ['192.0.2.5'],
  '2001:db8::1': ['2001:db8::1'],
};
const BAD_RANGES = ['010.0.0.0/8', '10.0.0.0/08', '10.1/16', '0x0a.0.0.0/8', '167838211', '10.0.0.0/33', '2001:db8::/129', '10.0.0.0/-1', ' 10.0.0.0/8', '10.0.0.0/8 ', '10.0.0.0/', '/8', 'not-an-ip', '1.2.3.4.5', '10.0.0.0/8/1', '１０.0.0.0/8', '10.0.0.256', 'x'.repeat(65), 'a', '2001:db8::g/32', '[2001:db8::]/32', '10.0.0.0/8\u0000'];
const ipRangesCell: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(good(OMIT)) },
  { weight: 4, arbitrary: fc.array(fc.constantFrom(...Object.keys(GOOD_RANGES)), { maxLength: 4 }).map(good) },
  { weight: 1, arbitrary: fc.constantFrom(...Object.keys(GOOD_RANGES)).map((r) => good([r, r])) },
  { weight: 1, arbitrary: fc.constantFrom('10.0.0.1/8', '2001:DB8::/32', '2001:0db8::/32', '::ffff:10.0.0.0/104').map((r) => vague([r])) },
  { weight: 3, arbitrary: fc.tuple(fc.array(fc.constantFrom(...Object.keys(GOOD_RANGES)), { maxLength: 2 }), fc.constantFrom(...BAD_RANGES)).map(([g, b]) => bad([...g, b])) },
  { weight: 1, arbitrary: fc.oneof(fc.constant('10.0.0.0/8'), fc.constant(Array.from({ length: 101 }, () => '10.0.0.0/8')), fc.constant([null]), fc.constant(null)).map(bad) },
);

/** Budgets: an object of positive ceilings or nulls; zero, negative, fractional, unknown periods refused. */
const budgetsCell: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(good(OMIT)) },
  {
    weight: 5,
    arbitrary: fc
      .record({ dailyMillicents: fc.option(nullableAmountCell(1), { nil: undefined }), weeklyMillicents: fc.option(nullableAmountCell(1), { nil: undefined }), monthlyMillicents: fc.option(nullableAmountCell(1), { nil: undefined }) })
      .map((r) => {
        const entries = Object.entries(r).filter(([, c]) => c !== undefined) as [string, Cell][];
        return { v: Object.fromEntries(entries.map(([k, c]) => [k, c.v])), q: worst(entries.map(([, c]) => c.q)) };
      }),
  },
  { weight: 1, arbitrary: fc.constantFrom({ hourlyMillicents: 5 }, { daily: 5 }, { dailyMillicents: 0 }, 5, null, [], { dailyMillicents: '5' }).map(bad) },
);

function worst(qs: Quality[]): Quality {
  return qs.includes('bad') ? 'bad' : qs.includes('vague') ? 'vague' : 'good';
}

// ---- the endpoints ---------------------------------------------------------------------------

type Ep =
  | 'users'
  | 'orgs'
  | 'membersSet'
  | 'membersRemove'
  | 'workspaces'
  | 'settings'
  | 'credits'
  | 'domainsAdd'
  | 'domainsVerify'
  | 'domainsRemove'
  | 'providerKeys'
  | 'keysCreate'
  | 'keysRevoke'
  | 'notifications';

const SUCCESS_CODE: Record<Ep, string> = {
  users: 'ADMIN_USERS_CREATE',
  orgs: 'ADMIN_ORGANIZATIONS_CREATE',
  membersSet: 'ADMIN_MEMBERS_SET',
  membersRemove: 'ADMIN_MEMBERS_REMOVE',
  workspaces: 'ADMIN_WORKSPACES_CREATE',
  settings: 'ADMIN_WORKSPACES_SETTINGS',
  credits: 'ADMIN_CREDITS_GRANT',
  domainsAdd: 'ADMIN_DOMAINS_ADD',
  domainsVerify: 'ADMIN_DOMAINS_VERIFY',
  domainsRemove: 'ADMIN_DOMAINS_REMOVE',
  providerKeys: 'ADMIN_PROVIDER_KEYS_SET',
  keysCreate: 'ADMIN_KEYS_CREATE',
  keysRevoke: 'ADMIN_KEYS_REVOKE',
  notifications: 'ADMIN_NOTIFICATIONS_LIST',
};

/** A path hostname: one of the workspace's domains (as stored or respelled), another DNS name, or no DNS name. */
type HostRef = { host: 'existing'; pick: number; spelling: 'plain' | 'upper' | 'dot' } | { host: 'other'; name: string } | { host: 'bad'; name: string };

/** One generated admin request, as plain data (fast-check prints and shrinks it). */
interface AdminPlan {
  ep: Ep;
  path: IdRef[];
  hostname?: HostRef;
  body: BodyPlan;
  query?: Record<string, string>;
  /** domains verify by dns: publish the TXT record first. */
  publishTxt?: boolean;
}

function fields(entries: Record<string, fc.Arbitrary<Cell>>): fc.Arbitrary<[string, Cell][]> {
  return fc.record(entries).map((r) => Object.entries(r));
}

const extraProperty = fc.option(
  fc.tuple(fc.oneof(fc.constantFrom('surprise', '__proto__', 'constructor', 'id', 'Email', 'email ', 'plan\u0000'), fc.string({ minLength: 1, maxLength: 10 })), fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.constant({}))),
  { nil: undefined, freq: 12 },
);
const wholeBody = fc.option(fc.constantFrom<WholeBody>('none', 'null', 'array', 'string', 'number', 'bad-json', 'empty-object'), { nil: undefined, freq: 14 });

/**
 * Values the schema lets through but the code behind it must still handle (times no Date can
 * hold, text PostgreSQL cannot store, sums at the edge of 2^53, odd IDN hostnames).
 */
const nasty = {
  name: fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\udc00\ud800', 'ok\u0000', '\u00a0\u3000', '\u2028', 'Ω'.repeat(200), '😀'.repeat(200), '😀'.repeat(201)).map((v) => ({ v, q: classifyName(v) })),
  time: fc.constantFrom(...UNPARSEABLE_TIMES, '2026-11-18T12:00:00Z', '2026-11-18T12:00:00.0004Z', '2026-11-18T12:00:00.001Z', '2026-11-18T17:30:00.001+05:30', '9999-12-31T23:59:59.999999Z').map((v) => {
    const ms = Date.parse(v);
    return Number.isFinite(ms) && ms > NOW ? good(v) : bad(v);
  }),
  amount: fc.constantFrom<unknown>(MAX_SAFE, MAX_SAFE - 1, 2 ** 53, new RawJson('9007199254740993'), new RawJson('9007199254740991.0'), 1).map((v) => ({ v, q: classifyInt(v, 1) })),
  apiKey: fc.constantFrom('\ud800', 'sk-\udfff', '\u0000', '😀', 'x'.repeat(4096)).map((t) => `PK${randomBytes(8).toString('hex')}${t}`).map((v) => ({ v, q: classifyApiKey(v) })),
  hostname: fc.constantFrom('ａｂｃ.example', 'a\u00ad.example', 'a\u200b.example', '例え.テスト', 'xn--.example', 'xn--zz-.example', 'xn--ls8h.la', 'ß.example', 'İ.example', 'a.b.c.d.e.f.g.h.example', '1.2.3.4.example', '0x7f.example', '123.example').map(vague),
  ipRanges: fc.constantFrom('::ffff:10.0.0.0/104', '::ffff:0:0/96', '1.2.3.4/0', '::ffff:192.0.2.5', '0.0.0.0', '::', '255.255.255.255/32').map((r) => vague([r])),
};

/**
 * A body of these properties: every value certainly valid (so requests get past validation and
 * reach the rules behind it); all valid but one, which is anything; all valid but one nasty value
 * (a 500 or a partial write would otherwise hide behind another property's 400); or anything,
 * with extra properties and bodies that are no object.
 */
function bodyPlan(entries: Record<string, fc.Arbitrary<Cell>>, nastyFields: Record<string, fc.Arbitrary<Cell>> = {}): fc.Arbitrary<BodyPlan> {
  const validOnly = Object.fromEntries(Object.entries(entries).map(([k, a]) => [k, a.filter((c) => c.q === 'good')]));
  const valid = fields(validOnly).map((f): BodyPlan => ({ fields: f }));
  // Every property valid but one: a value no earlier check refuses reaches the code behind it.
  const names = Object.keys(entries);
  const oneWild = fc.constantFrom(...names).chain((wild) => fields({ ...validOnly, [wild]: entries[wild]! })).map((f): BodyPlan => ({ fields: f }));
  const any = fc.record({ fields: fields(entries), extra: extraProperty, whole: wholeBody }).map((b) => {
    const out: BodyPlan = { fields: b.fields };
    if (b.extra !== undefined && !b.fields.some(([k]) => k === b.extra![0])) out.extra = b.extra;
    if (b.whole !== undefined) out.whole = b.whole;
    return out;
  });
  const nastyNames = Object.keys(nastyFields);
  const oneNasty = nastyNames.length
    ? [{ weight: 2, arbitrary: fc.constantFrom(...nastyNames).chain((n) => fields({ ...validOnly, [n]: nastyFields[n]! })).map((f): BodyPlan => ({ fields: f })) }]
    : [];
  return fc.oneof({ weight: 2, arbitrary: valid }, { weight: 2, arbitrary: oneWild }, { weight: 1, arbitrary: any }, ...oneNasty);
}
const emptyBodyPlan: fc.Arbitrary<BodyPlan> = fc.oneof(
  fc.constant<BodyPlan>({ fields: [] }),
  fc.constantFrom<WholeBody>('none', 'null', 'array', 'string', 'number', 'bad-json', 'empty-object').map((whole): BodyPlan => ({ fields: [], whole })),
  extraProperty.filter((e) => e !== undefined).map((extra): BodyPlan => ({ fields: [], extra: extra! })),
);

const hostRef: fc.Arbitrary<HostRef> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ host: fc.constant<'existing'>('existing'), pick: fc.nat(), spelling: fc.constantFrom<'plain' | 'upper' | 'dot'>('plain', 'plain', 'upper', 'dot') }) },
  { weight: 2, arbitrary: goodHostname.map((name): HostRef => ({ host: 'other', name })) },
  // Hostnames over 100 characters are left to their own test below (the router's parameter limit).
  { weight: 1, arbitrary: fc.constantFrom(...BAD_HOSTNAMES.filter((h) => h.length <= 100)).map((name): HostRef => ({ host: 'bad', name })) },
);

const roleCell: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('owner', 'admin', 'member').map(good) },
  { weight: 1, arbitrary: fc.constantFrom('superuser', 'Owner', '', 'member ', 'viewer', 5, null, OMIT).map(bad) },
);
const methodCell: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('operator', 'operator', 'dns', 'http').map(good) },
  { weight: 1, arbitrary: fc.constantFrom('DNS', 'email', '', null, 1, OMIT).map(bad) },
);

const limitsCell: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(good(OMIT)) },
  {
    weight: 5,
    arbitrary: fc
      .uniqueArray(fc.constantFrom('pointsPerMinute', 'pointsPerMonth', 'runningJobs', 'waitingJobs', 'streams', 'activeKeys'), { maxLength: 3 })
      .chain((names) => fc.tuple(...names.map((n) => fc.oneof({ weight: 5, arbitrary: amountCell(0) }, { weight: 2, arbitrary: fc.constant(good(null)) }).map((c) => [n, c] as const))))
      .map((pairs) => ({ v: Object.fromEntries(pairs.map(([n, c]) => [n, c.v])), q: worst(pairs.map(([, c]) => c.q)) })),
  },
  { weight: 1, arbitrary: fc.constantFrom({ pointsPerHour: 5 }, { streams: -1 }, { streams: 1.5 }, { streams: '3' }, 5, [], null).map(bad) },
);

const operationsCell = listCell(OPERATION_IDS, { minItems: 0, badItems: ['mine.bitcoin', 'LINK.PREVIEW', 'link.preview ', ''] });
const scopesCell = listCell(SCOPES, { minItems: 1, badItems: ['admin:all', 'jobs:*', 'JOBS:READ', '*', ''] });
const transportsCell = listCell(['rest', 'mcp'], { minItems: 1, badItems: ['grpc', 'REST', 'http', ''] });
const workspaceIdsCell: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 8, arbitrary: fc.array(idRef('ws'), { minLength: 1, maxLength: 4 }).map((rs) => ({ v: rs, q: worst(rs.map(idQuality)) })) },
  { weight: 1, arbitrary: fc.constant(bad([])) },
  { weight: 1, arbitrary: fc.record({ ref: fc.constant<'ws'>('ws'), pick: fc.nat(), form: fc.constant<'plain'>('plain') }).map((r) => bad([r, r])) },
  { weight: 1, arbitrary: fc.constantFrom(null, 'ws', OMIT, Array.from({ length: 101 }, () => randomUUID())).map(bad) },
);

const notificationsQuery: fc.Arbitrary<{ q: Quality; query: Record<string, string> }> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ q: 'good' as Quality, query: {} }) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 100 }).map((n) => ({ q: 'good' as Quality, query: { limit: String(n) } })) },
  { weight: 2, arbitrary: fc.constantFrom('0', '101', '-1', '1.5', 'abc', '', '1e2', ' 5', '٥').map((l) => ({ q: 'bad' as Quality, query: { limit: l } })) },
  { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 60 }).map((c) => ({ q: 'vague' as Quality, query: { cursor: c } })) },
  { weight: 1, arbitrary: fc.constantFrom<Record<string, string>>({ surprise: '1' }, { cursor: 'x'.repeat(201) }, { cursor: '' }).map((query) => ({ q: 'bad' as Quality, query })) },
);

const adminPlan: fc.Arbitrary<AdminPlan> = fc.oneof(
  bodyPlan({ email: emailCell, name: requiredName }, { name: nasty.name }).map((body): AdminPlan => ({ ep: 'users', path: [], body })),
  bodyPlan({ name: requiredName, ownerUserId: idCell('user') }, { name: nasty.name }).map((body): AdminPlan => ({ ep: 'orgs', path: [], body })),
  fc.tuple(idRef('org'), bodyPlan({ userId: idCell('user'), role: roleCell })).map(([o, body]): AdminPlan => ({ ep: 'membersSet', path: [o], body })),
  fc.tuple(idRef('org'), idRef('user'), emptyBodyPlan).map(([o, u, body]): AdminPlan => ({ ep: 'membersRemove', path: [o, u], body })),
  fc
    .tuple(
      fc.constantFrom('owner', 'org', 'owner', 'org', 'both', 'neither'),
      bodyPlan({ name: requiredName, plan: planCell }, { name: nasty.name }),
      idCell('user'),
      idCell('org'),
    )
    .map(([who, body, owner, org]): AdminPlan => {
      const extra: [string, Cell][] = [];
      if (who === 'owner' || who === 'both') extra.push(['ownerUserId', owner]);
      if (who === 'org' || who === 'both') extra.push(['organizationId', org]);
      // Exactly one of ownerUserId and organizationId (400 otherwise).
      if (who === 'both' || who === 'neither') extra.push(['__oneOf', bad(OMIT)]);
      return { ep: 'workspaces', path: [], body: { ...body, fields: [...body.fields, ...extra] } };
    }),
  fc.tuple(idRef('ws'), bodyPlan({ plan: fc.oneof(fc.constant(good(OMIT)), planCell), limits: limitsCell, budgets: budgetsCell })).map(([w, body]): AdminPlan => ({ ep: 'settings', path: [w], body })),
  { weight: 2, arbitrary: fc.tuple(idRef('ws'), bodyPlan({ amountMillicents: amountCell(1), expiresAt: optionalTime, provenance: provenanceCell }, { expiresAt: nasty.time, amountMillicents: nasty.amount })).map(([w, body]): AdminPlan => ({ ep: 'credits', path: [w], body })) },
  fc.tuple(idRef('ws'), bodyPlan({ hostname: hostnameCell }, { hostname: nasty.hostname })).map(([w, body]): AdminPlan => ({ ep: 'domainsAdd', path: [w], body })),
  fc.tuple(idRef('ws'), hostRef, bodyPlan({ method: methodCell }), fc.boolean()).map(([w, hostname, body, publishTxt]): AdminPlan => ({ ep: 'domainsVerify', path: [w], hostname, body, publishTxt })),
  fc.tuple(idRef('ws'), hostRef, emptyBodyPlan).map(([w, hostname, body]): AdminPlan => ({ ep: 'domainsRemove', path: [w], hostname, body })),
  fc.tuple(idRef('ws'), bodyPlan({ provider: providerCell, apiKey: apiKeyField }, { apiKey: nasty.apiKey })).map(([w, body]): AdminPlan => ({ ep: 'providerKeys', path: [w], body })),
  // Keys of a user for workspaces that user manages (mostly), so that creations get through.
  { weight: 3, arbitrary: fc.nat().chain((user) =>
    bodyPlan({
      userId: fc.constantFrom<'plain' | 'upper' | 'urn'>('plain', 'plain', 'upper', 'urn').map((form) => good({ ref: 'manager', pick: user, form })),
      workspaceIds: fc
        .array(fc.oneof({ weight: 6, arbitrary: fc.nat().map((pick): IdRef => ({ ref: 'managedBy', user, pick })) }, { weight: 1, arbitrary: idRef('ws') }), { minLength: 1, maxLength: 3 })
        .map((rs) => ({ v: rs, q: worst(rs.map(idQuality)) })),
      scopes: scopesCell,
      operations: operationsCell,
      transports: transportsCell,
      expiresAt: optionalTime,
      ipRanges: ipRangesCell,
      budgets: budgetsCell,
    }, { expiresAt: nasty.time, ipRanges: nasty.ipRanges }),
  ).map((body): AdminPlan => ({ ep: 'keysCreate', path: [], body })) },
  bodyPlan({
    userId: idCell('user'),
    workspaceIds: workspaceIdsCell,
    scopes: scopesCell,
    operations: operationsCell,
    transports: transportsCell,
    expiresAt: optionalTime,
    ipRanges: ipRangesCell,
    budgets: budgetsCell,
  }).map((body): AdminPlan => ({ ep: 'keysCreate', path: [], body })),
  fc.tuple(idRef('key'), emptyBodyPlan).map(([k, body]): AdminPlan => ({ ep: 'keysRevoke', path: [k], body })),
  fc.tuple(idRef('ws'), notificationsQuery).map(([w, nq]): AdminPlan => ({ ep: 'notifications', path: [w], body: { fields: nq.q === 'good' ? [] : [['__query', { v: OMIT, q: nq.q }]] }, query: nq.query })),
);

// ---- making a request from a plan --------------------------------------------------------------

interface Made {
  method: 'GET' | 'POST';
  url: string;
  /** JSON text, or undefined for no body. */
  payload: string | undefined;
  /** The body as the server parses it (undefined without a body). */
  body: any;
  /** Path ids and hostname as sent. */
  pathIds: string[];
  hostname?: string;
  quality: Quality;
  /** A path segment that is no id: the router may answer 404 as well as 400. */
  badPath: boolean;
}

function hostText(h: HostRef, workspaceId: string, s: Snapshot): string {
  if (h.host !== 'existing') return h.name;
  const mine = [...s.domains.values()].filter((d) => d.workspace_id === canon(workspaceId)).map((d) => String(d.hostname));
  const all = mine.length ? mine : [...s.domains.values()].map((d) => String(d.hostname));
  const name = all.length ? all.sort()[h.pick % all.length]! : 'hooks.example.com';
  return h.spelling === 'upper' ? name.toUpperCase() : h.spelling === 'dot' ? `${name}.` : name;
}

function makeRequest(plan: AdminPlan, s: Snapshot): Made {
  const pathIds = plan.path.map((r) => idText(r, s));
  const qualities: Quality[] = plan.path.map(idQuality);
  const badPath = plan.path.some((r) => idQuality(r) === 'bad');
  const seg = (i: number) => encodeURIComponent(pathIds[i]!);
  let hostname: string | undefined;
  if (plan.hostname) {
    hostname = hostText(plan.hostname, pathIds[0] ?? '', s);
    let hq: Quality = 'good';
    try {
      normaliseHostname(hostname);
    } catch {
      hq = 'bad';
    }
    if (plan.hostname.host === 'bad') hq = 'bad';
    qualities.push(hq);
  }
  const url = (() => {
    switch (plan.ep) {
      case 'users':
        return '/admin/v1/users';
      case 'orgs':
        return '/admin/v1/organizations';
      case 'membersSet':
        return `/admin/v1/organizations/${seg(0)}/members`;
      case 'membersRemove':
        return `/admin/v1/organizations/${seg(0)}/members/${seg(1)}/remove`;
      case 'workspaces':
        return '/admin/v1/workspaces';
      case 'settings':
        return `/admin/v1/workspaces/${seg(0)}/settings`;
      case 'credits':
        return `/admin/v1/workspaces/${seg(0)}/credits`;
      case 'domainsAdd':
        return `/admin/v1/workspaces/${seg(0)}/domains`;
      case 'domainsVerify':
        return `/admin/v1/workspaces/${seg(0)}/domains/${encodeURIComponent(hostname!)}/verify`;
      case 'domainsRemove':
        return `/admin/v1/workspaces/${seg(0)}/domains/${encodeURIComponent(hostname!)}/remove`;
      case 'providerKeys':
        return `/admin/v1/workspaces/${seg(0)}/provider-keys`;
      case 'keysCreate':
        return '/admin/v1/keys';
      case 'keysRevoke':
        return `/admin/v1/keys/${seg(0)}/revoke`;
      case 'notifications':
        return `/admin/v1/workspaces/${seg(0)}/notifications`;
    }
  })();
  const emptyBodyEndpoint = plan.ep === 'membersRemove' || plan.ep === 'domainsRemove' || plan.ep === 'keysRevoke';
  qualities.push(...plan.body.fields.map(([, c]) => c.q));
  if (plan.body.extra) qualities.push('bad');
  // fromEntries defines own properties, `__proto__` included (an assignment would set the prototype).
  const obj = Object.fromEntries([
    ...plan.body.fields.filter(([k]) => !k.startsWith('__')).map(([k, c]) => [k, materialise(c.v, s)] as const),
    ...(plan.body.extra ? [plan.body.extra] : []),
  ]);
  // Settings need at least one of plan, limits, budgets.
  if (plan.ep === 'settings' && Object.values(obj).every((v) => v === undefined)) qualities.push('bad');
  // References can resolve to the same workspace: the same id twice is refused (uniqueItems).
  const wsIds = obj.workspaceIds;
  if (Array.isArray(wsIds) && new Set(wsIds).size !== wsIds.length) qualities.push('bad');
  let payload: string | undefined;
  if (plan.ep === 'notifications') payload = undefined;
  else if (plan.body.whole) {
    const whole = plan.body.whole;
    payload = { none: undefined, null: 'null', array: '[]', string: '"x"', number: '5', 'bad-json': '{"a":', 'empty-object': '{}' }[whole];
    qualities.push(emptyBodyEndpoint && (whole === 'none' || whole === 'null' || whole === 'empty-object') ? 'good' : 'bad');
  } else payload = jsonText(obj);
  const body = payload === undefined ? undefined : (() => {
    try {
      // A -0 in the text is the number zero, and comes back as 0 (JSON has no negative zero).
      return JSON.parse(payload!, (_k, v) => (Object.is(v, -0) ? 0 : v));
    } catch {
      return undefined;
    }
  })();
  return { method: plan.ep === 'notifications' ? 'GET' : 'POST', url, payload, body, pathIds, ...(hostname !== undefined ? { hostname } : {}), quality: worst(qualities), badPath };
}

async function send(ctx: TestContext, m: Made, query?: Record<string, string>, headers: Record<string, string> = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }) {
  return ctx.app.inject({
    method: m.method,
    url: m.url,
    headers: { ...headers, ...(m.payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(m.payload !== undefined ? { payload: m.payload } : {}),
    ...(query ? { query } : {}),
  });
}

// ---- the oracle --------------------------------------------------------------------------------

/** An id as stored: UUIDs are case-insensitive, and the uuid format also takes the `urn:uuid:` form. */
const canon = (s: unknown) => String(s).toLowerCase().replace(/^urn:uuid:/, '');
const isUuidText = (s: string) => /^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/i.test(s);

/** The row of `table` an id names (any letter case: UUIDs are case-insensitive), if any. */
function rowOf(s: Snapshot, table: Table, id: unknown): Row | undefined {
  if (typeof id !== 'string' || !isUuidText(canon(id))) return undefined;
  return s[table].get(canon(id));
}

function memberRole(s: Snapshot, orgId: string, userId: string): string | undefined {
  return s.organization_members.get(`${canon(orgId)}|${canon(userId)}`)?.role;
}
function owners(s: Snapshot, orgId: string): number {
  return [...s.organization_members.values()].filter((m) => m.organization_id === canon(orgId) && m.role === 'owner').length;
}
function manages(s: Snapshot, userId: string, ws: Row): boolean {
  if (ws.owner_user_id !== null) return ws.owner_user_id === canon(userId);
  const role = memberRole(s, String(ws.organization_id), userId);
  return role === 'owner' || role === 'admin';
}
function activeKeys(s: Snapshot, workspaceId: string, now: number): number {
  const keys = [...s.api_key_workspaces.values()].filter((l) => l.workspace_id === workspaceId).map((l) => s.api_keys.get(String(l.key_id))!);
  return keys.filter((k) => k.revoked_at_ms === null && (k.expires_at_ms === null || Number(k.expires_at_ms) > now)).length;
}
function limitsOf(ws: Row): Record<string, number> {
  return { ...PLAN_DEFAULTS[ws.plan as (typeof PLANS)[number]], ...JSON.parse(String(ws.limits_json)) };
}
function sumRemaining(s: Snapshot, workspaceId: string): number {
  return [...s.credit_allocations.values()].filter((a) => a.workspace_id === workspaceId).reduce((n, a) => n + Number(a.remaining_mc), 0);
}

/** What the answer must be for a request whose values are all certainly valid: 'OK' or an error code. */
function predict(plan: AdminPlan, m: Made, s: Snapshot, ctx: TestContext, txtPublished: boolean): string {
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

interface Fuzz {
  ctx: TestContext;
  /** Provider-key markers and key secrets that must never be seen in a later response. */
  secrets: Set<string>;
  stats: Record<string, number>;
}

const iso = (ms: unknown) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());

async function verifyAccepted(f: Fuzz, plan: AdminPlan, m: Made, data: any, before: Snapshot, after: Snapshot): Promise<void> {
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
        allocation: { id: a.id, workspaceId: ws, amountMillicents: b.amountMillicents, remainingMillicents: b.amountMillicents, expiresAt, provenance: b.provenance ?? 'purchase', createdAt: nowIso },
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
    assert.deepEqual(ops, [...b.operations].sort(), 'exactly the operations given');
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

async function buildAdminWorld(ctx: TestContext): Promise<AdminWorld> {
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
// ---- the admin token ---------------------------------------------------------------------------

/** Characters a real HTTP header value can hold (RFC 9110 field-value: VCHAR, SP, HTAB, obs-text). */
const headerChar = fc
  .oneof({ weight: 8, arbitrary: fc.integer({ min: 0x21, max: 0x7e }) }, { weight: 1, arbitrary: fc.constant(0x20) }, { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) })
  .map((c) => String.fromCharCode(c));
const headerString = fc.array(headerChar, { maxLength: 60 }).map((cs) => cs.join(''));

/** One character of the token changed, dropped, added or flipped in case. */
function nearToken(at: number, how: number, c: string): string {
  const t = TEST_ADMIN_TOKEN;
  const i = at % t.length;
  switch (how % 4) {
    case 0: {
      const replacement = c === t[i] ? (c === 'a' ? 'b' : 'a') : c;
      return t.slice(0, i) + replacement + t.slice(i + 1);
    }
    case 1:
      return t.slice(0, i) + t.slice(i + 1);
    case 2:
      return t.slice(0, i) + c + t.slice(i);
    default: {
      const letters = [...t].map((ch, j) => [ch, j] as const).filter(([ch]) => ch.toLowerCase() !== ch.toUpperCase());
      const [ch, j] = letters[at % letters.length]!;
      return t.slice(0, j) + (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()) + t.slice(j + 1);
    }
  }
}

/** An Authorization header (undefined: none) and whether it presents exactly the admin token. */
type Credential = { header: string | undefined; exact: boolean | 'unclear' };
const credentialArb: fc.Arbitrary<Credential> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('Bearer', 'bearer', 'BEARER', 'BeArEr').map((scheme) => ({ header: `${scheme} ${TEST_ADMIN_TOKEN}`, exact: true })) },
  { weight: 1, arbitrary: fc.constant({ header: undefined, exact: false }) },
  { weight: 4, arbitrary: fc.tuple(fc.nat(), fc.nat(), headerChar.filter((c) => c !== ' ')).map(([at, how, c]) => ({ header: `Bearer ${nearToken(at, how, c)}`, exact: false })) },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(
        (t: string) => `Bearer  ${t}`,
        (t: string) => `Bearer\t${t}`,
        (t: string) => `Basic ${t}`,
        (t: string) => `Token ${t}`,
        (t: string) => t,
        (t: string) => `Bearer${t}`,
        (t: string) => `Bearer ${t}${t}`,
        (t: string) => `Bearer ${t} ${t}`,
        (t: string) => `Bearer ${t}, Bearer ${t}`,
        (t: string) => `Bearer "${t}"`,
        (t: string) => `Bearer ${Buffer.from(t).toString('base64')}`,
        (t: string) => `Bearer ${t.toUpperCase()}`,
        () => 'Bearer ',
        () => 'Bearer',
        () => '',
      )
      .map((f) => ({ header: f(TEST_ADMIN_TOKEN), exact: false })),
  },
  // Whitespace around the value: HTTP parsers strip it from a real connection, inject may keep it.
  { weight: 1, arbitrary: fc.constantFrom(`Bearer ${TEST_ADMIN_TOKEN} `, ` Bearer ${TEST_ADMIN_TOKEN}`).map((header): Credential => ({ header, exact: 'unclear' })) },
  { weight: 2, arbitrary: headerString.map((h) => ({ header: h, exact: false })) },
  { weight: 1, arbitrary: headerString.map((h) => ({ header: `Bearer ${h}`, exact: h === TEST_ADMIN_TOKEN })) },
);

/** Query strings, some carrying the token (or a credential parameter). */
const tokenQueryArb: fc.Arbitrary<Record<string, string> | undefined> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constant({ limit: '5' }) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom(...QUERY_KEY_PARAMS, 'TOKEN', 'Api_Key', 'admin_token', 'adminToken', 'auth', 'x'), fc.oneof(fc.constant(TEST_ADMIN_TOKEN), fc.constant(`Bearer ${TEST_ADMIN_TOKEN}`), fc.string({ maxLength: 10 })))
      .map(([k, v]) => ({ [k]: v })),
  },
);

function queryCarriesToken(query: Record<string, string> | undefined): boolean {
  return Object.entries(query ?? {}).some(([k, v]) => KEY_PARAM_NAMES.has(k.toLowerCase()) || k.includes(TEST_ADMIN_TOKEN) || v.includes(TEST_ADMIN_TOKEN));
}

/** DNS names of 101 to 253 characters: labels of up to 60 letters and digits, then `.example`. */
const longHostname = fc.tuple(fc.integer({ min: 101, max: 253 }), fc.constantFrom('a', 'b', '0')).map(([length, c]) => {
  const labels: string[] = [];
  for (let rest = length - '.example'.length; rest > 0; rest -= 61) labels.push(c.repeat(Math.min(60, rest)));
  const name = `${labels.join('.')}.example`;
  return name.replace(/^\./, '');
});

describeEachDatabase('admin API fuzz', (get) => {
  test(`admin rule: only the exact admin token in the Authorization header gets through; anything else (missing, wrong, one character off, another scheme, a key, the token in the query string) is 401 UNAUTHENTICATED and writes nothing (${runs(1)} runs)`, async (t) => {
    const ctx = get();
    const world = await buildAdminWorld(ctx);
    const stats = { accepted: 0, refused: 0 };
    // Bodies that would write if the token were taken.
    const requests = (): { url: string; body?: unknown; method?: 'GET' }[] => [
      { url: '/admin/v1/users', body: { email: `auth-${randomBytes(6).toString('hex')}@example.com`, name: 'Token' } },
      { url: '/admin/v1/organizations', body: { name: 'Token org', ownerUserId: world.owner } },
      { url: `/admin/v1/organizations/${world.org}/members`, body: { userId: world.stranger, role: 'member' } },
      { url: `/admin/v1/organizations/${world.org}/members/${world.member}/remove` },
      { url: '/admin/v1/workspaces', body: { name: 'Token ws', plan: 'free', ownerUserId: world.owner } },
      { url: `/admin/v1/workspaces/${world.personal}/settings`, body: { budgets: { dailyMillicents: 777 } } },
      { url: `/admin/v1/workspaces/${world.personal}/credits`, body: { amountMillicents: 3 } },
      { url: `/admin/v1/workspaces/${world.personal}/domains`, body: { hostname: `t${randomBytes(4).toString('hex')}.example.com` } },
      { url: `/admin/v1/workspaces/${world.personal}/domains/hooks.example.com/verify`, body: { method: 'operator' } },
      { url: `/admin/v1/workspaces/${world.team}/domains/hooks.example.com/remove` },
      { url: `/admin/v1/workspaces/${world.personal}/provider-keys`, body: { provider: 'openai', apiKey: `sk-${randomBytes(8).toString('hex')}` } },
      { url: '/admin/v1/keys', body: { userId: world.owner, workspaceIds: [world.personal], scopes: ['usage:read'], operations: [], transports: ['rest'] } },
      { url: `/admin/v1/keys/${world.tenant.key.id}/revoke` },
      { url: `/admin/v1/workspaces/${world.personal}/notifications`, method: 'GET' },
    ];
    await check(
      fc.asyncProperty(fc.nat(), credentialArb, tokenQueryArb, fc.boolean(), async (pick, credential, query, useTenantKey) => {
        const list = requests();
        const r = list[pick % list.length]!;
        const header = useTenantKey && credential.exact === false && credential.header === undefined ? `Bearer ${world.tenant.secret}` : credential.header;
        const before = await snapshot(ctx);
        const res = await ctx.app.inject({
          method: r.method ?? 'POST',
          url: r.url,
          headers: header === undefined ? {} : { authorization: header },
          ...(r.body !== undefined ? { payload: r.body as object } : {}),
          ...(query ? { query } : {}),
        });
        const body = assertEnvelope(res);
        assert.equal(res.body.includes(TEST_ADMIN_TOKEN), false, 'no answer shows the admin token');
        const exact = credential.exact === true && header === credential.header;
        if (exact && !queryCarriesToken(query)) {
          assert.notEqual(res.statusCode, 401, `the exact token is accepted: ${res.body}`);
          stats.accepted += 1;
          return;
        }
        if (credential.exact === 'unclear' && !queryCarriesToken(query) && res.statusCode !== 401) return;
        assert.equal(body.code, 'UNAUTHENTICATED', `${JSON.stringify(header)} with query ${JSON.stringify(query)}: ${res.statusCode} ${res.body}`);
        assertNothingWritten(before, await snapshot(ctx), `401 for ${r.url}`);
        stats.refused += 1;
      }),
      { numRuns: runs(1) },
    );
    t.diagnostic(JSON.stringify(stats));
    assert.ok(stats.accepted > 0 && stats.refused > 0, JSON.stringify(stats));
  });

  test(`admin rule: random bodies and path ids on every admin endpoint never give a 5xx, every refusal is a registered error that writes nothing, and every accepted request does exactly what the README says (${runs(3)} runs)`, async (t) => {
    const ctx = get();
    const world = await buildAdminWorld(ctx);
    const f: Fuzz = { ctx, secrets: new Set([world.tenant.secret]), stats: {} };
    // Fixed requests first, so that every endpoint is reached with a request it accepts whatever
    // the seed (the coverage assertion at the end); the generated plans follow.
    const id = (text: string): IdRef => ({ ref: 'unknown', id: text });
    const host = `coverage-${randomBytes(4).toString('hex')}.example.com`;
    const ownerKey = await ctx.deps.db.selectFrom('api_keys').select('id').where('user_id', '=', world.owner).executeTakeFirstOrThrow();
    const examples: [AdminPlan][] = [
      { ep: 'users', path: [], body: { fields: [['email', good(`coverage-${randomBytes(4).toString('hex')}@example.com`)], ['name', good('Coverage')]] } },
      { ep: 'orgs', path: [], body: { fields: [['name', good('Coverage org')], ['ownerUserId', good(id(world.stranger))]] } },
      { ep: 'membersSet', path: [id(world.org)], body: { fields: [['userId', good(id(world.stranger))], ['role', good('member')]] } },
      { ep: 'membersRemove', path: [id(world.org), id(world.stranger)], body: { fields: [] } },
      { ep: 'workspaces', path: [], body: { fields: [['name', good('Coverage')], ['plan', good('free')], ['ownerUserId', good(id(world.stranger))]] } },
      { ep: 'settings', path: [id(world.personal)], body: { fields: [['budgets', good({ dailyMillicents: 1_000_000 })]] } },
      { ep: 'credits', path: [id(world.personal)], body: { fields: [['amountMillicents', good(1_000)]] } },
      { ep: 'domainsAdd', path: [id(world.personal)], body: { fields: [['hostname', good(host)]] } },
      { ep: 'domainsVerify', path: [id(world.personal)], hostname: { host: 'other', name: host }, body: { fields: [['method', good('operator')]] }, publishTxt: false },
      { ep: 'domainsRemove', path: [id(world.personal)], hostname: { host: 'other', name: host }, body: { fields: [] } },
      { ep: 'providerKeys', path: [id(world.personal)], body: { fields: [['provider', good('openai')], ['apiKey', good(`sk-PK${randomBytes(8).toString('hex')}`)]] } },
      { ep: 'keysCreate', path: [], body: { fields: [['userId', good(id(world.owner))], ['workspaceIds', good([id(world.personal)])], ['scopes', good(['usage:read'])], ['operations', good([])], ['transports', good(['rest'])]] } },
      { ep: 'notifications', path: [id(world.personal)], body: { fields: [] }, query: {} },
      { ep: 'keysRevoke', path: [id(ownerKey.id)], body: { fields: [] } },
    ].map((plan) => [plan as AdminPlan]);
    await check(
      fc.asyncProperty(adminPlan, async (plan) => {
        const before = await snapshot(ctx);
        const m = makeRequest(plan, before);
        let txtPublished = false;
        if (plan.ep === 'domainsVerify' && plan.publishTxt && m.quality !== 'bad') {
          const row = rowOf(before, 'workspaces', m.pathIds[0]) && before.domains.get(`${canon(m.pathIds[0])}|${normaliseHostname(m.hostname!)}`);
          if (row) {
            ctx.txtRecords.set(`_service-verify.${row.hostname}`, [[String(row.verification_token)]]);
            txtPublished = true;
          }
        }
        if (plan.ep === 'providerKeys') {
          for (const [k, c] of plan.body.fields) {
            const marker = k === 'apiKey' && typeof c.v === 'string' ? /PK[0-9a-f]{16}/.exec(c.v)?.[0] : undefined;
            if (marker) f.secrets.add(marker);
          }
        }
        const res = await send(ctx, m, plan.query);
        ctx.txtRecords.clear();
        const body = assertEnvelope(res, SUCCESS_CODE[plan.ep]);
        for (const s of f.secrets) assert.equal(res.body.includes(s), false, `a provider key or key secret appears in a response: ${s}`);
        const after = await snapshot(ctx);
        const outcome = res.statusCode === 200 ? 'OK' : body.code;
        f.stats[`${plan.ep}:${outcome}`] = (f.stats[`${plan.ep}:${outcome}`] ?? 0) + 1;
        if (m.payload !== undefined && Buffer.byteLength(m.payload) > BODY_LIMIT_BYTES) {
          assert.equal(outcome, 'PAYLOAD_TOO_LARGE', `a body over the limit is 413: ${res.statusCode} ${res.body}`);
        } else if (m.quality === 'bad') {
          const allowed = m.badPath ? ['INVALID_REQUEST', 'NOT_FOUND'] : ['INVALID_REQUEST'];
          assert.ok(allowed.includes(outcome), `an invalid request is 400 INVALID_REQUEST, got ${res.statusCode} ${res.body}`);
        } else if (m.quality === 'good') {
          assert.equal(outcome, predict(plan, m, before, ctx, txtPublished), `answer for ${m.method} ${m.url} ${m.payload?.slice(0, 300)}: ${res.body.slice(0, 300)}`);
        }
        if (res.statusCode !== 200) assertNothingWritten(before, after, `${res.statusCode} ${body.code} for ${m.url}`);
        else await verifyAccepted(f, plan, m, body.data, before, after);
      }),
      { numRuns: runs(3), examples },
    );
    t.diagnostic(`outcomes: ${JSON.stringify(Object.fromEntries(Object.entries(f.stats).sort()))}`);
    const accepted = Object.keys(f.stats).filter((k) => k.endsWith(':OK')).length;
    assert.ok(accepted >= Math.min(10, runs(3) / 20), `the generators reach accepted requests of many endpoints: ${JSON.stringify(f.stats)}`);
  });

  // Found here and fixed (src/app.ts, the router's maxParamLength): POST …/domains accepts
  // hostnames of up to 253 characters, but the router refused a path parameter longer than 100
  // characters, so such a domain could be added and never verified or removed.
  test(`admin rule: a hostname POST …/domains accepted can be verified and removed through its path, long DNS names included (${runs(0.05, 3)} runs)`, async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    await check(
      fc.asyncProperty(longHostname, async (hostname) => {
        assert.ok(hostname.length > 100 && hostname.length <= 253, `${hostname.length}`);
        const added = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains`, { hostname });
        assert.equal(assertEnvelope(added, 'ADMIN_DOMAINS_ADD').data.domain.hostname, hostname);
        const verified = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains/${hostname}/verify`, { method: 'operator' });
        assert.equal(assertEnvelope(verified).code, 'ADMIN_DOMAINS_VERIFY', `verify of a ${hostname.length}-character hostname: ${verified.statusCode} ${verified.body}`);
        const removed = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains/${hostname}/remove`);
        assert.equal(assertEnvelope(removed).code, 'ADMIN_DOMAINS_REMOVE', `remove of a ${hostname.length}-character hostname: ${removed.statusCode} ${removed.body}`);
      }),
      { numRuns: runs(0.05, 3) },
    );
  });
});

// ---- job streams --------------------------------------------------------------------------------

const SPRITE = { prompt: 'a knight', frames: 3, frameWidth: 16, frameHeight: 16 };
const STREAM_LIMIT = PLAN_DEFAULTS.pro.streams;
/** Patience of the state waits below (each ends as soon as its state holds): a loaded machine's, not a stopwatch. */
const STATE_WAIT_MS = 30_000;

interface StreamWorld {
  pro: Tenant;
  other: Tenant;
  free: Tenant;
  starter: Tenant;
  /** Completed jobs of `pro`: with their whole history, with only the current version, with version 2 missing. */
  full: string;
  trimmed: string;
  holed: string;
  /** A completed job of `other`. */
  foreign: string;
}

async function queuedJob(ctx: TestContext, t: Tenant): Promise<{ jobId: string; version: number }> {
  const res = await run(ctx, t, 'sprite.generate', SPRITE);
  assert.equal(res.statusCode, 202, res.body);
  const data = res.json().data;
  return { jobId: data.jobId, version: (await getJob(ctx, t, data.jobId)).version };
}

async function buildStreamWorld(ctx: TestContext): Promise<StreamWorld> {
  const tenant = async (plan: 'free' | 'starter' | 'pro') => {
    const t = await seedTenant(ctx.deps, { plan, credits: 1_000_000_000 });
    // Points and queue limits out of the way: the properties are about streams.
    const res = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 1e12, pointsPerMonth: 1e12, waitingJobs: 1e6, runningJobs: 1e6 } });
    assert.equal(res.statusCode, 200, res.body);
    return t;
  };
  const pro = await tenant('pro');
  const other = await tenant('pro');
  const free = await tenant('free');
  const starter = await tenant('starter');
  const full = (await queuedJob(ctx, pro)).jobId;
  const trimmed = (await queuedJob(ctx, pro)).jobId;
  const holed = (await queuedJob(ctx, pro)).jobId;
  const foreign = (await queuedJob(ctx, other)).jobId;
  await drain(ctx);
  for (const [t, id] of [[pro, full], [pro, trimmed], [pro, holed], [other, foreign]] as const) assert.equal((await getJob(ctx, t, id)).status, 'completed');
  const version = (await getJob(ctx, pro, trimmed)).version as number;
  assert.ok(version >= 4, `several versions (${version})`);
  await ctx.deps.db.deleteFrom('job_versions').where('job_id', '=', trimmed).where('version', '<', version).execute();
  await ctx.deps.db.deleteFrom('job_versions').where('job_id', '=', holed).where('version', '=', 2).execute();
  return { pro, other, free, starter, full, trimmed, holed, foreign };
}

/** A response that is no stream: the error envelope with its registered status (Retry-After on 429), or 204 without a body. */
async function assertRefusal(res: Response): Promise<{ code: string; details?: any }> {
  if (res.status === 204) {
    assert.equal(await res.text(), '');
    return { code: 'NO_CONTENT' };
  }
  const text = await res.text();
  const body = assertEnvelope({ statusCode: res.status, body: text, headers: { 'x-request-id': res.headers.get('x-request-id') ?? undefined } });
  if (res.status === 429) {
    assert.match(String(res.headers.get('retry-after')), /^[1-9]\d*$/, 'a 429 carries Retry-After in whole seconds');
    assert.equal(body.details.limit, 'STREAMS');
    assert.ok(['workspace', 'key'].includes(body.details.scope), body.details.scope);
    assert.equal(body.details.maximum, STREAM_LIMIT);
    assert.ok(Number.isFinite(Date.parse(body.details.resetsAt)));
  }
  return body;
}

// Accept headers: media ranges with qualities, judged as RFC 9110 section 12.5.1 says (the most
// specific range that matches text/event-stream decides; q=0 means "not this").
const ACCEPT_RANGES = ['text/event-stream', 'TEXT/Event-Stream', 'text/event-stream;charset=utf-8', 'text/*', 'Text/*', '*/*', 'application/json', 'text/html', 'application/*', 'text/plain'];
const ACCEPT_QS = [undefined, '0', '0.0', '0.000', '1', '1.0', '0.5', '0.001'];
type AcceptPlan = { header: string | undefined; accepts: boolean | 'unclear' };

function specificity(range: string): number {
  const type = range.split(';')[0]!.trim().toLowerCase();
  return type === 'text/event-stream' ? 2 : type === 'text/*' ? 1 : type === '*/*' ? 0 : -1;
}

const acceptArb: fc.Arbitrary<AcceptPlan> = fc.oneof(
  { weight: 20, arbitrary: fc.constant<AcceptPlan>({ header: 'text/event-stream', accepts: true }) },
  {
    weight: 6,
    arbitrary: fc.array(fc.tuple(fc.constantFrom(...ACCEPT_RANGES), fc.constantFrom(...ACCEPT_QS), fc.constantFrom(';', '; ', ' ;')), { minLength: 1, maxLength: 3 }).map((list): AcceptPlan => {
      const header = list.map(([r, q, sep]) => (q === undefined ? r : `${r}${sep}q=${q}`)).join(', ');
      const levels = list.map(([r, q]) => ({ level: specificity(r), q: q === undefined ? 1 : Number(q) })).filter((x) => x.level >= 0);
      if (levels.length === 0) return { header, accepts: false };
      const top = Math.max(...levels.map((x) => x.level));
      const qs = levels.filter((x) => x.level === top).map((x) => x.q > 0);
      return { header, accepts: qs.every(Boolean) ? true : qs.some(Boolean) ? 'unclear' : false };
    }),
  },
  { weight: 1, arbitrary: fc.constant<AcceptPlan>({ header: undefined, accepts: false }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', ',', 'text/event-stream;q=abc', 'text/event-stream;q=-1', 'text/event-stream;q=1.5', 'text/event-streams', 'event-stream', 'text/event-stream/x').map((header): AcceptPlan => ({ header, accepts: 'unclear' })) },
  { weight: 1, arbitrary: headerString.map((h): AcceptPlan => ({ header: h, accepts: /event-stream|\*/i.test(h) ? 'unclear' : false })) },
);

/** Last-Event-ID: none, relative to the job's version, text of every kind, or several header lines. */
type LeidPlan = { kind: 'none' } | { kind: 'rel'; delta: number } | { kind: 'text'; text: string } | { kind: 'multi'; values: string[] };
const LEID_TEXTS = ['', ' ', ' 3 ', '03', '+3', '-1', '-0', '1.5', '1e3', '0x10', '0', '999999999999999', '9999999999999999', '99999999999999999999', 'abc', '3\t', 'null', 'Infinity', Buffer.from('３').toString('latin1'), Buffer.from('٣').toString('latin1'), 'é'];
const leidArb: fc.Arbitrary<LeidPlan> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<LeidPlan>({ kind: 'none' }) },
  { weight: 14, arbitrary: fc.integer({ min: -12, max: 6 }).map((delta): LeidPlan => ({ kind: 'rel', delta })) },
  { weight: 3, arbitrary: fc.constantFrom(...LEID_TEXTS).map((text): LeidPlan => ({ kind: 'text', text })) },
  { weight: 1, arbitrary: headerString.map((text): LeidPlan => ({ kind: 'text', text })) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom('1', '2', '', 'x'), { minLength: 2, maxLength: 3 }).map((values): LeidPlan => ({ kind: 'multi', values })) },
);

/** The Last-Event-ID header lines to send, and the version the server must read from them (undefined: none; null: 400). */
function leidFor(plan: LeidPlan, version: number): { lines: string[] | undefined; after: number | undefined | null } {
  const lines = plan.kind === 'none' ? undefined : plan.kind === 'rel' ? [String(version + plan.delta)] : plan.kind === 'text' ? [plan.text] : plan.values;
  if (lines === undefined) return { lines, after: undefined };
  // Several lines reach the server as one value joined with ", "; HTTP strips the value's surrounding blanks.
  const value = lines.join(', ').trim();
  if (value === '') return { lines, after: undefined };
  return { lines, after: /^\d{1,15}$/.test(value) ? Number(value) : null };
}

async function slotCount(ctx: TestContext, workspaceId: string): Promise<number> {
  return (await ctx.deps.db.selectFrom('stream_slots').select('id').where('workspace_id', '=', workspaceId).execute()).length;
}

const events = (frames: Frame[]) => frames.filter((f) => f.comment === undefined);

/**
 * What a stream of a finished job must send after Last-Event-ID `after`: every stored version
 * after it, in order, older ones with `output: {}`, the current one as the full snapshot; from
 * the first version missing from the history on, `event: gap` and the current snapshot.
 */
async function expectedFrames(ctx: TestContext, t: Tenant, jobId: string, after: number | undefined): Promise<{ event: string; id?: number; data: unknown }[]> {
  const current = await getJob(ctx, t, jobId);
  const version = current.version as number;
  if (after === undefined) return [{ event: 'job', id: version, data: current }];
  const gap = [{ event: 'gap', data: { jobId, lastEventId: after } }, { event: 'job', id: version, data: current }];
  if (after > version) return gap;
  const stored = new Map((await ctx.deps.db.selectFrom('job_versions').select(['version', 'snapshot_json']).where('job_id', '=', jobId).execute()).map((r) => [Number(r.version), JSON.parse(r.snapshot_json)]));
  const out: { event: string; id?: number; data: unknown }[] = [];
  for (let v = after + 1; v < version; v++) {
    if (!stored.has(v)) return [...out, ...gap];
    out.push({ event: 'job', id: v, data: { ...stored.get(v), output: {} } });
  }
  return [...out, { event: 'job', id: version, data: current }];
}

describeEachDatabase('job stream fuzz', (get) => {
  test(`stream rule: every open of a finished job is either refused before the stream starts with the registered error (400 Accept or Last-Event-ID, 403 PLAN_REQUIRED, 404 another tenant's or no job, 204 at the terminal version) or sends the snapshot, or the versions after Last-Event-ID (event: gap and the snapshot where the history is gone), ids growing by one, and closes (${runs(1.5)} runs)`, async (t) => {
    const ctx = get();
    const w = await buildStreamWorld(ctx);
    const base = await baseUrl(ctx);
    const stats: Record<string, number> = {};
    await check(
      fc.asyncProperty(
        fc.constantFrom('pro', 'pro', 'pro', 'pro', 'free', 'starter'),
        fc.constantFrom('full', 'full', 'trimmed', 'holed', 'foreign', 'unknown', 'malformed', 'upper'),
        leidArb,
        acceptArb,
        async (who, which, leidPlan, accept) => {
          const tenant = who === 'pro' ? w.pro : who === 'free' ? w.free : w.starter;
          const jobId =
            which === 'unknown' ? randomUUID() : which === 'malformed' ? `${w.full.slice(0, -1)}x` : which === 'upper' ? w.full.toUpperCase() : which === 'foreign' ? w.foreign : w[which as 'full' | 'trimmed' | 'holed'];
          const own = which === 'full' || which === 'trimmed' || which === 'holed' || which === 'upper';
          const version = own ? ((await getJob(ctx, w.pro, which === 'upper' ? w.full : jobId)).version as number) : 1;
          const { lines, after } = leidFor(leidPlan, version);
          const headers: Record<string, string | string[]> = { authorization: `Bearer ${tenant.secret}`, 'x-service-workspace': tenant.workspace.id };
          if (accept.header !== undefined) headers.accept = accept.header;
          if (lines !== undefined) headers['last-event-id'] = lines.length === 1 ? lines[0]! : lines;
          const res = await streamGet(`${base}/v1/jobs/${encodeURIComponent(jobId)}/stream`, headers).response;
          // The order of the checks (docs/decisions.md "Order of checks"): path, Accept and
          // Last-Event-ID (400), plan (403), job in the workspace (404), terminal resume (204).
          const afterAccept = async (): Promise<string> => {
            if (after === null) return 'INVALID_REQUEST';
            if (who !== 'pro') return 'PLAN_REQUIRED';
            if (which === 'upper') {
              // An id in another letter case names the job exactly when GET /v1/jobs/{id} says so.
              const read = await call(ctx, 'GET', `/v1/jobs/${jobId}`, { secret: w.pro.secret, workspaceId: w.pro.workspace.id });
              if (read.statusCode === 404) return 'NOT_FOUND';
            } else if (!own) return 'NOT_FOUND';
            return after === version ? 'NO_CONTENT' : 'STREAM';
          };
          const allowed =
            which === 'malformed' || accept.accepts === false ? ['INVALID_REQUEST'] : accept.accepts === 'unclear' ? ['INVALID_REQUEST', await afterAccept()] : [await afterAccept()];
          const what = `(Accept ${JSON.stringify(accept.header)}, Last-Event-ID ${JSON.stringify(lines)})`;
          if (res.status !== 200) {
            const { code } = await assertRefusal(res);
            stats[code] = (stats[code] ?? 0) + 1;
            assert.ok(allowed.includes(code), `expected ${allowed.join(' or ')}, got ${res.status} ${code} ${what}`);
            return;
          }
          stats.STREAM = (stats.STREAM ?? 0) + 1;
          assert.ok(allowed.includes('STREAM'), `expected ${allowed.join(' or ')}, got a stream ${what}`);
          assert.match(String(res.headers.get('content-type')), /^text\/event-stream/);
          const frames = events(await frameReader(res).rest(5_000));
          const want = await expectedFrames(ctx, w.pro, which === 'upper' ? w.full : jobId, after ?? undefined);
          assert.deepEqual(
            frames.map((f) => ({ event: f.event, ...(f.id !== undefined ? { id: Number(f.id) } : {}), data: JSON.parse(f.data!) })),
            want,
            `frames after Last-Event-ID ${JSON.stringify(lines)}`,
          );
          let previous: number | undefined;
          for (const f of frames) {
            if (f.event === 'gap') previous = undefined;
            else {
              if (previous !== undefined) assert.equal(Number(f.id), previous + 1, 'ids grow by one');
              previous = Number(f.id);
            }
          }
        },
      ),
      { numRuns: runs(1.5) },
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
    assert.ok((stats.STREAM ?? 0) > 0 && (stats.INVALID_REQUEST ?? 0) > 0, JSON.stringify(stats));
    await waitFor('no slot left', async () => (await slotCount(ctx, w.pro.workspace.id)) === 0, STATE_WAIT_MS);
  });

  test(`stream rule: live streams send every change once and in order and close after the terminal status; beyond the plan's ${STREAM_LIMIT} concurrent streams an open is 429 CONCURRENCY_LIMITED with Retry-After; no slot stays taken after a client disconnects (also while its stream is being set up), so new streams within the limit open (${runs(0.2, 4)} runs)`, async (t) => {
    const ctx = get();
    const w = await buildStreamWorld(ctx);
    const base = await baseUrl(ctx);
    const stats: Record<string, number> = {};
    const count = (k: string) => (stats[k] = (stats[k] ?? 0) + 1);
    const sse = (extra: Record<string, string> = {}) => apiHeaders(w.pro, { accept: 'text/event-stream', ...extra });
    const settled = (held: number, what: string) => waitFor(`${what}: the slots are those of the ${held} streams still held`, async () => (await slotCount(ctx, w.pro.workspace.id)) === held, STATE_WAIT_MS);

    type Action =
      | { a: 'open'; job: number; leid: 'none' | 'current' | 'previous' }
      | { a: 'drop'; which: number }
      | { a: 'abort'; job: number; delayMs: number }
      | { a: 'finish'; job: number; how: 'cancel' | 'drain' };
    const action: fc.Arbitrary<Action> = fc.oneof(
      { weight: 7, arbitrary: fc.record({ a: fc.constant<'open'>('open'), job: fc.nat(1), leid: fc.constantFrom<'none' | 'current' | 'previous'>('none', 'none', 'current', 'previous') }) },
      { weight: 2, arbitrary: fc.record({ a: fc.constant<'drop'>('drop'), which: fc.nat() }) },
      { weight: 2, arbitrary: fc.record({ a: fc.constant<'abort'>('abort'), job: fc.nat(1), delayMs: fc.integer({ min: 0, max: 25 }) }) },
      { weight: 1, arbitrary: fc.record({ a: fc.constant<'finish'>('finish'), job: fc.nat(1), how: fc.constantFrom<'cancel' | 'drain'>('cancel', 'cancel', 'drain') }) },
    );

    interface Held {
      job: number;
      reader: ReturnType<typeof frameReader>;
      /** The last id received, or the Last-Event-ID sent when nothing came yet. */
      last: number;
    }

    /** A stream that ended on its own: the rest of its frames are the versions after `last` up to the terminal one, then the end. */
    async function assertFinished(h: Held, jobId: string): Promise<void> {
      const frames = events(await h.reader.rest(5_000));
      const final = await getJob(ctx, w.pro, jobId);
      assert.ok(['completed', 'failed', 'cancelled'].includes(final.status), final.status);
      assert.deepEqual(
        frames.map((f) => [f.event, Number(f.id)]),
        Array.from({ length: final.version - h.last }, (_, i) => ['job', h.last + 1 + i]),
        `every version after ${h.last} once, in order, up to the terminal ${final.version}`,
      );
      assert.deepEqual(JSON.parse(frames.at(-1)!.data!), final, 'the terminal event is the full snapshot');
    }

    // The first failure, kept: once a run fails, its streams may outlive it and the shrunk
    // cases fail on that instead.
    let firstFailure: Error | undefined;
    await check(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 9 }), async (actions) => {
        const jobs = [await queuedJob(ctx, w.pro), await queuedJob(ctx, w.pro)];
        const finished = new Set<number>();
        const held: Held[] = [];
        try {
          await settled(0, 'start');
          for (const act of actions) {
            if (act.a === 'open') {
              const job = jobs[act.job]!;
              const version = finished.has(act.job) ? (await getJob(ctx, w.pro, job.jobId)).version : job.version;
              const leid = act.leid === 'none' ? undefined : act.leid === 'current' ? version : version - 1;
              const res = await httpGet(`${base}/v1/jobs/${job.jobId}/stream`, sse(leid === undefined ? {} : { 'last-event-id': String(leid) }));
              // Resuming at the terminal version is answered before any slot is weighed: nothing
              // more will come, so it takes no slot and is 204 even when every slot is taken.
              if (finished.has(act.job) && leid === version) {
                assert.equal((await assertRefusal(res)).code, 'NO_CONTENT', 'resuming at the terminal version is 204');
                continue;
              }
              if (held.length >= STREAM_LIMIT) {
                const refusal = await assertRefusal(res);
                assert.equal(refusal.code, 'CONCURRENCY_LIMITED', `open number ${held.length + 1}: ${res.status}`);
                count('429');
                continue;
              }
              assert.equal(res.status, 200, `open number ${held.length + 1} of ${STREAM_LIMIT} allowed: ${res.status} ${res.status === 200 ? '' : await res.text()}`);
              count('open');
              const h: Held = { job: act.job, reader: frameReader(res), last: leid ?? version - 1 };
              if (finished.has(act.job)) {
                // A finished job: what is missing, then the end of the stream (and its slot).
                await assertFinished(h, job.jobId);
                await settled(held.length, 'a finished stream');
                continue;
              }
              if (leid !== version) {
                const first = await h.reader.next(5_000);
                assert.deepEqual([first?.event, Number(first?.id)], ['job', version], 'the current snapshot first (or the version after Last-Event-ID)');
                assert.deepEqual(JSON.parse(first!.data!), await getJob(ctx, w.pro, job.jobId));
                h.last = version;
              }
              held.push(h);
            } else if (act.a === 'drop') {
              if (held.length === 0) continue;
              const [h] = held.splice(act.which % held.length, 1);
              await h!.reader.cancel();
              count('drop');
              await settled(held.length, 'a dropped stream');
            } else if (act.a === 'abort') {
              // The client gives up before or while the server sets the stream up.
              const job = jobs[act.job]!;
              const { response, request } = streamGet(`${base}/v1/jobs/${job.jobId}/stream`, sse({ 'last-event-id': String(job.version) }));
              response.catch(() => {});
              await new Promise((r) => setTimeout(r, act.delayMs));
              request.destroy();
              count('abort');
              // Let the server finish with the request, so a slot it leaves is seen in this run.
              await new Promise((r) => setTimeout(r, 100));
              await settled(held.length, `a request given up after ${act.delayMs} ms`);
            } else {
              const targets = act.how === 'drain' ? [0, 1] : [act.job];
              if (act.how === 'drain') await drain(ctx);
              else if (!finished.has(act.job)) {
                const res = await call(ctx, 'POST', `/v1/jobs/${jobs[act.job]!.jobId}/cancel`, { secret: w.pro.secret, workspaceId: w.pro.workspace.id });
                assert.equal(res.statusCode, 200, res.body);
              }
              for (const j of targets) finished.add(j);
              for (const h of held.filter((x) => targets.includes(x.job))) {
                await assertFinished(h, jobs[h.job]!.jobId);
                held.splice(held.indexOf(h), 1);
              }
              count('finish');
              await settled(held.length, 'streams of finished jobs');
            }
          }
          // The end of the run: streams of cancelled jobs close, and then the plan's limit opens again.
          for (const [i, job] of jobs.entries()) {
            if (!finished.has(i)) assert.equal((await call(ctx, 'POST', `/v1/jobs/${job.jobId}/cancel`, { secret: w.pro.secret, workspaceId: w.pro.workspace.id })).statusCode, 200);
          }
          for (const h of held) await assertFinished(h, jobs[h.job]!.jobId);
          await settled(0, 'every stream ended');
          const fresh = await queuedJob(ctx, w.pro);
          const readers = [];
          for (let i = 0; i < STREAM_LIMIT; i++) {
            const res = await httpGet(`${base}/v1/jobs/${fresh.jobId}/stream`, sse());
            assert.equal(res.status, 200, `stream ${i + 1} of ${STREAM_LIMIT} opens once the others are gone`);
            const reader = frameReader(res);
            assert.equal((await reader.next(5_000))?.event, 'job');
            readers.push(reader);
          }
          assert.equal((await assertRefusal(await httpGet(`${base}/v1/jobs/${fresh.jobId}/stream`, sse()))).code, 'CONCURRENCY_LIMITED');
          for (const r of readers) await r.cancel();
          await call(ctx, 'POST', `/v1/jobs/${fresh.jobId}/cancel`, { secret: w.pro.secret, workspaceId: w.pro.workspace.id });
          await settled(0, 'the end of the run');
        } catch (err) {
          const slots = await ctx.deps.db.selectFrom('stream_slots').selectAll().where('workspace_id', '=', w.pro.workspace.id).execute();
          firstFailure ??= new Error(`${(err as Error).message}\nactions: ${JSON.stringify(actions)}\nslots then: ${JSON.stringify(slots)}`);
          for (const h of held) await h.reader.cancel().catch(() => {});
          throw err;
        }
      }),
      { numRuns: runs(0.2, 4) },
    ).catch((err: Error) => {
      if (firstFailure) err.message += `\nFirst failure: ${firstFailure.message}`;
      throw err;
    });
    t.diagnostic(`actions: ${JSON.stringify(stats)}`);
  });

  test(`stream rule: a client that gives up while its open waits on the database (auth, the job read, the slot's transaction) leaves no slot behind (${runs(0.08, 3)} runs)`, async () => {
    const ctx = get();
    const w = await buildStreamWorld(ctx);
    const base = await baseUrl(ctx);
    await check(
      fc.asyncProperty(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 10, max: 150 }), fc.constantFrom('current', 'none'), async (giveUpMs, holdMoreMs, leid) => {
        const job = await queuedJob(ctx, w.pro);
        // A transaction held open makes the open wait on the database, as under load.
        let release!: () => void;
        const busy = ctx.deps.db.transaction().execute(async (trx) => {
          await trx.selectFrom('workspaces').select('id').where('id', '=', w.pro.workspace.id).execute();
          await new Promise<void>((r) => (release = r));
        });
        await new Promise((r) => setTimeout(r, 10));
        const headers = apiHeaders(w.pro, { accept: 'text/event-stream', ...(leid === 'current' ? { 'last-event-id': String(job.version) } : {}) });
        const { response, request } = streamGet(`${base}/v1/jobs/${job.jobId}/stream`, headers);
        response.catch(() => {});
        await new Promise((r) => setTimeout(r, giveUpMs));
        request.destroy();
        await new Promise((r) => setTimeout(r, holdMoreMs));
        release();
        await busy;
        // Well before the 15 s keep-alive that would notice the dead connection.
        await new Promise((r) => setTimeout(r, 200));
        await waitFor('no slot of the abandoned open', async () => (await slotCount(ctx, w.pro.workspace.id)) === 0, STATE_WAIT_MS);
        const res = await call(ctx, 'POST', `/v1/jobs/${job.jobId}/cancel`, { secret: w.pro.secret, workspaceId: w.pro.workspace.id });
        assert.equal(res.statusCode, 200, res.body);
      }),
      { numRuns: runs(0.08, 3) },
    );
  });
});

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
    for (const tenant of [a, b]) assert.equal((await run(ctx, tenant, 'image.generate', { prompt: 'fuzz [sim:delay=1]' })).statusCode, 202);
    await drain(ctx);
    await run(ctx, a, 'image.generate', { prompt: 'held [sim:delay=1]' });
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
      { numRuns: runs(0.5, 20) },
    );
    t.diagnostic(`outcomes: ${JSON.stringify(Object.fromEntries(Object.entries(stats).sort()))}`);
    assert.ok(Object.keys(stats).filter((k) => k.endsWith(':OK')).length >= Math.min(6, runs(0.5, 20) / 10), JSON.stringify(stats));
  });
});
