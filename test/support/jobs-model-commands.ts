/**
 * The commands of test/jobs/jobs-model.test.ts: runs (single and in bursts), cancels, retries, the
 * worker (one job, a full drain, a worker that dies after K steps, lease recovery, housekeeping),
 * operator grants, budget changes and clock moves. Each command applies itself to the model
 * (test/support/jobs-model.ts) and to the service, compares the answer with the model's prediction
 * and then checks everything (test/support/jobs-model-checks.ts).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { claimJobs } from '../../src/worker/job-claim.js';
import { recoverExpiredLeases } from '../../src/worker/job-recovery.js';
import { executeJob } from '../../src/modules/jobs/executor.js';
import { JobWorker } from '../../src/worker/job-worker.js';
import { runMaintenanceOnce } from '../../src/worker/maintenance.js';
import { admission, attempt, build, canonical, claim, DAY, directiveText, finish, hold, HOUR, IDEMPOTENCY_TTL, keysOf, mExpire, MINUTE, newJob, nextClaim, note, pendingCount, period, recover, scopeKey, SECOND, storedKey, type Built, type Caller, type Ceilings, type MJob, type Model, type Refusal, type Sent, type Spec } from './jobs-model.js';
import { adminOk, api, checkAll, expectRefusal, type Real } from './jobs-model-checks.js';

// ---------------------------------------------------------------------------------------------
// Commands.

export type IdemChoice = { kind: 'fresh' } | { kind: 'reuse'; pick: number; same: boolean };

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

export type Cmd = fc.AsyncCommand<Model, Real>;

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
export class BurstCmd implements Cmd {
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
export class RunCmd implements Cmd {
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
    applyAdmittedRun(m, res, { keyIdx, ws, name, spec, b, what }, (job) => attempt(m, job));
    await checkAll(m, r);
  }
}

/** A POST /v1/runs the model admits, as both run commands (this file's and the adapters') send it. */
export interface AdmittedRun {
  keyIdx: number;
  ws: number;
  /** Its Idempotency-Key. */
  name: string;
  spec: Spec;
  b: Built;
  /** Names the run in assertion messages. */
  what: string;
}

/**
 * The answer of an admitted run against the model: 200 (synchronous) or 202, the new job and its
 * hold, the synchronous result once `settle` ran the attempt in the model (or the queued job's
 * body), and the stored Idempotency-Key with that answer. Returns the model's job.
 */
export function applyAdmittedRun(m: Model, res: LightMyRequestResponse, run: AdmittedRun, settle: (job: MJob) => void): MJob {
  const { keyIdx, ws, name, spec, b, what } = run;
  assert.equal(res.statusCode, b.sync ? 200 : 202, `${what}: ${res.body}`);
  const data = res.json().data;
  const job = newJob(m, data.jobId, ws, keyIdx, spec, b);
  hold(m, job, keyIdx, b.fullMax);
  if (b.sync) {
    settle(job);
    assert.deepEqual(
      { kind: data.kind, status: data.status, errorCode: data.errorCode, costMillicents: data.costMillicents },
      { kind: 'result', status: job.status, errorCode: job.errorCode, costMillicents: job.cost },
      `${what}: synchronous result`,
    );
  } else {
    assert.deepEqual(data, { kind: 'job', jobId: job.id, status: 'pending', maximumCostMillicents: b.fullMax }, `${what}: queued`);
  }
  const hash = canonical({ endpoint: 'run', body: { operationId: b.operationId, input: b.input } });
  m.idem.set(scopeKey(keyIdx, ws, name), { hash, expiresAt: m.now + IDEMPOTENCY_TTL, statusCode: res.statusCode, body: res.json() });
  return job;
}

export type JobFilter = 'any' | 'failed' | 'active';

export interface JobPick {
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
export class CancelCmd implements Cmd {
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
export class RetryCmd implements Cmd {
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
export class WorkCmd implements Cmd {
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
export class DrainCmd implements Cmd {
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
export function dyingSignal(after: number): AbortSignal {
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
export class DieCmd implements Cmd {
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

export class RecoverCmd implements Cmd {
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

export class MaintenanceCmd implements Cmd {
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

export type Expiry = 'never' | 'min10' | 'hour' | 'midnight' | 'day' | 'days3';

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

export async function grant(m: Model, r: Real, ws: number, amount: number, e: Expiry): Promise<void> {
  const expiresAt = expiryAt(m.now, e);
  const data = await adminOk(r.ctx, `/admin/v1/workspaces/${r.wsIds[ws]}/credits`, {
    amountMillicents: amount,
    ...(r.mode === 'test' ? { mode: 'test' } : {}),
    ...(expiresAt !== null ? { expiresAt: new Date(expiresAt).toISOString() } : {}),
  });
  mExpire(m, ws);
  m.allocs.push({ id: data.allocation.id, ws, remaining: amount, expiresAt });
  m.purchased[ws]! += amount;
}

export class GrantCmd implements Cmd {
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

export class BudgetCmd implements Cmd {
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

export type Advance = 'second' | 'pastLease' | 'min10' | 'hour' | 'midnight' | 'beforeMidnight' | 'monday' | 'monthStart' | 'expiry' | 'pastExpiry';

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

export class AdvanceCmd implements Cmd {
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
