/**
 * What the admin fuzz tests (test/admin/admin-fuzz.test.ts, test/admin/admin-reads-fuzz.test.ts)
 * read back from an answer and from the database: the envelope of any answer (registered code and
 * status), snapshots of the tables an admin request may write with their row diffs, and what a
 * snapshot says (the row an id names, members, owners, managers, active keys, limits, credits).
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_REGISTRY, EXTRA_STATUSES } from '../../src/http/errors.js';
import { PLAN_DEFAULTS } from '../../src/modules/usage/plans.js';
import { type TestContext } from './harness.js';
import type { PLANS } from './admin-requests.js';

// ---- envelopes ------------------------------------------------------------------------------

type Res = Pick<LightMyRequestResponse, 'statusCode' | 'body' | 'headers'>;

/** The envelope of any answer: registered code and status for errors; returns the parsed body. */
export function assertEnvelope(res: Res, successCode?: string): any {
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
export type Table = keyof typeof WATCHED;
const TABLES = Object.keys(WATCHED) as Table[];
type Row = Record<string, any>;
export type Snapshot = Record<Table, Map<string, Row>>;

export async function snapshot(ctx: TestContext): Promise<Snapshot> {
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
export type Diff = Record<Table, TableDiff>;

export function diff(a: Snapshot, b: Snapshot): Diff {
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
export function assertChanges(d: Diff, expected: Partial<Record<Table, Partial<Record<keyof TableDiff, number | [number, number]>>>>): void {
  for (const table of TABLES) {
    for (const kind of ['added', 'removed', 'changed'] as const) {
      const want = expected[table]?.[kind] ?? 0;
      const [min, max] = Array.isArray(want) ? want : [want, want];
      const got = d[table][kind].length;
      assert.ok(got >= min && got <= max, `${table}.${kind}: ${got}, expected ${min === max ? min : `${min}..${max}`} (changes: ${describeDiff(d)})`);
    }
  }
}

export function assertNothingWritten(before: Snapshot, after: Snapshot, what: string): void {
  const d = diff(before, after);
  assert.equal(describeDiff(d), '{}', `a refusal writes nothing (${what})`);
}

export const ids = (s: Snapshot, table: Table) => [...s[table].keys()].sort();
export const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** An id as stored: UUIDs are case-insensitive, and the uuid format also takes the `urn:uuid:` form. */
export const canon = (s: unknown) => String(s).toLowerCase().replace(/^urn:uuid:/, '');
const isUuidText = (s: string) => /^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/i.test(s);

/** The row of `table` an id names (any letter case: UUIDs are case-insensitive), if any. */
export function rowOf(s: Snapshot, table: Table, id: unknown): Row | undefined {
  if (typeof id !== 'string' || !isUuidText(canon(id))) return undefined;
  return s[table].get(canon(id));
}

export function memberRole(s: Snapshot, orgId: string, userId: string): string | undefined {
  return s.organization_members.get(`${canon(orgId)}|${canon(userId)}`)?.role;
}
export function owners(s: Snapshot, orgId: string): number {
  return [...s.organization_members.values()].filter((m) => m.organization_id === canon(orgId) && m.role === 'owner').length;
}
export function manages(s: Snapshot, userId: string, ws: Row): boolean {
  if (ws.owner_user_id !== null) return ws.owner_user_id === canon(userId);
  const role = memberRole(s, String(ws.organization_id), userId);
  return role === 'owner' || role === 'admin';
}
export function activeKeys(s: Snapshot, workspaceId: string, now: number): number {
  const keys = [...s.api_key_workspaces.values()].filter((l) => l.workspace_id === workspaceId).map((l) => s.api_keys.get(String(l.key_id))!);
  return keys.filter((k) => k.revoked_at_ms === null && (k.expires_at_ms === null || Number(k.expires_at_ms) > now)).length;
}
export function limitsOf(ws: Row): Record<string, number> {
  return { ...PLAN_DEFAULTS[ws.plan as (typeof PLANS)[number]], ...JSON.parse(String(ws.limits_json)) };
}
export function sumRemaining(s: Snapshot, workspaceId: string): number {
  return [...s.credit_allocations.values()].filter((a) => a.workspace_id === workspaceId).reduce((n, a) => n + Number(a.remaining_mc), 0);
}
