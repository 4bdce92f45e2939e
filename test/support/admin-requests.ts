/**
 * Generated admin requests for test/admin/admin-fuzz.test.ts: values that know whether they are
 * certainly valid, certainly invalid or unclear (names, emails, plans, amounts, times, hostnames,
 * provider keys, IP ranges, budgets, path ids), a plan for every admin endpoint, and the request a
 * plan makes against a snapshot of the database.
 *
 * ADMIN_FUZZ_RUNS (default 100) scales every property's number of runs (`runs`), also those of
 * test/jobs/job-stream-fuzz.test.ts and test/admin/admin-reads-fuzz.test.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { BODY_LIMIT_BYTES } from '../../src/app.js';
import { QUERY_KEY_PARAMS } from '../../src/modules/auth/service.js';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import { normaliseHostname } from '../../src/modules/domains/service.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { TEST_ADMIN_TOKEN, type TestContext } from './harness.js';
import { canon, ids, manages, type Snapshot, type Table } from './admin-state.js';

const RUNS = Math.max(1, Number(process.env.ADMIN_FUZZ_RUNS ?? 100));
/** Runs of a property: its share of ADMIN_FUZZ_RUNS, at least `min`. */
export const runs = (share: number, min = 5) => Math.max(min, Math.round(RUNS * share));

export const MAX_SAFE = Number.MAX_SAFE_INTEGER;
export const SECRET_RE = /^wask_[A-Za-z0-9_-]{43}$/;
export const KEY_PARAM_NAMES = new Set(QUERY_KEY_PARAMS.map((p) => p.toLowerCase()));

// ---- generated values ----------------------------------------------------------------------

/** How sure a generated value is: certainly valid, certainly refused with 400, or unclear. */
type Quality = 'good' | 'bad' | 'vague';
interface Cell {
  v: unknown;
  q: Quality;
}
export const good = (v: unknown): Cell => ({ v, q: 'good' });
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
export type IdRef =
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
export const rawIdArb = fc.oneof(fc.constantFrom(...RAW_IDS), fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 20 }));

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

export const unicodeText = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 });
/** More than the body limit (1 MiB): 413 PAYLOAD_TOO_LARGE before anything else. */
const HUGE = 'x'.repeat(BODY_LIMIT_BYTES + 1);
export const WEIRD_STRINGS = ['\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\u202eevil', '\ufeff', '\u00a0', '\u3000', '\t\n', 'ü', '𝕏', '👩‍👩‍👧', 'Ω'.repeat(200), 'a'.repeat(201), 'é'.repeat(201), 'x'.repeat(5000), HUGE];

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

export const PLANS = ['free', 'starter', 'pro'] as const;
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
export const NOW = Date.UTC(2026, 10, 18, 12, 0, 0);
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
export const UNPARSEABLE_TIMES = ['2027-12-31T23:59:60Z', '2027-01-01T00:00:00+05', '2027-06-30T23:59:60.5Z', '2027-01-01T00:59:60+01:00'];
export const BAD_TIMES = ['tomorrow', '2027-13-01T00:00:00Z', '2027-02-29T00:00:00Z', '2027-01-01', '2027-01-01T00:00:00', '27-01-01T00:00:00Z', '2027-01-01T24:00:00Z', '2027-01-01T00:00:00+24:00', '1798761600000', '', '2027-01-01T00:00:00Z ', '２０２７-01-01T00:00:00Z', '+275760-09-13T00:00:00Z'];
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
export const PROBE_ADDRESSES = ['203.0.113.9', '10.1.2.3', '2001:db8::1', '198.51.100.7', '192.0.2.5', '127.0.0.1'];
export const GOOD_RANGES: Record<string, string[]> = {
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
export const BAD_RANGES = ['010.0.0.0/8', '10.0.0.0/08', '10.1/16', '0x0a.0.0.0/8', '167838211', '10.0.0.0/33', '2001:db8::/129', '10.0.0.0/-1', ' 10.0.0.0/8', '10.0.0.0/8 ', '10.0.0.0/', '/8', 'not-an-ip', '1.2.3.4.5', '10.0.0.0/8/1', '１０.0.0.0/8', '10.0.0.256', 'x'.repeat(65), 'a', '2001:db8::g/32', '[2001:db8::]/32', '10.0.0.0/8\u0000'];
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

export const SUCCESS_CODE: Record<Ep, string> = {
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
export interface AdminPlan {
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

export const adminPlan: fc.Arbitrary<AdminPlan> = fc.oneof(
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

export interface Made {
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

export function makeRequest(plan: AdminPlan, s: Snapshot): Made {
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

export async function send(ctx: TestContext, m: Made, query?: Record<string, string>, headers: Record<string, string> = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }) {
  return ctx.app.inject({
    method: m.method,
    url: m.url,
    headers: { ...headers, ...(m.payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(m.payload !== undefined ? { payload: m.payload } : {}),
    ...(query ? { query } : {}),
  });
}

/** Characters a real HTTP header value can hold (RFC 9110 field-value: VCHAR, SP, HTAB, obs-text). */
export const headerChar = fc
  .oneof({ weight: 8, arbitrary: fc.integer({ min: 0x21, max: 0x7e }) }, { weight: 1, arbitrary: fc.constant(0x20) }, { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) })
  .map((c) => String.fromCharCode(c));
export const headerString = fc.array(headerChar, { maxLength: 60 }).map((cs) => cs.join(''));
