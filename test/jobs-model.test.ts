/**
 * Model-based (stateful) property test of the job lifecycle and the money around it (spec: States
 * and transitions, Rules 3-4, Budgets, Errors; shared decisions.md sections 1-3 and "Simulated
 * provider"; docs/decisions.md "Money" and "Runs and jobs").
 *
 * fast-check generates random command sequences over two workspaces and three keys of one owner
 * (K0 and K1 in both workspaces, K2 in W0 only; K1, K2 and W1 with random budgets; W0 runs 2 jobs
 * at once and lets 2 wait):
 *  - POST /v1/runs of queued operations (speech, music, video) and of the synchronous chat.generate,
 *    with simulated-provider directives ([sim:delay=0] always, [sim:steps=N], [sim:fail=CODE],
 *    [sim:failAt=K], [sim:cost=M]) and fresh or reused Idempotency-Keys (same or another body);
 *    bursts of identical queued runs sent at once (batched admission), with fresh or one shared key;
 *  - POST /v1/jobs/{id}/cancel and /retry (fresh or reused keys), also through the other workspace;
 *  - the worker: one job at a time (claim + execute), the test driver's full drain (parallel
 *    claims), a worker that claims a job, checkpoints K steps and dies (its lease expires once the
 *    clock passes JOB_LEASE_MS), repeated crashes (lease expiry and recovery each time, up to the
 *    WORKER_LOST failure), lease recovery, housekeeping;
 *  - operator grants with and without expiry, workspace budget changes;
 *  - the clock: seconds, past the lease, minutes, hours, to UTC midnight (and 1 ms before), to
 *    Monday, to the first of the month, to (and just past) the next credit expiry.
 *
 * The model is a small independent re-statement of the rules: allocations spent earliest expiry
 * first (only those live when the hold was admitted), expiry keeping what older open holds may
 * still need, holds, the usage ledger, budget periods (UTC day, ISO week, month), the simulated
 * provider's step costs (the remainder on the last step), checkpoints, leases and recoveries,
 * stored Idempotency-Keys (24 h). Each attempt's checkpointed cost is charged exactly once: when
 * the attempt finishes (completed, failed, WORKER_LOST) or the job is cancelled; a recovered job
 * carries its uncharged checkpointed steps to the next attempt (cancelling it then charges them:
 * committed provider consumption, state table), a retried job carries nothing uncharged.
 * After every command it checks, for both workspaces:
 *  - ledger invariants (test/support/ledger.ts), and balance total/reserved/spendable and every
 *    live allocation's remaining credits equal to the model's; listed allocations add up to total;
 *  - every job's status, costMillicents, maximumCostMillicents and errorCode equal to the model's;
 *    costMillicents ≤ maximumCostMillicents and equals the sum of the job's usage transactions;
 *    observed statuses only move along the state table (terminal completed/cancelled never move,
 *    failed moves only through a retry); reserved is 0 when no job is pending or processing;
 *  - purchases and expirations in the ledger equal the model's;
 *  - job.completed / job.failed / job.cancelled events: exactly one per terminal transition;
 *  - GET /v1/usage budgets (spent, reserved, resetsAt) of the budgeted keys equal the model's.
 * Every response is compared with the model's prediction: 202/200 bodies, 402
 * INSUFFICIENT_CREDITS, 429 BUDGET_EXCEEDED (which limit, Retry-After to the period's reset), 429
 * QUEUE_FULL, 409 IDEMPOTENCY_CONFLICT / JOB_NOT_RETRYABLE / JOB_NOT_CANCELLABLE, 404, and
 * idempotent replays return the identical stored body and charge nothing. The claims take the job
 * the model expects (queue order, running-jobs limit).
 *
 * Found and fixed (regression tests at the end of the file): a job that failed WORKER_LOST kept its
 * already charged checkpoint cost in its checkpoint, so after a retry it was charged again (when
 * the retried attempt settled, or when the retried job was cancelled while pending). Retry now
 * starts the attempt's cost at 0, and the WORKER_LOST finish records its checkpoint as charged.
 *
 * JOBS_MODEL_RUNS raises the number of generated sequences (the default keeps the file well under
 * 90 s per database); JOBS_MODEL_COMMANDS the maximum sequence length; JOBS_MODEL_SEED (with
 * JOBS_MODEL_PATH) replays a reported failure; JOBS_MODEL_STATS=1 prints what the sequences reached.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { claimJobs } from '../src/worker/job-claim.js';
import { recoverExpiredLeases } from '../src/worker/job-recovery.js';
import { executeJob } from '../src/modules/jobs/executor.js';
import { JobWorker } from '../src/worker/job-worker.js';
import { runMaintenanceOnce } from '../src/worker/maintenance.js';
import { SCOPES } from '../src/modules/auth/scopes.js';
import { OPERATION_IDS } from '../src/operations/ids.js';
import { admin, call, describeEachDatabase, type TestContext } from './support/harness.js';
import { assertLedgerInvariants } from './support/ledger.js';

const RUNS = Math.max(1, Number(process.env.JOBS_MODEL_RUNS) || 50);
const MAX_COMMANDS = Math.max(1, Number(process.env.JOBS_MODEL_COMMANDS) || 28);
const SEED = process.env.JOBS_MODEL_SEED ? Number(process.env.JOBS_MODEL_SEED) : undefined;
const PATH = process.env.JOBS_MODEL_PATH;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const IDEMPOTENCY_TTL = DAY;
const MAX_RECOVERIES = 3;

// ---------------------------------------------------------------------------------------------
// Operations, directives and prices (restated from the contracts, not imported).

type OpKind = 'speech' | 'music' | 'video' | 'chat';
type Status = 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled';
const TERMINAL_EVENTS = ['job.completed', 'job.failed', 'job.cancelled'] as const;
type TerminalEvent = (typeof TERMINAL_EVENTS)[number];

interface Dirs {
  steps?: number;
  fail?: string;
  failAt?: number;
  cost?: number;
}

interface Spec {
  op: OpKind;
  word: string;
  size: number;
  dirs: Dirs;
}

interface Built {
  operationId: string;
  input: Record<string, unknown>;
  sync: boolean;
  fullMax: number;
  steps: number;
}

function directiveText(d: Dirs): string {
  let s = '[sim:delay=0]';
  if (d.steps !== undefined) s += `[sim:steps=${d.steps}]`;
  if (d.fail !== undefined) s += `[sim:fail=${d.fail}]`;
  if (d.failAt !== undefined) s += `[sim:failAt=${d.failAt}]`;
  if (d.cost !== undefined) s += `[sim:cost=${d.cost}]`;
  return s;
}

function build(spec: Spec): Built {
  const text = `${spec.word} ${directiveText(spec.dirs)}`;
  switch (spec.op) {
    case 'speech':
      // 100 + 3 per character (code point); one step unless a directive says otherwise.
      return { operationId: 'speech.generate', input: { text }, sync: false, fullMax: 100 + 3 * [...text].length, steps: spec.dirs.steps ?? 1 };
    case 'music': {
      const d = 5 + (spec.size % 8);
      return { operationId: 'music.generate', input: { prompt: text, durationSeconds: d }, sync: false, fullMax: 500 * d, steps: spec.dirs.steps ?? 1 };
    }
    case 'video': {
      const d = 1 + (spec.size % 4);
      // One-second segments are its steps.
      return { operationId: 'video.generate', input: { prompt: text, durationSeconds: d }, sync: false, fullMax: 10_000 * d, steps: spec.dirs.steps ?? d };
    }
    case 'chat': {
      const maxTokens = 1 + (spec.size % 300);
      // decisions.md section 5: input tokens are bounded by the UTF-8 bytes of the messages plus a
      // fixed allowance per message (8, and 8 per request: docs/providers.md), never by a
      // characters-per-token guess. Built-in prices: 20 per run, 1 per input token, 3 per output token.
      const inputTokens = Buffer.byteLength(text, 'utf8') + 8 + 8;
      return { operationId: 'chat.generate', input: { messages: [{ role: 'user', content: text }], maxTokens }, sync: true, fullMax: 20 + inputTokens + 3 * maxTokens, steps: spec.dirs.steps ?? 1 };
    }
  }
}

/** Cost of step `s` of `n` when `total` is spread over the steps, the remainder on the last. */
function stepCost(total: number, n: number, s: number): number {
  const base = Math.floor(total / n);
  return s === n ? total - base * (n - 1) : base;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

// ---------------------------------------------------------------------------------------------
// Budget periods (UTC), restated.

type PeriodName = 'day' | 'week' | 'month';

function period(p: PeriodName, t: number): { start: number; end: number } {
  const dayStart = t - (t % DAY);
  if (p === 'day') return { start: dayStart, end: dayStart + DAY };
  if (p === 'week') {
    const monday = dayStart - ((new Date(dayStart).getUTCDay() + 6) % 7) * DAY;
    return { start: monday, end: monday + 7 * DAY };
  }
  const d = new Date(t);
  return { start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}

interface Ceilings {
  dailyMillicents: number | null;
  weeklyMillicents: number | null;
  monthlyMillicents: number | null;
}

const PERIODS: { field: keyof Ceilings; period: PeriodName; name: string }[] = [
  { field: 'dailyMillicents', period: 'day', name: 'DAY' },
  { field: 'weeklyMillicents', period: 'week', name: 'WEEK' },
  { field: 'monthlyMillicents', period: 'month', name: 'MONTH' },
];

// ---------------------------------------------------------------------------------------------
// The model.

interface MAlloc {
  id: string;
  ws: number;
  remaining: number;
  expiresAt: number | null;
}

interface MHold {
  jobId: string;
  ws: number;
  keyIdx: number;
  amount: number;
  createdAt: number;
}

interface MJob {
  id: string;
  ws: number;
  keyIdx: number;
  spec: Spec;
  b: Built;
  /** What the simulated provider's steps add up to over the whole job. */
  total: number;
  status: Status;
  attempt: number;
  stepsDone: number;
  /** Cost of steps checkpointed in the current attempt and not charged yet. */
  attemptCost: number;
  cost: number;
  maxCost: number;
  errorCode: string | null;
  runAfter: number;
  recoveries: number;
  leaseExpiresAt: number | null;
  events: Record<TerminalEvent, number>;
  /** When it last finished (a sequence number), so commands can pick recently failed jobs. */
  finishedSeq: number;
}

interface MUsage {
  ws: number;
  keyIdx: number;
  jobId: string;
  amount: number;
  at: number;
}

interface Stored {
  hash: string;
  expiresAt: number;
  statusCode: number;
  body: unknown;
}

interface Sent {
  name: string;
  keyIdx: number;
  ws: number;
  endpoint: 'run' | 'retry';
  spec?: Spec;
  jobId?: string;
}

interface Model {
  now: number;
  lease: number;
  allocs: MAlloc[];
  holds: Map<string, MHold>;
  jobs: MJob[];
  usage: MUsage[];
  purchased: number[];
  expired: number[];
  wsBudgets: Ceilings[];
  keyBudgets: Ceilings[];
  running: number[];
  waiting: number[];
  idem: Map<string, Stored>;
  sent: Sent[];
  counter: number;
}

/** Keys and the workspaces each includes: K0 both, K1 both (with budgets), K2 only W0 (with budgets). */
const KEY_WORKSPACES = [[0, 1], [0, 1], [0]] as const;
const CALLERS = [
  { key: 0, ws: 0 },
  { key: 0, ws: 1 },
  { key: 1, ws: 0 },
  { key: 1, ws: 1 },
  { key: 2, ws: 0 },
] as const;
type Caller = (typeof CALLERS)[number];

function keysOf(ws: number): number[] {
  return KEY_WORKSPACES.flatMap((wss, k) => ((wss as readonly number[]).includes(ws) ? [k] : []));
}

function byExpiry(a: MAlloc, b: MAlloc): number {
  const ea = a.expiresAt ?? Infinity;
  const eb = b.expiresAt ?? Infinity;
  return ea - eb || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function openHolds(m: Model, ws: number): MHold[] {
  return [...m.holds.values()].filter((h) => h.ws === ws);
}

/**
 * Credit expiry as docs/decisions.md "Expiry under open holds" states it: a due allocation keeps
 * only what the open holds admitted before its expiry may still draw from it (they draw earliest
 * expiry first); the rest expires now. Evaluated eagerly; the service does it lazily before every
 * read, admission and settlement, which must come to the same.
 */
function mExpire(m: Model, ws: number): void {
  const due = m.allocs.filter((a) => a.ws === ws && a.remaining > 0 && a.expiresAt !== null && a.expiresAt <= m.now).sort(byExpiry);
  if (due.length === 0) return;
  const holds = openHolds(m, ws).sort((a, b) => a.createdAt - b.createdAt);
  let eligible = 0;
  let next = 0;
  let kept = 0;
  for (const a of due) {
    while (next < holds.length && holds[next]!.createdAt < a.expiresAt!) eligible += holds[next++]!.amount;
    const keep = Math.min(a.remaining, Math.max(0, eligible - kept));
    kept += keep;
    if (keep > 0) note('expiry kept credits for older holds');
    m.expired[ws]! += a.remaining - keep;
    a.remaining = keep;
  }
}

function mTotal(m: Model, ws: number): number {
  return m.allocs.filter((a) => a.ws === ws).reduce((s, a) => s + a.remaining, 0);
}

function mReserved(m: Model, ws: number): number {
  return openHolds(m, ws).reduce((s, h) => s + h.amount, 0);
}

function spent(m: Model, who: { ws?: number; keyIdx?: number }, from: number, to: number): number {
  return m.usage
    .filter((u) => (who.ws === undefined || u.ws === who.ws) && (who.keyIdx === undefined || u.keyIdx === who.keyIdx) && u.at >= from && u.at < to)
    .reduce((s, u) => s + u.amount, 0);
}

function held(m: Model, who: { ws?: number; keyIdx?: number }): number {
  return [...m.holds.values()].filter((h) => (who.ws === undefined || h.ws === who.ws) && (who.keyIdx === undefined || h.keyIdx === who.keyIdx)).reduce((s, h) => s + h.amount, 0);
}

interface Refusal {
  status: number;
  code: string;
  limit?: string;
  retryAfter?: number;
}

/** Rule 3 and Budgets: spendable credits, then every ceiling of the key, then of the workspace. */
function admission(m: Model, ws: number, keyIdx: number, amount: number): Refusal | null {
  mExpire(m, ws);
  if (mTotal(m, ws) - mReserved(m, ws) < amount) return { status: 402, code: 'INSUFFICIENT_CREDITS' };
  const owners = [
    { scope: 'KEY', ceilings: m.keyBudgets[keyIdx]!, who: { keyIdx } },
    { scope: 'WORKSPACE', ceilings: m.wsBudgets[ws]!, who: { ws } },
  ];
  for (const o of owners) {
    for (const p of PERIODS) {
      const limit = o.ceilings[p.field];
      if (limit === null) continue;
      const r = period(p.period, m.now);
      if (spent(m, o.who, r.start, r.end) + held(m, o.who) + amount > limit) {
        return { status: 429, code: 'BUDGET_EXCEEDED', limit: `${o.scope}_BUDGET_${p.name}`, retryAfter: Math.max(1, Math.ceil((r.end - m.now) / 1000)) };
      }
    }
  }
  return null;
}

function pendingCount(m: Model, ws: number): number {
  return m.jobs.filter((j) => j.ws === ws && j.status === 'pending').length;
}

function hold(m: Model, job: MJob, keyIdx: number, amount: number): void {
  m.holds.set(job.id, { jobId: job.id, ws: job.ws, keyIdx, amount, createdAt: m.now });
}

/** Settlement: the consumed cost up to the open hold, allocations earliest expiry first, the rest released. */
function settle(m: Model, job: MJob, consumed: number): number {
  const h = m.holds.get(job.id);
  if (!h) return 0;
  mExpire(m, job.ws);
  const charge = Math.min(Math.max(0, consumed), h.amount);
  let left = charge;
  for (const a of m.allocs.filter((x) => x.ws === job.ws).sort(byExpiry)) {
    if (left === 0) break;
    if (a.remaining <= 0 || (a.expiresAt !== null && a.expiresAt <= h.createdAt)) continue;
    const part = Math.min(a.remaining, left);
    a.remaining -= part;
    left -= part;
  }
  assert.equal(left, 0, `model: settlement of job ${job.id} would find ${left} millicents fewer than its hold promised`);
  if (charge > 0) m.usage.push({ ws: job.ws, keyIdx: job.keyIdx, jobId: job.id, amount: charge, at: m.now });
  job.cost += charge;
  m.holds.delete(job.id);
  mExpire(m, job.ws);
  return charge;
}

function finish(m: Model, job: MJob, status: 'completed' | 'failed' | 'cancelled', errorCode: string | null): void {
  note(`${job.status} -> ${status}${errorCode === 'WORKER_LOST' ? ' (WORKER_LOST)' : ''}${job.attempt > 1 ? ' after retry' : ''}`);
  settle(m, job, job.attemptCost);
  job.attemptCost = 0;
  job.status = status;
  job.errorCode = errorCode;
  job.leaseExpiresAt = null;
  job.events[`job.${status}`]++;
  job.finishedSeq = ++m.counter;
}

/**
 * One attempt on the simulated provider from the job's last checkpoint. `dieAfter`: the worker
 * dies once `dieAfter` steps of this attempt have slept (at once for 0); whatever the attempt
 * reaches after that (the next step, a failure, but not a completion already under way) is lost,
 * and the job stays processing under its lease with the steps it checkpointed.
 */
function attempt(m: Model, job: MJob, dieAfter = Infinity): 'completed' | 'failed' | 'lost' {
  const d = job.spec.dirs;
  const n = job.b.steps;
  let slept = 0;
  const dead = () => slept >= dieAfter;
  for (let s = job.stepsDone + 1; s <= n; s++) {
    if (d.failAt !== undefined && job.attempt === 1 && s === d.failAt + 1) {
      if (dead()) return 'lost';
      finish(m, job, 'failed', d.fail ?? 'SIMULATED_FAILURE');
      return 'failed';
    }
    if (dead()) return 'lost';
    slept++;
    job.attemptCost += stepCost(job.total, n, s);
    job.stepsDone = s;
  }
  if (d.fail !== undefined && d.failAt === undefined) {
    if (dead()) {
      // The last step is recorded only with the finish (executor.ts), which never came.
      if (slept > 0) {
        job.attemptCost -= stepCost(job.total, n, n);
        job.stepsDone = n - 1;
      }
      return 'lost';
    }
    finish(m, job, 'failed', d.fail);
    return 'failed';
  }
  finish(m, job, 'completed', null);
  return 'completed';
}

/** The job the next claim takes: oldest in the queue (entry time, then id) of a workspace with a free running slot. */
function nextClaim(m: Model): MJob | undefined {
  const running = [0, 1].map((ws) => m.jobs.filter((j) => j.ws === ws && j.status === 'processing').length);
  return m.jobs
    .filter((j) => j.status === 'pending' && running[j.ws]! < m.running[j.ws]!)
    .sort((a, b) => a.runAfter - b.runAfter || (a.id < b.id ? -1 : 1))[0];
}

function claim(m: Model, job: MJob): void {
  job.status = 'processing';
  job.leaseExpiresAt = m.now + m.lease;
}

/** Lease recovery: back to pending from the checkpoint, or failed WORKER_LOST after MAX_RECOVERIES. */
function recover(m: Model): number {
  const expired = m.jobs.filter((j) => j.status === 'processing' && j.leaseExpiresAt !== null && j.leaseExpiresAt < m.now);
  for (const job of expired) {
    if (job.recoveries >= MAX_RECOVERIES) {
      finish(m, job, 'failed', 'WORKER_LOST');
    } else {
      job.status = 'pending';
      job.leaseExpiresAt = null;
      job.runAfter = m.now;
      job.recoveries++;
      note(`recovered ${job.recoveries}`);
    }
  }
  return expired.length;
}

function newJob(m: Model, id: string, ws: number, keyIdx: number, spec: Spec, b: Built): MJob {
  const job: MJob = {
    id,
    ws,
    keyIdx,
    spec,
    b,
    total: Math.min(spec.dirs.cost ?? b.fullMax, b.fullMax),
    status: b.sync ? 'processing' : 'pending',
    attempt: 1,
    stepsDone: 0,
    attemptCost: 0,
    cost: 0,
    maxCost: b.fullMax,
    errorCode: null,
    runAfter: m.now,
    recoveries: 0,
    leaseExpiresAt: b.sync ? m.now + m.lease : null,
    events: { 'job.completed': 0, 'job.failed': 0, 'job.cancelled': 0 },
    finishedSeq: 0,
  };
  m.jobs.push(job);
  return job;
}

function scopeKey(keyIdx: number, ws: number, name: string): string {
  return `${keyIdx}/${ws}/${name}`;
}

/** A stored Idempotency-Key still alive for this scope, if any (decisions.md section 1: kept 24 h). */
function storedKey(m: Model, keyIdx: number, ws: number, name: string): Stored | undefined {
  const s = m.idem.get(scopeKey(keyIdx, ws, name));
  if (s && m.now >= s.expiresAt) note('reused an Idempotency-Key after its 24 h');
  return s && m.now < s.expiresAt ? s : undefined;
}

/** What the generated sequences reached (printed with JOBS_MODEL_STATS=1, to tune the generators). */
const stats = new Map<string, number>();
function note(what: string): void {
  stats.set(what, (stats.get(what) ?? 0) + 1);
}

// ---------------------------------------------------------------------------------------------
// The system under test.

interface Real {
  ctx: TestContext;
  userId: string;
  wsIds: string[];
  keyIds: string[];
  secrets: string[];
  eventCursors: (string | undefined)[];
  events: Map<string, Record<TerminalEvent, number>>;
  observed: Map<string, { status: Status; attempt: number }>;
}

async function api(
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

async function adminOk(ctx: TestContext, url: string, body: unknown): Promise<any> {
  const res = await admin(ctx, url, body);
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  return res.json().data;
}

function expectRefusal(res: LightMyRequestResponse, want: Refusal, what: string): void {
  note(`refused ${want.code}${want.limit ? ` ${want.limit}` : ''}`);
  assert.equal(res.statusCode, want.status, `${what}: expected ${want.status} ${want.code}, got ${res.statusCode} ${res.body}`);
  const body = res.json();
  assert.equal(body.code, want.code, `${what}: ${res.body}`);
  if (want.limit !== undefined) assert.equal(body.details?.limit, want.limit, `${what}: the refusing budget (${res.body})`);
  if (want.retryAfter !== undefined) assert.equal(res.headers['retry-after'], String(want.retryAfter), `${what}: Retry-After to the period's reset`);
}

async function pageAll(r: Real, ws: number, url: string): Promise<any[]> {
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
async function checkEventsExactly(m: Model, r: Real): Promise<void> {
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

async function checkAll(m: Model, r: Real): Promise<void> {
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
    await assertLedgerInvariants(r.ctx.deps, r.wsIds[ws]!);

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

// ---------------------------------------------------------------------------------------------
// Commands.

type IdemChoice = { kind: 'fresh' } | { kind: 'reuse'; pick: number; same: boolean };

function idemText(i: IdemChoice): string {
  return i.kind === 'fresh' ? 'fresh key' : `reuse of the ${ordinal(i.pick % 4)} last key (${i.same ? 'same' : 'other'} body)`;
}

function ordinal(n: number): string {
  return ['', '2nd ', '3rd ', '4th '][n]!;
}

/** A reused Idempotency-Key: one of the last four sent (so replays and conflicts happen often). */
function reusedKey(m: Model, pick: number): Sent {
  return m.sent[m.sent.length - 1 - (pick % Math.min(4, m.sent.length))]!;
}

function specText(s: Spec): string {
  return `${s.op}(${s.word}, size ${s.size}) ${directiveText(s.dirs)}`;
}

type Cmd = fc.AsyncCommand<Model, Real>;

/** A new run's admission: waiting-jobs capacity (queued operations only), then credits and budgets. */
function decideRun(m: Model, ws: number, keyIdx: number, b: Built): Refusal | null {
  if (!b.sync && pendingCount(m, ws) >= m.waiting[ws]!) return { status: 429, code: 'QUEUE_FULL', limit: 'WAITING_JOBS', retryAfter: 5 };
  return admission(m, ws, keyIdx, b.fullMax);
}

function refusalOf(res: LightMyRequestResponse): string {
  const body = res.json();
  return `${res.statusCode} ${body.code} ${body.details?.limit ?? ''} ${res.headers['retry-after'] ?? ''}`;
}

function refusalText(r: Refusal): string {
  return `${r.status} ${r.code} ${r.limit ?? ''} ${r.retryAfter ?? ''}`;
}

/**
 * Several identical queued runs sent at once by one caller (batched admission on PostgreSQL, group
 * commit on SQLite): with fresh keys, as many are admitted as one-by-one admission would admit,
 * whatever their order; with one shared key, one is admitted and the others replay its response
 * (or all are refused alike).
 */
class BurstCmd implements Cmd {
  constructor(
    readonly caller: Caller,
    readonly spec: Spec,
    readonly n: number,
    readonly sameKey: boolean,
  ) {}
  check(): boolean {
    return true;
  }
  toString(): string {
    return `Burst(${this.n} concurrent runs by K${this.caller.key}@W${this.caller.ws} of ${specText(this.spec)}, ${this.sameKey ? 'one shared key' : 'fresh keys'})`;
  }
  async run(m: Model, r: Real): Promise<void> {
    const { key: keyIdx, ws } = this.caller as { key: number; ws: number };
    const b = build(this.spec);
    const body = { operationId: b.operationId, input: b.input };
    const hash = canonical({ endpoint: 'run', body });
    const names = Array.from({ length: this.n }, (_, i) => (this.sameKey && i > 0 ? `idem-${m.counter - 1}` : `idem-${m.counter++}`));
    for (const name of new Set(names)) m.sent.push({ name, keyIdx, ws, endpoint: 'run', spec: this.spec });
    const responses = await Promise.all(names.map((name) => api(r, keyIdx, ws, 'POST', '/v1/runs', { idem: name, body })));
    const what = `burst of ${this.n} ${b.operationId} runs by K${keyIdx} in W${ws}`;
    const admitted = responses.map((res, i) => ({ res, name: names[i]! })).filter(({ res }) => res.statusCode === 202 && res.headers['idempotent-replayed'] !== 'true');
    const refused: string[] = [];
    let taken = 0;
    for (let i = 0; i < (this.sameKey ? 1 : this.n); i++) {
      const refusal = decideRun(m, ws, keyIdx, b);
      if (refusal) {
        note(`burst refused ${refusal.code}`);
        refused.push(refusalText(refusal));
        continue;
      }
      const next = admitted[taken++];
      assert.ok(next, `${what}: the model admits more runs than the service (${responses.map((x) => x.statusCode).join(', ')})`);
      const data = next.res.json().data;
      assert.deepEqual(data, { kind: 'job', jobId: data.jobId, status: 'pending', maximumCostMillicents: b.fullMax }, what);
      hold(m, newJob(m, data.jobId, ws, keyIdx, this.spec, b), keyIdx, b.fullMax);
      m.idem.set(scopeKey(keyIdx, ws, next.name), { hash, expiresAt: m.now + IDEMPOTENCY_TTL, statusCode: 202, body: next.res.json() });
    }
    assert.equal(admitted.length, taken, `${what}: runs admitted`);
    if (this.sameKey) {
      const all = refused.length > 0 ? responses.map(() => refused[0]!) : [];
      assert.deepEqual(responses.filter((x) => x.statusCode !== 202).map(refusalOf), all, `${what}: refusals`);
      // The others replay the admitted run's response, identically.
      for (const res of responses) if (res !== admitted[0]?.res && res.statusCode === 202) {
        assert.deepEqual(res.json(), admitted[0]!.res.json(), `${what}: a concurrent duplicate replays the identical body`);
        assert.equal(res.headers['idempotent-replayed'], 'true');
      }
    } else {
      assert.deepEqual(responses.filter((x) => x.statusCode !== 202).map(refusalOf).sort(), refused.sort(), `${what}: refusals`);
    }
    await checkAll(m, r);
  }
}

/** POST /v1/runs (Rules 3-4, decisions.md section 1): admission, idempotency, synchronous results. */
class RunCmd implements Cmd {
  constructor(
    readonly caller: Caller,
    readonly spec: Spec,
    readonly idem: IdemChoice,
  ) {}
  check(): boolean {
    return true;
  }
  toString(): string {
    return `Run(K${this.caller.key}@W${this.caller.ws}, ${specText(this.spec)}, ${idemText(this.idem)})`;
  }
  async run(m: Model, r: Real): Promise<void> {
    let { key: keyIdx, ws } = this.caller as { key: number; ws: number };
    let spec = this.spec;
    let name: string;
    if (this.idem.kind === 'reuse' && m.sent.length > 0) {
      const s = reusedKey(m, this.idem.pick);
      ({ keyIdx, ws, name } = s);
      if (this.idem.same && s.endpoint === 'run') spec = s.spec!;
    } else {
      name = `idem-${m.counter++}`;
      m.sent.push({ name, keyIdx, ws, endpoint: 'run', spec });
    }
    const b = build(spec);
    const body = { operationId: b.operationId, input: b.input };
    const res = await api(r, keyIdx, ws, 'POST', '/v1/runs', { idem: name, body });
    const what = `run ${b.operationId} by K${keyIdx} in W${ws} with ${name}`;

    const stored = storedKey(m, keyIdx, ws, name);
    const hash = canonical({ endpoint: 'run', body });
    if (stored) {
      if (stored.hash !== hash) return expectRefusal(res, { status: 409, code: 'IDEMPOTENCY_CONFLICT' }, what);
      assert.equal(res.statusCode, stored.statusCode, `${what}: replay status`);
      assert.deepEqual(res.json(), stored.body, `${what}: a replay returns the identical stored body`);
      assert.equal(res.headers['idempotent-replayed'], 'true');
      note('replayed run');
      return checkAll(m, r);
    }
    const refusal = decideRun(m, ws, keyIdx, b);
    if (refusal) {
      expectRefusal(res, refusal, what);
      return checkAll(m, r);
    }
    assert.equal(res.statusCode, b.sync ? 200 : 202, `${what}: ${res.body}`);
    const data = res.json().data;
    const job = newJob(m, data.jobId, ws, keyIdx, spec, b);
    hold(m, job, keyIdx, b.fullMax);
    if (b.sync) {
      attempt(m, job);
      assert.deepEqual(
        { kind: data.kind, status: data.status, errorCode: data.errorCode, costMillicents: data.costMillicents },
        { kind: 'result', status: job.status, errorCode: job.errorCode, costMillicents: job.cost },
        `${what}: synchronous result`,
      );
    } else {
      assert.deepEqual(data, { kind: 'job', jobId: job.id, status: 'pending', maximumCostMillicents: b.fullMax }, `${what}: queued`);
    }
    m.idem.set(scopeKey(keyIdx, ws, name), { hash, expiresAt: m.now + IDEMPOTENCY_TTL, statusCode: res.statusCode, body: res.json() });
    await checkAll(m, r);
  }
}

type JobFilter = 'any' | 'failed' | 'active';

interface JobPick {
  filter: JobFilter;
  n: number;
}

function pickText(p: JobPick): string {
  return p.filter === 'any' ? `job #${p.n}` : p.filter === 'failed' ? `the ${ordinal(p.n % 3)}last failed job` : `active job #${p.n}`;
}

/** Picks the job a command names (among the jobs its filter selects, or all if none), the acting key and the workspace header. */
function pickJob(m: Model, p: JobPick, keyPick: number, wrongWs: boolean): { job: MJob; keyIdx: number; ws: number } {
  let selected = m.jobs.filter((j) => p.filter === 'any' || (p.filter === 'failed' ? j.status === 'failed' : j.status === 'pending' || j.status === 'processing'));
  // Failed jobs: one of the three that failed last.
  if (p.filter === 'failed') selected = selected.sort((a, b) => b.finishedSeq - a.finishedSeq).slice(0, 3);
  const from = selected.length > 0 ? selected : m.jobs;
  const job = from[p.n % from.length]!;
  if (wrongWs) return { job, keyIdx: 0, ws: 1 - job.ws };
  const keys = keysOf(job.ws);
  return { job, keyIdx: keys[keyPick % keys.length]!, ws: job.ws };
}

/** POST /v1/jobs/{id}/cancel (state table; decisions.md section 1). */
class CancelCmd implements Cmd {
  constructor(
    readonly pick: JobPick,
    readonly keyPick: number,
    readonly wrongWs: boolean,
  ) {}
  check(m: Readonly<Model>): boolean {
    return m.jobs.length > 0;
  }
  toString(): string {
    return `Cancel(${pickText(this.pick)}, key #${this.keyPick}${this.wrongWs ? ', through the other workspace' : ''})`;
  }
  async run(m: Model, r: Real): Promise<void> {
    const { job, keyIdx, ws } = pickJob(m, this.pick, this.keyPick, this.wrongWs);
    const res = await api(r, keyIdx, ws, 'POST', `/v1/jobs/${job.id}/cancel`);
    const what = `cancel of ${job.status} job ${job.id} in W${job.ws} through W${ws}`;
    if (ws !== job.ws) expectRefusal(res, { status: 404, code: 'NOT_FOUND' }, what);
    else if (job.status === 'completed' || job.status === 'failed') expectRefusal(res, { status: 409, code: 'JOB_NOT_CANCELLABLE' }, what);
    else {
      assert.equal(res.statusCode, 200, `${what}: ${res.body}`);
      if (job.status !== 'cancelled') {
        mExpire(m, job.ws);
        finish(m, job, 'cancelled', null);
      }
      const data = res.json().data;
      assert.deepEqual({ status: data.status, cost: data.costMillicents }, { status: 'cancelled', cost: job.cost }, `${what}: the snapshot after the change`);
    }
    await checkAll(m, r);
  }
}

/** POST /v1/jobs/{id}/retry (state table; docs/decisions.md "Retry"). */
class RetryCmd implements Cmd {
  constructor(
    readonly pick: JobPick,
    readonly keyPick: number,
    readonly wrongWs: boolean,
    readonly idem: IdemChoice,
  ) {}
  check(m: Readonly<Model>): boolean {
    return m.jobs.length > 0;
  }
  toString(): string {
    return `Retry(${pickText(this.pick)}, key #${this.keyPick}${this.wrongWs ? ', through the other workspace' : ''}, ${idemText(this.idem)})`;
  }
  async run(m: Model, r: Real): Promise<void> {
    let { job, keyIdx, ws } = pickJob(m, this.pick, this.keyPick, this.wrongWs);
    let name: string;
    if (this.idem.kind === 'reuse' && m.sent.length > 0) {
      const s = reusedKey(m, this.idem.pick);
      ({ keyIdx, ws, name } = s);
      if (this.idem.same && s.endpoint === 'retry') job = m.jobs.find((j) => j.id === s.jobId)!;
    } else {
      name = `idem-${m.counter++}`;
      m.sent.push({ name, keyIdx, ws, endpoint: 'retry', jobId: job.id });
    }
    const res = await api(r, keyIdx, ws, 'POST', `/v1/jobs/${job.id}/retry`, { idem: name });
    const what = `retry of ${job.status} job ${job.id} (${directiveText(job.spec.dirs)}) by K${keyIdx} through W${ws} with ${name}`;
    if (ws !== job.ws) {
      expectRefusal(res, { status: 404, code: 'NOT_FOUND' }, what);
      return checkAll(m, r);
    }
    const stored = storedKey(m, keyIdx, ws, name);
    const hash = canonical({ endpoint: 'retry', jobId: job.id });
    if (stored) {
      if (stored.hash !== hash) expectRefusal(res, { status: 409, code: 'IDEMPOTENCY_CONFLICT' }, what);
      else {
        assert.equal(res.statusCode, stored.statusCode, `${what}: replay status`);
        assert.deepEqual(res.json(), stored.body, `${what}: a replay returns the identical stored body`);
        assert.equal(res.headers['idempotent-replayed'], 'true');
        note('replayed retry');
      }
      return checkAll(m, r);
    }
    if (job.status !== 'failed' || job.b.sync) {
      expectRefusal(res, { status: 409, code: 'JOB_NOT_RETRYABLE' }, what);
      return checkAll(m, r);
    }
    const stepsLeft = Math.max(1, job.b.steps - job.stepsDone);
    const maximum = Math.ceil((job.b.fullMax * stepsLeft) / job.b.steps);
    const refusal = pendingCount(m, ws) >= m.waiting[ws]! ? { status: 429, code: 'QUEUE_FULL', limit: 'WAITING_JOBS', retryAfter: 5 } : admission(m, ws, keyIdx, maximum);
    if (refusal) {
      expectRefusal(res, refusal, what);
      return checkAll(m, r);
    }
    assert.equal(res.statusCode, 202, `${what}: ${res.body}`);
    assert.deepEqual(res.json().data, { kind: 'job', jobId: job.id, status: 'pending', maximumCostMillicents: maximum }, what);
    hold(m, job, keyIdx, maximum);
    note(`retried (recoveries ${job.recoveries}, steps ${job.stepsDone}/${job.b.steps})`);
    job.status = 'pending';
    job.attempt++;
    job.errorCode = null;
    job.maxCost = job.cost + maximum;
    job.runAfter = m.now;
    job.recoveries = 0;
    job.keyIdx = keyIdx;
    m.idem.set(scopeKey(keyIdx, ws, name), { hash, expiresAt: m.now + IDEMPOTENCY_TTL, statusCode: 202, body: res.json() });
    await checkAll(m, r);
  }
}

/** A worker that claims one job at a time and runs it to its end. */
class WorkCmd implements Cmd {
  constructor(readonly n: number) {}
  check(): boolean {
    return true;
  }
  toString(): string {
    return `Work(${this.n} job${this.n === 1 ? '' : 's'}, one at a time)`;
  }
  async run(m: Model, r: Real): Promise<void> {
    for (let i = 0; i < this.n; i++) {
      const want = nextClaim(m);
      const claimed = await claimJobs(r.ctx.deps, 'model-worker', 1);
      assert.deepEqual(claimed.map((j) => j.id), want ? [want.id] : [], 'the claim takes the oldest job of the queue with a free running slot');
      if (!want) break;
      claim(m, want);
      await executeJob(r.ctx.deps, claimed[0]!, new AbortController().signal);
      attempt(m, want);
    }
    await checkAll(m, r);
  }
}

/** The test driver's drain: lease recovery, then parallel claims until nothing is claimable. */
class DrainCmd implements Cmd {
  check(): boolean {
    return true;
  }
  toString(): string {
    return 'Drain()';
  }
  async run(m: Model, r: Real): Promise<void> {
    const ran = await new JobWorker(r.ctx.deps).runOnce();
    recover(m);
    let expected = 0;
    for (let job = nextClaim(m); job; job = nextClaim(m)) {
      claim(m, job);
      attempt(m, job);
      expected++;
    }
    assert.equal(ran, expected, 'jobs run by the drain');
    await checkAll(m, r);
  }
}

/**
 * The signal of a worker that dies after `after` steps: aborted once the attempt's `after`-th
 * step has slept (the simulated provider sleeps once per step with this signal and removes its
 * listener when the sleep ends), or from the start for 0.
 */
function dyingSignal(after: number): AbortSignal {
  const controller = new AbortController();
  if (after === 0) controller.abort();
  let slept = 0;
  return new Proxy(controller.signal, {
    get(target, prop) {
      if (prop === 'removeEventListener') {
        return (...args: Parameters<AbortSignal['removeEventListener']>) => {
          target.removeEventListener(...args);
          if (++slept >= after) controller.abort();
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * A worker claims one job, checkpoints `steps` steps and dies; its lease stays until it expires.
 * With `crashes`, that happens `crashes` times in a row, each time followed by the clock passing
 * the lease and lease recovery (a flaky worker; the fourth loss of one job fails it WORKER_LOST).
 */
class DieCmd implements Cmd {
  constructor(
    readonly steps: number,
    readonly crashes: number,
  ) {}
  check(): boolean {
    return true;
  }
  toString(): string {
    const what = `${this.steps} step${this.steps === 1 ? '' : 's'}`;
    return this.crashes === 0 ? `WorkerDiesAfter(${what})` : `WorkerCrashes(after ${what}, ${this.crashes} time${this.crashes === 1 ? '' : 's'}, each followed by lease expiry and recovery)`;
  }
  async run(m: Model, r: Real): Promise<void> {
    for (let i = 0; i < Math.max(1, this.crashes); i++) {
      const want = nextClaim(m);
      const claimed = await claimJobs(r.ctx.deps, 'dying-worker', 1);
      assert.deepEqual(claimed.map((j) => j.id), want ? [want.id] : [], 'the claim takes the oldest job of the queue with a free running slot');
      if (want) {
        claim(m, want);
        const outcome = await executeJob(r.ctx.deps, claimed[0]!, dyingSignal(this.steps));
        assert.equal(outcome.status, attempt(m, want, this.steps), 'outcome of the dying attempt');
      }
      if (this.crashes === 0) break;
      m.now += m.lease + 1;
      r.ctx.clock.set(m.now);
      assert.equal(await recoverExpiredLeases(r.ctx.deps), recover(m), 'jobs recovered');
    }
    await checkAll(m, r);
  }
}

class RecoverCmd implements Cmd {
  check(): boolean {
    return true;
  }
  toString(): string {
    return 'RecoverExpiredLeases()';
  }
  async run(m: Model, r: Real): Promise<void> {
    assert.equal(await recoverExpiredLeases(r.ctx.deps), recover(m), 'jobs recovered');
    await checkAll(m, r);
  }
}

class MaintenanceCmd implements Cmd {
  check(): boolean {
    return true;
  }
  toString(): string {
    return 'Maintenance()';
  }
  async run(m: Model, r: Real): Promise<void> {
    await runMaintenanceOnce(r.ctx.deps);
    await checkAll(m, r);
  }
}

type Expiry = 'never' | 'min10' | 'hour' | 'midnight' | 'day' | 'days3';

function expiryAt(now: number, e: Expiry): number | null {
  switch (e) {
    case 'never':
      return null;
    case 'min10':
      return now + 10 * MINUTE;
    case 'hour':
      return now + HOUR;
    case 'midnight':
      return period('day', now).end;
    case 'day':
      return now + DAY;
    case 'days3':
      return now + 3 * DAY;
  }
}

async function grant(m: Model, r: Real, ws: number, amount: number, e: Expiry): Promise<void> {
  const expiresAt = expiryAt(m.now, e);
  const data = await adminOk(r.ctx, `/admin/v1/workspaces/${r.wsIds[ws]}/credits`, {
    amountMillicents: amount,
    ...(expiresAt !== null ? { expiresAt: new Date(expiresAt).toISOString() } : {}),
  });
  mExpire(m, ws);
  m.allocs.push({ id: data.allocation.id, ws, remaining: amount, expiresAt });
  m.purchased[ws]! += amount;
}

class GrantCmd implements Cmd {
  constructor(
    readonly ws: number,
    readonly amount: number,
    readonly expiry: Expiry,
  ) {}
  check(): boolean {
    return true;
  }
  toString(): string {
    return `Grant(W${this.ws}, ${this.amount}, expires ${this.expiry})`;
  }
  async run(m: Model, r: Real): Promise<void> {
    await grant(m, r, this.ws, this.amount, this.expiry);
    await checkAll(m, r);
  }
}

class BudgetCmd implements Cmd {
  constructor(
    readonly ws: number,
    readonly budgets: Partial<Ceilings>,
  ) {}
  check(): boolean {
    return true;
  }
  toString(): string {
    return `WorkspaceBudgets(W${this.ws}, ${JSON.stringify(this.budgets)})`;
  }
  async run(m: Model, r: Real): Promise<void> {
    await adminOk(r.ctx, `/admin/v1/workspaces/${r.wsIds[this.ws]}/settings`, { budgets: this.budgets });
    m.wsBudgets[this.ws] = { ...m.wsBudgets[this.ws]!, ...this.budgets };
    await checkAll(m, r);
  }
}

type Advance = 'second' | 'pastLease' | 'min10' | 'hour' | 'midnight' | 'beforeMidnight' | 'monday' | 'monthStart' | 'expiry' | 'pastExpiry';

function advanceTarget(m: Model, a: Advance): number {
  const now = m.now;
  const nextExpiry = m.allocs
    .map((x) => x.expiresAt)
    .filter((t): t is number => t !== null && t > now)
    .sort((x, y) => x - y)[0];
  switch (a) {
    case 'second':
      return now + SECOND;
    case 'pastLease':
      return now + m.lease + 1;
    case 'min10':
      return now + 10 * MINUTE;
    case 'hour':
      return now + HOUR;
    case 'midnight':
      return period('day', now).end;
    case 'beforeMidnight':
      return Math.max(now + 1, period('day', now).end - 1);
    case 'monday':
      return period('week', now).end;
    case 'monthStart':
      return period('month', now).end;
    case 'expiry':
      return nextExpiry ?? now + MINUTE;
    case 'pastExpiry':
      return (nextExpiry ?? now + MINUTE) + 1;
  }
}

class AdvanceCmd implements Cmd {
  constructor(readonly to: Advance) {}
  check(): boolean {
    return true;
  }
  toString(): string {
    return `Clock(${this.to})`;
  }
  async run(m: Model, r: Real): Promise<void> {
    const target = advanceTarget(m, this.to);
    r.ctx.clock.set(target);
    m.now = target;
    await checkAll(m, r);
  }
}

// ---------------------------------------------------------------------------------------------
// Arbitraries.

const dirsArb: fc.Arbitrary<Dirs> = fc
  .record({
    steps: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined, freq: 3 }),
    fail: fc.option(fc.constantFrom('BOOM', 'PROVIDER_DOWN'), { nil: undefined, freq: 4 }),
    failAt: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined, freq: 2 }),
    cost: fc.option(fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 70_000 })), { nil: undefined, freq: 2 }),
  })
  .map((d) => Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined)) as Dirs);

// A word of multi-byte characters too: chat's maximum counts UTF-8 bytes, speech's price characters.
const wordArb = fc.constantFrom('hi', 'tune', 'a calm sea', 'robots dancing', 'x', 'héllo 😀');
const specArb = (ops: OpKind[]): fc.Arbitrary<Spec> => fc.record({ op: fc.constantFrom(...ops), word: wordArb, size: fc.nat(1000), dirs: dirsArb });
const callerArb = fc.constantFrom(...CALLERS);
/** Mostly the jobs a command is about (failed ones for retries, active ones for cancels), sometimes any. */
const pickArb = (filter: JobFilter): fc.Arbitrary<JobPick> => fc.record({ filter: fc.constantFrom<JobFilter>(filter, filter, filter, 'any'), n: fc.nat(40) });
const idemArb: fc.Arbitrary<IdemChoice> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'fresh' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reuse' as const), pick: fc.nat(40), same: fc.boolean() }) },
  // The key just sent, with the same request: a client retrying after a network failure.
  { weight: 1, arbitrary: fc.constant({ kind: 'reuse' as const, pick: 0, same: true }) },
);
const amountArb = fc.constantFrom(200, 1_000, 5_000, 20_000, 50_000, 120_000);
const expiryArb = fc.constantFrom<Expiry>('never', 'never', 'min10', 'hour', 'midnight', 'day', 'days3');
const ceilingArb = fc.constantFrom<number | null>(null, null, 3_000, 15_000, 60_000, 150_000);
const ceilingsArb: fc.Arbitrary<Ceilings> = fc.record({ dailyMillicents: ceilingArb, weeklyMillicents: ceilingArb, monthlyMillicents: ceilingArb });

const commandArbs: fc.Arbitrary<Cmd>[] = [
  fc.tuple(callerArb, specArb(['speech', 'music', 'video']), idemArb).map(([c, s, i]) => new RunCmd(c, s, i)),
  fc.tuple(callerArb, specArb(['speech', 'music', 'video']), idemArb).map(([c, s, i]) => new RunCmd(c, s, i)),
  fc.tuple(callerArb, specArb(['chat']), idemArb).map(([c, s, i]) => new RunCmd(c, s, i)),
  fc.tuple(callerArb, specArb(['speech', 'music', 'video']), fc.integer({ min: 2, max: 5 }), fc.boolean()).map(([c, s, n, k]) => new BurstCmd(c, s, n, k)),
  fc.tuple(pickArb('active'), fc.nat(3), fc.nat(8)).map(([p, k, w]) => new CancelCmd(p, k, w === 0)),
  fc.tuple(pickArb('failed'), fc.nat(3), fc.nat(8), idemArb).map(([p, k, w, i]) => new RetryCmd(p, k, w === 0, i)),
  fc.tuple(pickArb('failed'), fc.nat(3), idemArb).map(([p, k, i]) => new RetryCmd(p, k, false, i)),
  fc.integer({ min: 1, max: 3 }).map((n) => new WorkCmd(n)),
  fc.constant(new DrainCmd()),
  fc.tuple(fc.integer({ min: 0, max: 4 }), fc.constant(0)).map(([k, c]) => new DieCmd(k, c)),
  fc.tuple(fc.integer({ min: 0, max: 3 }), fc.constantFrom(1, 1, 2, 4)).map(([k, c]) => new DieCmd(k, c)),
  fc.tuple(fc.integer({ min: 0, max: 3 }), fc.constantFrom(1, 2, 4, 4)).map(([k, c]) => new DieCmd(k, c)),
  fc.constant(new RecoverCmd()),
  fc.constant(new MaintenanceCmd()),
  fc.tuple(fc.nat(1), amountArb, expiryArb).map(([w, a, e]) => new GrantCmd(w, a, e)),
  fc.tuple(fc.nat(1), fc.record({ dailyMillicents: ceilingArb, weeklyMillicents: ceilingArb, monthlyMillicents: ceilingArb }, { requiredKeys: [] })).map(([w, b]) => new BudgetCmd(w, b)),
  fc.constantFrom<Advance>('second', 'pastLease', 'pastLease', 'min10', 'hour', 'midnight', 'beforeMidnight', 'monday', 'monthStart', 'expiry', 'pastExpiry').map((a) => new AdvanceCmd(a)),
  fc.constantFrom<Advance>('pastLease', 'expiry', 'pastExpiry', 'midnight').map((a) => new AdvanceCmd(a)),
];

interface World {
  keyBudgets: Ceilings[];
  wsBudgets: Ceilings[];
  grants: { ws: number; amount: number; expiry: Expiry }[];
}

const worldArb: fc.Arbitrary<World> = fc.record({
  keyBudgets: fc.tuple(ceilingsArb, ceilingsArb).map(([k1, k2]) => [{ dailyMillicents: null, weeklyMillicents: null, monthlyMillicents: null }, k1, k2]),
  wsBudgets: fc.tuple(fc.constant({ dailyMillicents: null, weeklyMillicents: null, monthlyMillicents: null }), ceilingsArb),
  grants: fc
    .array(fc.record({ ws: fc.nat(1), amount: amountArb, expiry: expiryArb }), { minLength: 1, maxLength: 4 })
    // Each workspace starts with some credits that do not expire, so most runs get admitted.
    .chain((g) => fc.tuple(fc.constantFrom(10_000, 30_000, 60_000), fc.constantFrom(10_000, 30_000, 60_000)).map(([a, b]) => [{ ws: 0, amount: a, expiry: 'never' as Expiry }, { ws: 1, amount: b, expiry: 'never' as Expiry }, ...g])),
});

async function setup(ctx: TestContext, world: World): Promise<{ model: Model; real: Real }> {
  const user = (await adminOk(ctx, '/admin/v1/users', { email: `model-${randomBytes(6).toString('hex')}@example.com`, name: 'Model user' })).user;
  const wsIds: string[] = [];
  for (let ws = 0; ws < 2; ws++) {
    wsIds.push((await adminOk(ctx, '/admin/v1/workspaces', { name: `Model W${ws}`, plan: 'pro', ownerUserId: user.id })).workspace.id);
  }
  // Points never refuse here (they are not what this test is about); W0 runs 2 jobs at once and lets 2 wait.
  const limits = [
    { pointsPerMinute: 1_000_000_000, pointsPerMonth: 1_000_000_000_000, runningJobs: 2, waitingJobs: 2 },
    { pointsPerMinute: 1_000_000_000, pointsPerMonth: 1_000_000_000_000 },
  ];
  for (let ws = 0; ws < 2; ws++) await adminOk(ctx, `/admin/v1/workspaces/${wsIds[ws]}/settings`, { limits: limits[ws], budgets: world.wsBudgets[ws] });
  const keyIds: string[] = [];
  const secrets: string[] = [];
  for (let k = 0; k < KEY_WORKSPACES.length; k++) {
    const created = await adminOk(ctx, '/admin/v1/keys', {
      userId: user.id,
      workspaceIds: KEY_WORKSPACES[k]!.map((ws) => wsIds[ws]),
      scopes: [...SCOPES],
      operations: [...OPERATION_IDS],
      transports: ['rest'],
      budgets: world.keyBudgets[k],
    });
    keyIds.push(created.key.id);
    secrets.push(created.secret);
  }
  const model: Model = {
    now: ctx.clock.now(),
    lease: ctx.config.jobLeaseMs,
    allocs: [],
    holds: new Map(),
    jobs: [],
    usage: [],
    purchased: [0, 0],
    expired: [0, 0],
    wsBudgets: world.wsBudgets.map((b) => ({ ...b })),
    keyBudgets: world.keyBudgets.map((b) => ({ ...b })),
    running: [2, 6],
    waiting: [2, 100],
    idem: new Map(),
    sent: [],
    counter: 0,
  };
  const real: Real = { ctx, userId: user.id, wsIds, keyIds, secrets, eventCursors: [undefined, undefined], events: new Map(), observed: new Map() };
  for (const g of world.grants) await grant(model, real, g.ws, g.amount, g.expiry);
  return { model, real };
}

/** Leaves no job of a finished run active (the claims and recoveries of the next run are global). */
async function cleanup(real: Real): Promise<void> {
  for (let ws = 0; ws < 2; ws++) {
    for (const j of await pageAll(real, ws, '/v1/jobs')) {
      if (j.status === 'pending' || j.status === 'processing') await api(real, 0, ws, 'POST', `/v1/jobs/${j.id}/cancel`);
    }
  }
}

// ---------------------------------------------------------------------------------------------

describeEachDatabase('job lifecycle and money, model-based', (get) => {
  test('Rules 3-4, state table, Budgets, Errors: random runs, cancels, retries, workers, grants and clock moves keep the money exact', async () => {
    const ctx = get();
    await fc.assert(
      fc.asyncProperty(worldArb, fc.commands(commandArbs, { maxCommands: MAX_COMMANDS, size: 'max' }), async (world, cmds) => {
        let real: Real | undefined;
        try {
          let model: Model | undefined;
          await fc.asyncModelRun(async () => {
            const s = await setup(ctx, world);
            real = s.real;
            model = s.model;
            await checkAll(s.model, s.real);
            return s;
          }, cmds);
          await checkEventsExactly(model!, real!);
        } finally {
          if (real) await cleanup(real);
        }
      }),
      { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED, ...(PATH ? { path: PATH } : {}) } : {}), includeErrorInReport: true },
    );
    if (process.env.JOBS_MODEL_STATS) console.error([...stats].sort().map(([k, v]) => `${k}: ${v}`).join('\n'));
  });
});

// ---------------------------------------------------------------------------------------------
// Regressions found by the model (focused, deterministic).

describeEachDatabase('job lifecycle and money, regressions', (get) => {
  /** A video job of 5 one-second steps at 1000 millicents each (maximum 50,000), on a fresh tenant. */
  async function lostVideoJob(ctx: TestContext): Promise<{ r: Real; jobId: string }> {
    const world: World = {
      keyBudgets: [0, 1, 2].map(() => ({ dailyMillicents: null, weeklyMillicents: null, monthlyMillicents: null })),
      wsBudgets: [0, 1].map(() => ({ dailyMillicents: null, weeklyMillicents: null, monthlyMillicents: null })),
      grants: [{ ws: 0, amount: 200_000, expiry: 'never' }],
    };
    const { real: r } = await setup(ctx, world);
    const res = await api(r, 0, 0, 'POST', '/v1/runs', { idem: 'lost-video', body: { operationId: 'video.generate', input: { prompt: 'clip [sim:delay=0][sim:cost=5000]', durationSeconds: 5 } } });
    assert.equal(res.statusCode, 202, res.body);
    const jobId = res.json().data.jobId as string;
    // The first worker checkpoints 2 steps and dies; the next three die before any step.
    for (const steps of [2, 0, 0, 0]) {
      const [claimed] = await claimJobs(ctx.deps, 'dying-worker', 1);
      assert.equal(claimed?.id, jobId);
      assert.equal((await executeJob(ctx.deps, claimed!, dyingSignal(steps))).status, 'lost');
      ctx.clock.advance(ctx.config.jobLeaseMs + 1);
      assert.equal(await recoverExpiredLeases(ctx.deps), 1);
    }
    const lost = (await api(r, 0, 0, 'GET', `/v1/jobs/${jobId}`)).json().data;
    assert.deepEqual([lost.status, lost.errorCode, lost.costMillicents], ['failed', 'WORKER_LOST', 2000], 'the two checkpointed steps are charged once when the job is given up');
    const retry = await api(r, 0, 0, 'POST', `/v1/jobs/${jobId}/retry`, { idem: 'retry-lost-video' });
    assert.equal(retry.statusCode, 202, retry.body);
    assert.equal(retry.json().data.maximumCostMillicents, 30_000, 'the three steps left are reserved');
    return { r, jobId };
  }

  test('State table (retry) + Errors 8: a job failed with WORKER_LOST and retried is not charged again for its checkpointed steps', async () => {
    const ctx = get();
    const { r, jobId } = await lostVideoJob(ctx);
    try {
      assert.equal(await new JobWorker(ctx.deps).runOnce(), 1);
      const done = (await api(r, 0, 0, 'GET', `/v1/jobs/${jobId}`)).json().data;
      assert.equal(done.status, 'completed');
      // 5 steps of 1000 each: 2000 charged when the job was lost, 3000 for the three steps of the retry.
      assert.equal(done.costMillicents, 5000, 'each step is charged exactly once over the job');
      await assertLedgerInvariants(ctx.deps, r.wsIds[0]!);
    } finally {
      await cleanup(r);
    }
  });

  test('State table (cancel): a retried WORKER_LOST job cancelled while pending releases its whole hold and is charged nothing more', async () => {
    const ctx = get();
    const { r, jobId } = await lostVideoJob(ctx);
    try {
      const cancelled = await api(r, 0, 0, 'POST', `/v1/jobs/${jobId}/cancel`);
      assert.equal(cancelled.statusCode, 200, cancelled.body);
      assert.equal(cancelled.json().data.costMillicents, 2000, 'nothing ran since the retry: nothing more is charged');
      const bal = (await api(r, 0, 0, 'GET', '/v1/balance')).json().data;
      assert.deepEqual([bal.totalMillicents, bal.reservedMillicents], [200_000 - 2000, 0]);
      await assertLedgerInvariants(ctx.deps, r.wsIds[0]!);
    } finally {
      await cleanup(r);
    }
  });
});
