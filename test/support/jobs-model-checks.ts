/**
 * The service side of test/jobs/jobs-model.test.ts: the running service (`Real`: its workspaces,
 * keys and secrets), requests through its API, and `checkAll`, which compares everything the API
 * shows (balances, allocations, jobs, ledger, events, budgets) with the model
 * (test/support/jobs-model.ts) after every command.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { admin, call, type TestContext } from './harness.js';
import { assertLedgerInvariants } from './ledger.js';
import { scopeFor, type Mode } from '../../src/lib/livemode.js';
import { directiveText, held, mExpire, mReserved, mTotal, note, period, PERIODS, spent, TERMINAL_EVENTS, type Model, type Refusal, type Status, type TerminalEvent } from './jobs-model.js';

// ---------------------------------------------------------------------------------------------
// The system under test.

export interface Real {
  ctx: TestContext;
  userId: string;
  wsIds: string[];
  /** The keys' mode (default live): with test keys the rows are the test twins' (`scopeOf`). */
  mode?: Mode;
  keyIds: string[];
  secrets: string[];
  eventCursors: (string | undefined)[];
  events: Map<string, Record<TerminalEvent, number>>;
  observed: Map<string, { status: Status; attempt: number }>;
}

export async function api(
  r: Real,
  keyIdx: number,
  ws: number,
  method: 'GET' | 'POST',
  url: string,
  o: { idem?: string; body?: unknown; query?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return call(r.ctx, method, url, {
    secret: r.secrets[keyIdx]!,
    workspaceId: r.wsIds[ws]!,
    ...(o.idem !== undefined ? { headers: { 'idempotency-key': o.idem } } : {}),
    ...(o.body !== undefined ? { body: o.body } : {}),
    ...(o.query ? { query: o.query } : {}),
  });
}

/** The id workspace `ws`'s rows are stored under: its test twin's with test keys. */
export function scopeOf(r: Real, ws: number): string {
  return scopeFor(r.wsIds[ws]!, r.mode ?? 'live');
}

export async function adminOk(ctx: TestContext, url: string, body: unknown): Promise<any> {
  const res = await admin(ctx, url, body);
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  return res.json().data;
}

export function expectRefusal(res: LightMyRequestResponse, want: Refusal, what: string): void {
  note(`refused ${want.code}${want.limit ? ` ${want.limit}` : ''}`);
  assert.equal(res.statusCode, want.status, `${what}: expected ${want.status} ${want.code}, got ${res.statusCode} ${res.body}`);
  const body = res.json();
  assert.equal(body.code, want.code, `${what}: ${res.body}`);
  if (want.limit !== undefined) assert.equal(body.details?.limit, want.limit, `${what}: the refusing budget (${res.body})`);
  if (want.retryAfter !== undefined) assert.equal(res.headers['retry-after'], String(want.retryAfter), `${what}: Retry-After to the period's reset`);
}

export async function pageAll(r: Real, ws: number, url: string): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const res = await api(r, 0, ws, 'GET', url, { query: { limit: '100', ...(cursor ? { cursor } : {}) } });
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    const data = res.json().data;
    items.push(...data.items);
    cursor = data.nextCursor;
  } while (cursor);
  return items;
}

/** Observed status changes must follow the state table (several steps may happen between two reads). */
function checkTransition(jobId: string, before: { status: Status; attempt: number } | undefined, now: { status: Status }, retried: boolean): void {
  if (!before || before.status === now.status) return;
  const from = before.status;
  assert.ok(from !== 'completed' && from !== 'cancelled', `job ${jobId}: terminal status ${from} moved to ${now.status}`);
  if (from === 'failed') assert.ok(retried, `job ${jobId}: failed moved to ${now.status} without a retry`);
  if (now.status === 'pending') assert.ok(from === 'failed' || from === 'processing', `job ${jobId}: ${from} → pending`);
}

const NO_EVENTS: Record<TerminalEvent, number> = { 'job.completed': 0, 'job.failed': 0, 'job.cancelled': 0 };

/** Reads the workspace's new terminal events from the feed into r.events. */
async function readEvents(r: Real, ws: number): Promise<void> {
  for (;;) {
    const cursor = r.eventCursors[ws];
    const res = await api(r, 0, ws, 'GET', '/v1/events', { query: { limit: '100', types: TERMINAL_EVENTS.join(','), ...(cursor ? { cursor } : {}) } });
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json().data;
    for (const e of page.items) {
      const id = e.data.job.id as string;
      const counts = { ...(r.events.get(id) ?? NO_EVENTS) };
      counts[e.type as TerminalEvent]++;
      r.events.set(id, counts);
      assert.equal(e.data.job.status, e.type.slice(4), `event ${e.type} carries the terminal status`);
    }
    r.eventCursors[ws] = page.nextCursor;
    if (!page.hasMore) break;
  }
}

