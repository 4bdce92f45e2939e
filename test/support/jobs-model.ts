/**
 * The model of test/jobs/jobs-model.test.ts: a small independent re-statement of the job lifecycle
 * and its money (operations, directives and prices restated from the contracts, not imported;
 * budget periods in UTC; allocations spent earliest expiry first, holds, the usage ledger,
 * checkpoints, leases and recoveries, stored Idempotency-Keys). The test file's header says what it
 * checks.
 */
import assert from 'node:assert/strict';

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const IDEMPOTENCY_TTL = DAY;
const MAX_RECOVERIES = 3;

// ---------------------------------------------------------------------------------------------
// Operations, directives and prices (restated from the contracts, not imported).

export type OpKind = 'speech' | 'music' | 'video' | 'chat';
export type Status = 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled';
export const TERMINAL_EVENTS = ['job.completed', 'job.failed', 'job.cancelled'] as const;
export type TerminalEvent = (typeof TERMINAL_EVENTS)[number];

export interface Dirs {
  steps?: number;
  fail?: string;
  failAt?: number;
  cost?: number;
}

export interface Spec {
  op: OpKind;
  word: string;
  size: number;
  dirs: Dirs;
}

export interface Built {
  operationId: string;
  input: Record<string, unknown>;
  sync: boolean;
  fullMax: number;
  steps: number;
}

export function directiveText(d: Dirs): string {
  let s = '[sim:delay=0]';
  if (d.steps !== undefined) s += `[sim:steps=${d.steps}]`;
  if (d.fail !== undefined) s += `[sim:fail=${d.fail}]`;
  if (d.failAt !== undefined) s += `[sim:failAt=${d.failAt}]`;
  if (d.cost !== undefined) s += `[sim:cost=${d.cost}]`;
  return s;
}

export function build(spec: Spec): Built {
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

export function canonical(value: unknown): string {
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

export function period(p: PeriodName, t: number): { start: number; end: number } {
  const dayStart = t - (t % DAY);
  if (p === 'day') return { start: dayStart, end: dayStart + DAY };
  if (p === 'week') {
    const monday = dayStart - ((new Date(dayStart).getUTCDay() + 6) % 7) * DAY;
    return { start: monday, end: monday + 7 * DAY };
  }
  const d = new Date(t);
  return { start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}

export interface Ceilings {
  dailyMillicents: number | null;
  weeklyMillicents: number | null;
  monthlyMillicents: number | null;
}

export const PERIODS: { field: keyof Ceilings; period: PeriodName; name: string }[] = [
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

export interface MJob {
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

export interface Sent {
  name: string;
  keyIdx: number;
  ws: number;
  endpoint: 'run' | 'retry';
  spec?: Spec;
  jobId?: string;
}

export interface Model {
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
export const KEY_WORKSPACES = [[0, 1], [0, 1], [0]] as const;
export const CALLERS = [
  { key: 0, ws: 0 },
  { key: 0, ws: 1 },
  { key: 1, ws: 0 },
  { key: 1, ws: 1 },
  { key: 2, ws: 0 },
] as const;
export type Caller = (typeof CALLERS)[number];

export function keysOf(ws: number): number[] {
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
export function mExpire(m: Model, ws: number): void {
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

export function mTotal(m: Model, ws: number): number {
  return m.allocs.filter((a) => a.ws === ws).reduce((s, a) => s + a.remaining, 0);
}

export function mReserved(m: Model, ws: number): number {
  return openHolds(m, ws).reduce((s, h) => s + h.amount, 0);
}

export function spent(m: Model, who: { ws?: number; keyIdx?: number }, from: number, to: number): number {
  return m.usage
    .filter((u) => (who.ws === undefined || u.ws === who.ws) && (who.keyIdx === undefined || u.keyIdx === who.keyIdx) && u.at >= from && u.at < to)
    .reduce((s, u) => s + u.amount, 0);
}

export function held(m: Model, who: { ws?: number; keyIdx?: number }): number {
  return [...m.holds.values()].filter((h) => (who.ws === undefined || h.ws === who.ws) && (who.keyIdx === undefined || h.keyIdx === who.keyIdx)).reduce((s, h) => s + h.amount, 0);
}

export interface Refusal {
  status: number;
  code: string;
  limit?: string;
  retryAfter?: number;
}

/** Rule 3 and Budgets: spendable credits, then every ceiling of the key, then of the workspace. */
export function admission(m: Model, ws: number, keyIdx: number, amount: number): Refusal | null {
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

export function pendingCount(m: Model, ws: number): number {
  return m.jobs.filter((j) => j.ws === ws && j.status === 'pending').length;
}

export function hold(m: Model, job: MJob, keyIdx: number, amount: number): void {
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

export function finish(m: Model, job: MJob, status: 'completed' | 'failed' | 'cancelled', errorCode: string | null): void {
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
export function attempt(m: Model, job: MJob, dieAfter = Infinity): 'completed' | 'failed' | 'lost' {
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
export function nextClaim(m: Model): MJob | undefined {
  const running = [0, 1].map((ws) => m.jobs.filter((j) => j.ws === ws && j.status === 'processing').length);
  return m.jobs
    .filter((j) => j.status === 'pending' && running[j.ws]! < m.running[j.ws]!)
    .sort((a, b) => a.runAfter - b.runAfter || (a.id < b.id ? -1 : 1))[0];
}

export function claim(m: Model, job: MJob): void {
  job.status = 'processing';
  job.leaseExpiresAt = m.now + m.lease;
}

/** Lease recovery: back to pending from the checkpoint, or failed WORKER_LOST after MAX_RECOVERIES. */
export function recover(m: Model): number {
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

export function newJob(m: Model, id: string, ws: number, keyIdx: number, spec: Spec, b: Built): MJob {
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

export function scopeKey(keyIdx: number, ws: number, name: string): string {
  return `${keyIdx}/${ws}/${name}`;
}

/** A stored Idempotency-Key still alive for this scope, if any (decisions.md section 1: kept 24 h). */
export function storedKey(m: Model, keyIdx: number, ws: number, name: string): Stored | undefined {
  const s = m.idem.get(scopeKey(keyIdx, ws, name));
  if (s && m.now >= s.expiresAt) note('reused an Idempotency-Key after its 24 h');
  return s && m.now < s.expiresAt ? s : undefined;
}

/** What the generated sequences reached (printed with JOBS_MODEL_STATS=1, to tune the generators). */
export const stats = new Map<string, number>();
export function note(what: string): void {
  stats.set(what, (stats.get(what) ?? 0) + 1);
}