/** Every job's terminal events exactly as the model's, once the feed has caught up (a state wait: 60 s at most, for a loaded machine). */
export async function checkEventsExactly(m: Model, r: Real): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    for (let ws = 0; ws < 2; ws++) await readEvents(r, ws);
    const behind = m.jobs.filter((mj) => TERMINAL_EVENTS.some((type) => (r.events.get(mj.id) ?? NO_EVENTS)[type] !== mj.events[type]));
    if (behind.length === 0) return;
    if (Date.now() > deadline) {
      const mj = behind[0]!;
      assert.deepEqual(r.events.get(mj.id) ?? NO_EVENTS, mj.events, `W${mj.ws}: terminal events of job ${mj.id}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function checkAll(m: Model, r: Real): Promise<void> {
  for (let ws = 0; ws < 2; ws++) {
    mExpire(m, ws);
    const what = `W${ws}`;
    // Balance: exact, and the listed allocations add up to the total (decisions.md section 1).
    const balRes = await api(r, 0, ws, 'GET', '/v1/balance', { query: { limit: '100' } });
    assert.equal(balRes.statusCode, 200, balRes.body);
    const bal = balRes.json().data;
    const total = mTotal(m, ws);
    const reserved = mReserved(m, ws);
    assert.deepEqual(
      { total: bal.totalMillicents, reserved: bal.reservedMillicents, spendable: bal.spendableMillicents },
      { total, reserved, spendable: total - reserved },
      `${what}: balance`,
    );
    assert.equal(bal.nextCursor, null);
    const listed = Object.fromEntries(bal.allocations.map((a: any) => [a.id, a.remainingMillicents]));
    const expectedAllocs = Object.fromEntries(m.allocs.filter((a) => a.ws === ws && a.remaining > 0).map((a) => [a.id, a.remaining]));
    assert.deepEqual(listed, expectedAllocs, `${what}: remaining credits of each live allocation`);
    assert.equal(
      bal.allocations.reduce((s: number, a: any) => s + a.remainingMillicents, 0),
      bal.totalMillicents,
      `${what}: totalMillicents is the sum of the listed allocations`,
    );
    await assertLedgerInvariants(r.ctx.deps, scopeOf(r, ws));

    // Jobs: status, money and error of each, exactly as the model says.
    const jobs = await pageAll(r, ws, '/v1/jobs');
    const mine = m.jobs.filter((j) => j.ws === ws);
    assert.deepEqual(jobs.map((j) => j.id).sort(), mine.map((j) => j.id).sort(), `${what}: the jobs of the workspace`);
    const byId = new Map(mine.map((j) => [j.id, j]));
    for (const j of jobs) {
      const mj = byId.get(j.id)!;
      assert.deepEqual(
        { status: j.status, cost: j.costMillicents, max: j.maximumCostMillicents, errorCode: j.errorCode },
        { status: mj.status, cost: mj.cost, max: mj.maxCost, errorCode: mj.errorCode },
        `${what}: job ${j.id} (${mj.b.operationId} ${directiveText(mj.spec.dirs)}, attempt ${mj.attempt}, recoveries ${mj.recoveries})`,
      );
      assert.ok(j.costMillicents <= j.maximumCostMillicents, `job ${j.id}: cost ${j.costMillicents} exceeds its maximum ${j.maximumCostMillicents}`);
      const before = r.observed.get(j.id);
      checkTransition(j.id, before, j, before !== undefined && mj.attempt > before.attempt);
      r.observed.set(j.id, { status: j.status, attempt: mj.attempt });
    }
    if (!jobs.some((j) => j.status === 'pending' || j.status === 'processing')) assert.equal(bal.reservedMillicents, 0, `${what}: nothing reserved without an active job`);

    // Ledger: each job's usage adds up to its cost; purchases and expirations as the model's.
    const txs = await pageAll(r, ws, '/v1/transactions');
    const usageByJob = new Map<string, number>();
    let purchases = 0;
    let expirations = 0;
    for (const t of txs) {
      if (t.type === 'usage') usageByJob.set(t.jobId, (usageByJob.get(t.jobId) ?? 0) - t.amountMillicents);
      else if (t.type === 'purchase') purchases += t.amountMillicents;
      else if (t.type === 'expiration') expirations -= t.amountMillicents;
      else assert.fail(`unknown transaction type ${t.type}`);
    }
    for (const j of jobs) assert.equal(usageByJob.get(j.id) ?? 0, j.costMillicents, `${what}: job ${j.id}'s usage transactions add up to its costMillicents`);
    assert.deepEqual([...usageByJob.keys()].filter((id) => !byId.has(id)), [], `${what}: usage of unknown jobs`);
    assert.equal(purchases, m.purchased[ws], `${what}: purchases`);
    assert.equal(expirations, m.expired[ws], `${what}: expired credits`);

    // Events: one per terminal transition, never more. On PostgreSQL the feed shows an event once
    // every transaction older than the reader's snapshot has ended (src/modules/events/feed-store.ts;
    // the tests of other files share the server), so here it may still lag: exactness is checked
    // at the end of the sequence (checkEventsExactly).
    await readEvents(r, ws);
    for (const mj of mine) {
      const seen = r.events.get(mj.id) ?? NO_EVENTS;
      for (const type of TERMINAL_EVENTS) assert.ok(seen[type] <= mj.events[type], `${what}: terminal events of job ${mj.id}: ${JSON.stringify(seen)}, at most ${JSON.stringify(mj.events)}`);
    }
  }

  // Budgets as GET /v1/usage reports them for the budgeted keys (spent this period, held, reset).
  for (const [keyIdx, ws] of [
    [1, 0],
    [1, 1],
    [2, 0],
  ] as const) {
    const res = await api(r, keyIdx, ws, 'GET', '/v1/usage');
    assert.equal(res.statusCode, 200, res.body);
    const expected = [];
    for (const o of [
      { scope: 'key', ceilings: m.keyBudgets[keyIdx]!, who: { keyIdx } },
      { scope: 'workspace', ceilings: m.wsBudgets[ws]!, who: { ws } },
    ]) {
      for (const p of PERIODS) {
        const limit = o.ceilings[p.field];
        if (limit === null) continue;
        const range = period(p.period, m.now);
        expected.push({
          scope: o.scope,
          period: p.period,
          limitMillicents: limit,
          spentMillicents: spent(m, o.who, range.start, range.end),
          reservedMillicents: held(m, o.who),
          resetsAt: new Date(range.end).toISOString(),
        });
      }
    }
    assert.deepEqual(res.json().data.budgets, expected, `budgets reported to K${keyIdx} in W${ws}`);
  }
}
