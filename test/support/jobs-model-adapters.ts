/**
 * The commands of test/jobs/jobs-model-adapters.test.ts: the money model of jobs-model.test.ts
 * with runs routed to the OpenAI and Replicate fakes (test/support/fake-openai.ts,
 * fake-replicate.ts) instead of the simulated provider. Three routes, priced in the providers file
 * below: chat.generate (synchronous) and image.generate (queued) on OpenAI, music.generate
 * (queued) on Replicate. What each attempt meets at the provider is generated with the run (a
 * scenario per attempt: reported usage, 429s, 5xx answers, a prediction's final status and
 * predict_time) and applied to the fakes when the attempt runs, one at a time, so the model knows
 * what the provider reports and therefore what must be charged (docs/providers.md, "The actual
 * cost"): at the file's prices, capped at the hold, once.
 *
 * Commands: runs (fresh keys or a replay), a worker running the next job, a worker that dies
 * (WorkerShutdown) while the provider works (the prediction stays; the recovered attempt attaches
 * to it), a cancel while the provider works (the prediction is cancelled and its reported time
 * charged with the cancel; the fenced attempt changes nothing), cancels of pending and orphaned
 * processing jobs. Retries, grants, budgets, clock moves and lease recovery are the simulated
 * model's commands (jobs-model-commands.ts). After every command: checkAll (balances, allocations,
 * ledger invariants, every job's status, cost, maximum and error; cost ≤ maximum; each job's
 * usage transactions add up to its cost, so nothing is charged twice), and, at the provider, each
 * music job's predictions: one per attempt that created one, never a second for a recovered attempt.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { claimJobs } from '../../src/worker/job-claim.js';
import { recoverExpiredLeases } from '../../src/worker/job-recovery.js';
import { executeJob } from '../../src/modules/jobs/executor.js';
import { WorkerShutdown } from '../../src/providers/types.js';
import type { TestContext } from './harness.js';
import { admission, claim, finish, hold, keysOf, mExpire, nextClaim, note, pendingCount, recover, storedKey, type Built, type Caller, type MJob, type Model, type Refusal, type Spec } from './jobs-model.js';
import { api, checkAll, expectRefusal, type Real } from './jobs-model-checks.js';
import { applyAdmittedRun, type Cmd, type JobPick } from './jobs-model-commands.js';
import type { FakeOpenAi } from './fake-openai.js';
import type { FakeReplicate } from './fake-replicate.js';
import { mp3 } from './media.js';
import { waitFor } from './wait.js';

// ---------------------------------------------------------------------------------------------
// Routes and prices (restated here, not read from the service).

export const CHAT_PRICE = { baseMillicents: 20, inputTokenMillicents: 1, outputTokenMillicents: 3 };
export const IMAGE_PRICE = { perImageMillicents: 700 };
export const MUSIC_PRICE = { perRunMillicents: 40, perSecondMillicents: 10, perPredictSecondMillicents: 100 };
/** The music route's prediction deadline: its maximum holds 100 × 20 predict seconds. */
export const MUSIC_TIMEOUT_S = 20;

export function providersFile(openai: FakeOpenAi, replicate: FakeReplicate) {
  return {
    providers: {
      oa: { type: 'openai', baseUrl: openai.baseUrl, apiKeyEnv: 'MODEL_OPENAI_KEY', privateNetwork: true, maxRetries: 2 },
      rep: { type: 'replicate', baseUrl: replicate.baseUrl, apiKeyEnv: 'MODEL_REPLICATE_TOKEN', privateNetwork: true, maxRetries: 2 },
    },
    operations: {
      'chat.generate': { provider: 'oa', model: 'gpt-4o-mini', price: CHAT_PRICE },
      'image.generate': { provider: 'oa', model: 'gpt-image-1', price: IMAGE_PRICE },
      'music.generate': { provider: 'rep', model: 'owner/music', input: { prompt: '{{prompt}}', duration: '{{durationSeconds}}' }, price: MUSIC_PRICE, timeoutSeconds: MUSIC_TIMEOUT_S, pollIntervalMs: 10 },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Scenarios: what one attempt meets at the provider.

/** A chat completion: usage as reported (possibly beyond the bounds), none, or HTTP failures. */
export type ChatScenario =
  | { kind: 'usage'; prompt: number; completion: number; rateLimitedFirst: boolean }
  | { kind: 'noUsage' }
  | { kind: 'serverErrors' }
  | { kind: 'rateLimited' };

/** An images request: answered (after one 429, perhaps) or three 5xx answers. */
export type ImageScenario = { kind: 'ok'; rateLimitedFirst: boolean } | { kind: 'serverErrors' };

/** A prediction: the create's answer, 5xx answers to the first polls, and how it ends. */
export interface MusicScenario {
  create: 'ok' | 'rateLimitedFirst' | 'serverError';
  pollErrors: 0 | 1 | 2 | 3;
  status: 'succeeded' | 'failed' | 'canceled' | 'aborted';
  /** metrics.predict_time (undefined: the fake's default 1.5 s, none for an aborted one). */
  predictTime: number | undefined;
}

export type RemoteSpec =
  | { route: 'chat'; size: number; scenarios: [ChatScenario] }
  | { route: 'image'; count: 1 | 2; scenarios: ImageScenario[] }
  | { route: 'music'; seconds: number; scenarios: MusicScenario[] };

/** What the model keeps of a remote job beyond jobs-model.ts's MJob. */
interface RemoteJob {
  spec: RemoteSpec;
  /** Text in the job's input that names it at the provider. */
  tag: string;
  /** Predictions the job created at the fake, as the model counts them. */
  creations: number;
  /** The prediction a worker that died left running (the recovered attempt attaches to it). */
  orphan: { id: string; attempt: number } | undefined;
}

const remoteJobs = new WeakMap<Model, Map<string, RemoteJob>>();
function remoteOf(m: Model): Map<string, RemoteJob> {
  let jobs = remoteJobs.get(m);
  if (!jobs) remoteJobs.set(m, (jobs = new Map()));
  return jobs;
}

/** The fakes of a test context (registered by the test file once it started them). */
export interface Fakes {
  openai: FakeOpenAi;
  replicate: FakeReplicate;
}
const fakesByContext = new WeakMap<TestContext, Fakes>();
export function registerFakes(ctx: TestContext, fakes: Fakes): void {
  fakesByContext.set(ctx, fakes);
}
function fakesOf(r: Real): Fakes {
  const f = fakesByContext.get(r.ctx);
  assert.ok(f, 'fakes registered for the test context');
  return f;
}

/** UTF-8 bytes of each message + 8, + 8 per request (docs/providers.md, "The maximum"). */
const chatInputBound = (text: string) => Buffer.byteLength(text, 'utf8') + 8 + 8;

export function buildRemote(spec: RemoteSpec, tag: string): Built {
  switch (spec.route) {
    case 'chat': {
      const maxTokens = 1 + (spec.size % 200);
      const text = `hello ${tag}`;
      return {
        operationId: 'chat.generate',
        input: { messages: [{ role: 'user', content: text }], maxTokens },
        sync: true,
        fullMax: CHAT_PRICE.baseMillicents + CHAT_PRICE.inputTokenMillicents * chatInputBound(text) + CHAT_PRICE.outputTokenMillicents * maxTokens,
        steps: 1,
      };
    }
    case 'image':
      return { operationId: 'image.generate', input: { prompt: `a picture ${tag}`, count: spec.count }, sync: false, fullMax: IMAGE_PRICE.perImageMillicents * spec.count, steps: 1 };
    case 'music':
      return {
        operationId: 'music.generate',
        input: { prompt: `a tune ${tag}`, durationSeconds: spec.seconds },
        sync: false,
        fullMax: MUSIC_PRICE.perRunMillicents + MUSIC_PRICE.perSecondMillicents * spec.seconds + MUSIC_PRICE.perPredictSecondMillicents * MUSIC_TIMEOUT_S,
        steps: 1,
      };
  }
}

/** The Spec jobs-model.ts keeps on an MJob (only named in messages). */
function specOf(spec: RemoteSpec, tag: string): Spec {
  return { op: spec.route === 'chat' ? 'chat' : 'music', word: `${spec.route} ${tag}`, size: 0, dirs: {} };
}

function scenarioText(s: RemoteSpec): string {
  return `${s.route}${s.route === 'chat' ? `(size ${s.size})` : s.route === 'image' ? `(${s.count} images)` : `(${s.seconds} s)`} ${JSON.stringify(s.scenarios)}`;
}

/** Prediction seconds charged: rounded up (prices.ts), the fake's default 1.5 when the script sets none. */
const predictSeconds = (p: number | undefined) => Math.ceil(p ?? 1.5);

/** The outcome of an attempt, as docs/providers.md "The actual cost" states it (uncapped; settlement caps at the hold). */
interface Outcome {
  status: 'completed' | 'failed';
  errorCode: string | null;
  consumed: number;
  /** Whether the attempt creates a prediction (music). */
  creates: boolean;
}

function chatOutcome(s: ChatScenario, b: Built): Outcome {
  const p = CHAT_PRICE;
  switch (s.kind) {
    case 'usage':
      return { status: 'completed', errorCode: null, consumed: p.baseMillicents + p.inputTokenMillicents * s.prompt + p.outputTokenMillicents * s.completion, creates: false };
    case 'noUsage':
      // Without both figures the bound is charged.
      return { status: 'completed', errorCode: null, consumed: b.fullMax, creates: false };
    case 'serverErrors':
      return { status: 'failed', errorCode: 'PROVIDER_ERROR', consumed: 0, creates: false };
    case 'rateLimited':
      return { status: 'failed', errorCode: 'PROVIDER_RATE_LIMITED', consumed: 0, creates: false };
  }
}

function imageOutcome(s: ImageScenario, count: number): Outcome {
  if (s.kind === 'serverErrors') return { status: 'failed', errorCode: 'PROVIDER_ERROR', consumed: 0, creates: false };
  return { status: 'completed', errorCode: null, consumed: IMAGE_PRICE.perImageMillicents * count, creates: false };
}

/** How a prediction that was created (or is attached to) ends for the job. */
function predictionOutcome(s: MusicScenario, seconds: number, attached: boolean): Outcome {
  const p = MUSIC_PRICE;
  const creates = !attached;
  // Three 5xx answers to a poll: the attempt gives up, cancels the prediction and fails, charging nothing.
  if (s.pollErrors === 3) return { status: 'failed', errorCode: 'PROVIDER_ERROR', consumed: 0, creates };
  const predicted = p.perPredictSecondMillicents * predictSeconds(s.predictTime);
  switch (s.status) {
    case 'succeeded':
      return { status: 'completed', errorCode: null, consumed: p.perRunMillicents + p.perSecondMillicents * seconds + predicted, creates };
    case 'failed':
    case 'canceled':
      // Its prediction time and the per-run price: its work started.
      return { status: 'failed', errorCode: 'PROVIDER_ERROR', consumed: p.perRunMillicents + predicted, creates };
    case 'aborted':
      // Never started: nothing, unless the provider reports prediction time after all.
      return { status: 'failed', errorCode: 'PROVIDER_ERROR', consumed: s.predictTime !== undefined && s.predictTime > 0 ? p.perRunMillicents + predicted : 0, creates };
  }
}

function musicOutcome(s: MusicScenario, seconds: number, attached: boolean): Outcome {
  // A recovered attempt attaches to the prediction its dead worker left, unless that one ended
  // cancelled or aborted: its work is gone (the interrupted run may have cancelled it itself),
  // and the attempt creates a new one (replicate.ts).
  if (attached && (s.status === 'canceled' || s.status === 'aborted')) {
    note(`music attached to a ${s.status} prediction: a new one`);
    return musicOutcome(s, seconds, false);
  }
  if (!attached && s.create === 'serverError') return { status: 'failed', errorCode: 'PROVIDER_ERROR', consumed: 0, creates: false };
  return predictionOutcome(s, seconds, attached);
}

const BUSY = (status: number) => ({ status, headers: { 'retry-after': '0' } });

/** Scripts the fakes for the next attempt of `job` (fresh scripts: nothing left over from another attempt). */
function applyScenario(f: Fakes, rj: RemoteJob, attempt: number, o: { hold?: Promise<unknown> } = {}): void {
  f.openai.reset();
  f.replicate.reset();
  const spec = rj.spec;
  switch (spec.route) {
    case 'chat': {
      const s = spec.scenarios[0];
      if (s.kind === 'usage') {
        f.openai.chatUsage = { prompt_tokens: s.prompt, completion_tokens: s.completion };
        if (s.rateLimitedFirst) f.openai.script('/v1/chat/completions', BUSY(429));
      } else if (s.kind === 'noUsage') f.openai.chatUsage = null;
      else f.openai.script('/v1/chat/completions', BUSY(s.kind === 'rateLimited' ? 429 : 500), BUSY(s.kind === 'rateLimited' ? 429 : 502), BUSY(s.kind === 'rateLimited' ? 429 : 503));
      return;
    }
    case 'image': {
      const s = spec.scenarios[(attempt - 1) % spec.scenarios.length]!;
      if (s.kind === 'serverErrors') f.openai.script('/v1/images/generations', BUSY(500), BUSY(502), BUSY(503));
      else {
        if (s.rateLimitedFirst) f.openai.script('/v1/images/generations', BUSY(429));
        if (o.hold) f.openai.script('/v1/images/generations', { until: o.hold });
      }
      return;
    }
    case 'music': {
      const s = spec.scenarios[(attempt - 1) % spec.scenarios.length]!;
      if (s.create === 'serverError') f.replicate.answer('create', BUSY(503));
      if (s.create === 'rateLimitedFirst') f.replicate.answer('create', BUSY(429));
      f.replicate.next({
        polls: 1,
        ...(o.hold ? { hold: true } : {}),
        status: s.status,
        ...(s.status === 'succeeded' ? { output: f.replicate.putFile(`tune-${rj.tag}.mp3`, mp3()) } : {}),
        ...(s.predictTime !== undefined ? { predictTime: s.predictTime } : {}),
      });
      for (let i = 0; i < s.pollErrors; i++) f.replicate.answer('get', BUSY(502));
      return;
    }
  }
}

/** The scenario of the job's current attempt, and whether it lets the provider be caught mid-work (held). */
function holdable(rj: RemoteJob, attempt: number): boolean {
  const spec = rj.spec;
  if (spec.route === 'image') return spec.scenarios[(attempt - 1) % spec.scenarios.length]!.kind === 'ok';
  if (spec.route === 'music') {
    // No failure before the provider works (a failed create, 5xx answers to the first polls).
    const s = spec.scenarios[(attempt - 1) % spec.scenarios.length]!;
    return s.pollErrors === 0 && ((rj.orphan !== undefined && rj.orphan.attempt === attempt) || s.create !== 'serverError');
  }
  return false;
}

/** The predictions the fake holds for a job (its tag is in the prompt). */
function predictionsOf(f: Fakes, rj: RemoteJob) {
  return [...f.replicate.predictions.values()].filter((p) => String(p.input.prompt ?? '').endsWith(rj.tag));
}

/** Every music job has exactly the predictions the model counts: one per attempt that created one. */
async function checkProvider(m: Model, r: Real): Promise<void> {
  const f = fakesOf(r);
  for (const [jobId, rj] of remoteOf(m)) {
    if (rj.spec.route !== 'music') continue;
    assert.equal(predictionsOf(f, rj).length, rj.creations, `job ${jobId} (${scenarioText(rj.spec)}): predictions created at the provider`);
  }
  await checkAll(m, r);
}

// ---------------------------------------------------------------------------------------------
// Commands.

let tags = 0;

/** POST /v1/runs of a remote route: admission as the simulated model decides it, the synchronous chat's result and charge. */
export class RemoteRunCmd implements Cmd {
  constructor(
    readonly caller: Caller,
    readonly spec: RemoteSpec,
    readonly replay: boolean,
  ) {}
  check(): boolean {
    return true;
  }
  toString(): string {
    return `RemoteRun(K${this.caller.key}@W${this.caller.ws}, ${scenarioText(this.spec)}${this.replay ? ', replaying the last run' : ''})`;
  }
  async run(m: Model, r: Real): Promise<void> {
    const f = fakesOf(r);
    const last = [...m.sent].reverse().find((s) => s.endpoint === 'run');
    const stored = last && storedKey(m, last.keyIdx, last.ws, last.name);
    if (this.replay && last && stored) {
      // The same request again with its Idempotency-Key: the identical stored answer, nothing charged, nothing sent to a provider.
      const lastJob = m.jobs.find((j) => j.spec === last.spec)!;
      f.openai.reset();
      const res = await api(r, last.keyIdx, last.ws, 'POST', '/v1/runs', { idem: last.name, body: { operationId: lastJob.b.operationId, input: lastJob.b.input } });
      assert.equal(res.statusCode, stored.statusCode, `replay of ${last.name}: ${res.body}`);
      assert.deepEqual(res.json(), stored.body, 'a replay returns the identical stored body');
      assert.equal(res.headers['idempotent-replayed'], 'true');
      assert.equal(f.openai.requests.length, 0, 'a replay calls no provider');
      note('remote replay');
      return checkProvider(m, r);
    }
    const { key: keyIdx, ws } = this.caller as { key: number; ws: number };
    const tag = `#${++tags}`;
    const b = buildRemote(this.spec, tag);
    const spec = specOf(this.spec, tag);
    const name = `idem-${m.counter++}`;
    const what = `run ${scenarioText(this.spec)} by K${keyIdx} in W${ws}`;
    const rj: RemoteJob = { spec: this.spec, tag, creations: 0, orphan: undefined };
    if (b.sync) applyScenario(f, rj, 1);
    const res = await api(r, keyIdx, ws, 'POST', '/v1/runs', { idem: name, body: { operationId: b.operationId, input: b.input } });
    const refusal: Refusal | null = !b.sync && pendingCount(m, ws) >= m.waiting[ws]! ? { status: 429, code: 'QUEUE_FULL', limit: 'WAITING_JOBS', retryAfter: 5 } : admission(m, ws, keyIdx, b.fullMax);
    if (refusal) {
      expectRefusal(res, refusal, what);
      if (b.sync) assert.equal(f.openai.requests.length, 0, `${what}: a refused run calls no provider`);
      return checkProvider(m, r);
    }
    m.sent.push({ name, keyIdx, ws, endpoint: 'run', spec });
    const job = applyAdmittedRun(m, res, { keyIdx, ws, name, spec, b, what }, (job) => {
      const o = chatOutcome((this.spec as { scenarios: [ChatScenario] }).scenarios[0], b);
      job.attemptCost = o.consumed;
      finish(m, job, o.status, o.errorCode);
      note(`chat ${o.status}${o.errorCode ? ` ${o.errorCode}` : ''}${o.consumed > b.fullMax ? ' (capped)' : ''}`);
    });
    remoteOf(m).set(job.id, rj);
    await checkProvider(m, r);
  }
}

/** What the next attempt of `job` does at the provider, for the model. */
function outcomeOf(job: MJob, rj: RemoteJob): Outcome {
  const spec = rj.spec;
  const index = (job.attempt - 1) % spec.scenarios.length;
  if (spec.route === 'image') return imageOutcome(spec.scenarios[index]!, spec.count);
  if (spec.route === 'music') return musicOutcome(spec.scenarios[index]!, spec.seconds, !!rj.orphan && rj.orphan.attempt === job.attempt);
  return chatOutcome(spec.scenarios[0], job.b);
}

/** Claims the job the model expects next (or none); the claimed row. */
async function claimNext(m: Model, r: Real, worker: string) {
  const want = nextClaim(m);
  const claimed = await claimJobs(r.ctx.deps, worker, 1);
  assert.deepEqual(claimed.map((j) => j.id), want ? [want.id] : [], 'the claim takes the oldest job of the queue with a free running slot');
  if (want) claim(m, want);
  return want ? { job: want, row: claimed[0]!, rj: remoteOf(m).get(want.id)! } : undefined;
}

/** Claims the next job and runs its attempt against the scripted provider to the end; false when nothing was claimable. */
async function workOne(m: Model, r: Real): Promise<boolean> {
  const next = await claimNext(m, r, 'model-worker');
  if (!next) return false;
  await runToEnd(m, r, next);
  return true;
}

/** Runs the attempt of a claimed job to its end (releasing the prediction it attaches to) and applies the outcome to the model. */
async function runToEnd(m: Model, r: Real, { job, row, rj }: NonNullable<Awaited<ReturnType<typeof claimNext>>>): Promise<void> {
  const f = fakesOf(r);
  const attached = rj.orphan?.attempt === job.attempt;
  const o = outcomeOf(job, rj);
  applyScenario(f, rj, job.attempt);
  if (attached) f.replicate.release(rj.orphan!.id);
  const outcome = await executeJob(r.ctx.deps, row, new AbortController().signal);
  note(`${rj.spec.route} ${o.status}${o.errorCode ? ` ${o.errorCode}` : ''}${attached ? ' (attached)' : ''}`);
  assert.equal(outcome.status, o.status, `attempt ${job.attempt} of job ${job.id} (${scenarioText(rj.spec)})`);
  if (o.creates) rj.creations++;
  rj.orphan = undefined;
  job.attemptCost = o.consumed;
  finish(m, job, o.status, o.errorCode);
}

/** A worker that claims one job at a time and runs it to its end, `n` times. */
export class RemoteWorkCmd implements Cmd {
  constructor(readonly n: number) {}
  check(): boolean {
    return true;
  }
  toString(): string {
    return `RemoteWork(${this.n})`;
  }
  async run(m: Model, r: Real): Promise<void> {
    for (let i = 0; i < this.n && (await workOne(m, r)); i++);
    await checkProvider(m, r);
  }
}

/**
 * Claims the next job and starts its attempt with the provider held mid-work (a prediction kept
 * processing, an images answer held back), calls `during` once the provider is working, and
 * expects the attempt to end changing nothing ('held'). A job whose scenario fails before the
 * provider works (a synchronous chat is never claimed) is run to its end instead ('ran'); 'none'
 * when nothing was claimable.
 */
async function midWork(m: Model, r: Real, during: (job: MJob, rj: RemoteJob, controller: AbortController) => Promise<void>): Promise<'held' | 'ran' | 'none'> {
  const next = await claimNext(m, r, 'model-worker');
  if (!next) return 'none';
  const { job, row, rj } = next;
  const f = fakesOf(r);
  if (!holdable(rj, job.attempt)) {
    await runToEnd(m, r, next);
    return 'ran';
  }
  let letGo!: () => void;
  const gate = new Promise<void>((resolve) => (letGo = resolve));
  const attached = rj.orphan && rj.orphan.attempt === job.attempt ? rj.orphan.id : undefined;
  applyScenario(f, rj, job.attempt, { hold: gate });
  const controller = new AbortController();
  // The held images request comes after a 429, if the scenario has one.
  const imageRequests = rj.spec.route === 'image' && rj.spec.scenarios[(job.attempt - 1) % rj.spec.scenarios.length]!.kind === 'ok' && (rj.spec.scenarios[(job.attempt - 1) % rj.spec.scenarios.length] as { rateLimitedFirst: boolean }).rateLimitedFirst ? 2 : 1;
  const polled = attached ? f.replicate.calls('get').filter((c) => c.path.endsWith(attached)).length : 0;
  const running = executeJob(r.ctx.deps, row, controller.signal);
  try {
    // The provider is working: the images request arrived, or the prediction was polled once more.
    if (rj.spec.route === 'image') await waitFake(() => f.openai.seen('/v1/images/generations').length >= imageRequests, 'the images request');
    else if (attached) await waitFake(() => f.replicate.calls('get').filter((c) => c.path.endsWith(attached)).length > polled, 'a poll of the attached prediction');
    else await waitFake(() => predictionsOf(f, rj).length > rj.creations && f.replicate.calls('get').length > 0, 'the prediction to be created and polled');
    if (!attached && rj.spec.route === 'music') rj.creations++;
    await during(job, rj, controller);
  } finally {
    letGo();
  }
  const outcome = await running;
  assert.equal(outcome.status, 'lost', `job ${job.id}: the attempt stopped mid-work changes nothing (${JSON.stringify(outcome.row?.status)})`);
  return 'held';
}

/** A state wait on what a fake recorded. */
const waitFake = (done: () => boolean, what: string) => waitFor(what, done, 30_000, 5);

/** The prediction a music job's current attempt created or attached to, at the fake (an older attempt's orphan is not it). */
function currentPrediction(f: Fakes, rj: RemoteJob, attempt: number): string {
  if (rj.orphan && rj.orphan.attempt === attempt) return rj.orphan.id;
  const all = predictionsOf(f, rj);
  return all[all.length - 1]!.id;
}

/**
 * A worker that dies (stops with WorkerShutdown) while the provider works: nothing is charged, the
 * job stays processing under its lease, a prediction stays running for the recovered attempt to
 * attach to (one creation in all). With `crashes`, that happens `crashes` times in a row, each
 * followed by the clock passing the lease and lease recovery (the fourth loss of one job fails it
 * WORKER_LOST); with `thenWork`, a worker then runs the queue (up to 4 jobs), so the recovered
 * attempt attaches to its prediction.
 */
export class RemoteDieCmd implements Cmd {
  constructor(
    readonly crashes: number,
    readonly thenWork: boolean,
  ) {}
  check(): boolean {
    return true;
  }
  toString(): string {
    return `RemoteWorkerDiesMidWork(${this.crashes === 0 ? 'once' : `${this.crashes} times, each followed by lease expiry and recovery`}${this.thenWork ? ', then a worker runs the queue' : ''})`;
  }
  async run(m: Model, r: Real): Promise<void> {
    const f = fakesOf(r);
    for (let i = 0; i < Math.max(1, this.crashes); i++) {
      await midWork(m, r, async (job, rj, controller) => {
        if (rj.spec.route === 'music') rj.orphan = { id: currentPrediction(f, rj, job.attempt), attempt: job.attempt };
        controller.abort(new WorkerShutdown());
        note(`${rj.spec.route} worker died mid-work`);
      });
      if (this.crashes === 0) break;
      m.now += m.lease + 1;
      r.ctx.clock.set(m.now);
      assert.equal(await recoverExpiredLeases(r.ctx.deps), recover(m), 'jobs recovered');
    }
    if (this.thenWork) for (let i = 0; i < 4 && (await workOne(m, r)); i++);
    await checkProvider(m, r);
  }
}

/**
 * The model's side of POST /v1/jobs/{id}/cancel of a processing job with remote work under way:
 * a music job's prediction is cancelled and the prediction time the provider reports in its
 * answer is charged with the per-run price (docs/providers.md, "The actual cost"); an images
 * request in flight reports nothing, so nothing is charged.
 */
function cancelRemote(m: Model, job: MJob, rj: RemoteJob, f: Fakes): void {
  let consumed = 0;
  if (rj.spec.route === 'music') {
    assert.ok(rj.orphan, `job ${job.id}: a processing music job has a running prediction`);
    const script = f.replicate.predictions.get(rj.orphan.id)!.script;
    consumed = MUSIC_PRICE.perRunMillicents + MUSIC_PRICE.perPredictSecondMillicents * predictSeconds(script.predictTime);
  }
  mExpire(m, job.ws);
  job.attemptCost = consumed;
  finish(m, job, 'cancelled', null);
}

/** POST /v1/jobs/{id}/cancel while the provider works on the job: remote work stopped and charged once, the attempt fenced out. */
export class RemoteCancelMidWorkCmd implements Cmd {
  check(): boolean {
    return true;
  }
  toString(): string {
    return 'RemoteCancelMidWork()';
  }
  async run(m: Model, r: Real): Promise<void> {
    const f = fakesOf(r);
    await midWork(m, r, async (job, rj) => {
      const prediction = rj.spec.route === 'music' ? currentPrediction(f, rj, job.attempt) : undefined;
      if (prediction) rj.orphan = { id: prediction, attempt: job.attempt };
      const res = await api(r, job.keyIdx, job.ws, 'POST', `/v1/jobs/${job.id}/cancel`);
      assert.equal(res.statusCode, 200, `cancel of job ${job.id} mid-work: ${res.body}`);
      cancelRemote(m, job, rj, f);
      rj.orphan = undefined;
      if (prediction) {
        assert.ok(f.replicate.cancels.includes(prediction), 'the prediction is cancelled at the provider');
        assert.equal(f.replicate.predictions.get(prediction)!.status, 'canceled');
      }
      const data = res.json().data;
      assert.deepEqual({ status: data.status, cost: data.costMillicents }, { status: 'cancelled', cost: job.cost }, `cancel of job ${job.id} mid-work (${scenarioText(rj.spec)})`);
      note(`${rj.spec.route} cancelled mid-work`);
    });
    await checkProvider(m, r);
  }
}

/** POST /v1/jobs/{id}/cancel of a picked job: pending (nothing charged), processing after a dead worker (its prediction cancelled and charged), or refused. */
export class RemoteCancelCmd implements Cmd {
  constructor(
    readonly pick: JobPick,
    readonly keyPick: number,
  ) {}
  check(m: Readonly<Model>): boolean {
    return m.jobs.length > 0;
  }
  toString(): string {
    return `RemoteCancel(${this.pick.filter} job #${this.pick.n}, key #${this.keyPick})`;
  }
  async run(m: Model, r: Real): Promise<void> {
    const f = fakesOf(r);
    const active = m.jobs.filter((j) => this.pick.filter === 'any' || j.status === 'pending' || j.status === 'processing');
    const from = active.length > 0 ? active : m.jobs;
    const job = from[this.pick.n % from.length]!;
    const keys = keysOf(job.ws);
    const keyIdx = keys[this.keyPick % keys.length]!;
    const rj = remoteOf(m).get(job.id)!;
    const res = await api(r, keyIdx, job.ws, 'POST', `/v1/jobs/${job.id}/cancel`);
    const what = `cancel of ${job.status} job ${job.id} (${scenarioText(rj.spec)})`;
    if (job.status === 'completed' || job.status === 'failed') expectRefusal(res, { status: 409, code: 'JOB_NOT_CANCELLABLE' }, what);
    else {
      assert.equal(res.statusCode, 200, `${what}: ${res.body}`);
      if (job.status === 'pending') {
        mExpire(m, job.ws);
        finish(m, job, 'cancelled', null);
      } else if (job.status === 'processing') {
        // A dead worker's job: a music job's orphaned prediction is cancelled and its time charged.
        const orphan = rj.orphan;
        if (rj.spec.route === 'music') assert.ok(orphan, 'a processing music job has a running prediction');
        cancelRemote(m, job, rj, f);
        if (orphan) assert.equal(f.replicate.predictions.get(orphan.id)!.status, 'canceled', 'the orphaned prediction is cancelled at the provider');
        rj.orphan = undefined;
        note(`${rj.spec.route} cancelled while orphaned`);
      }
      const data = res.json().data;
      assert.deepEqual({ status: data.status, cost: data.costMillicents }, { status: 'cancelled', cost: job.cost }, what);
    }
    await checkProvider(m, r);
  }
}

// ---------------------------------------------------------------------------------------------
// Arbitraries of the remote specs.

const predictTimeArb = fc.option(fc.constantFrom(0, 0.2, 1, 2.5, 7.01, MUSIC_TIMEOUT_S + 5), { nil: undefined, freq: 4 });
const musicScenarioArb: fc.Arbitrary<MusicScenario> = fc.record({
  create: fc.constantFrom<MusicScenario['create']>('ok', 'ok', 'ok', 'rateLimitedFirst', 'serverError'),
  pollErrors: fc.constantFrom<MusicScenario['pollErrors']>(0, 0, 0, 1, 2, 3),
  status: fc.constantFrom<MusicScenario['status']>('succeeded', 'succeeded', 'succeeded', 'failed', 'canceled', 'aborted'),
  predictTime: predictTimeArb,
});
const imageScenarioArb: fc.Arbitrary<ImageScenario> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('ok' as const), rateLimitedFirst: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'serverErrors' as const }) },
);
/** Usage as reported: within the bounds mostly, sometimes beyond them (the charge is capped at the maximum). */
const chatScenarioArb: fc.Arbitrary<ChatScenario> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('usage' as const), prompt: fc.oneof(fc.nat(40), fc.nat(2000)), completion: fc.oneof(fc.nat(200), fc.nat(5000)), rateLimitedFirst: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'noUsage' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'serverErrors' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'rateLimited' as const }) },
);

export const remoteSpecArb: fc.Arbitrary<RemoteSpec> = fc.oneof(
  fc.record({ route: fc.constant('chat' as const), size: fc.nat(1000), scenarios: fc.tuple(chatScenarioArb) }),
  fc.record({ route: fc.constant('image' as const), count: fc.constantFrom<1 | 2>(1, 2), scenarios: fc.array(imageScenarioArb, { minLength: 1, maxLength: 3 }) }),
  fc.record({ route: fc.constant('music' as const), seconds: fc.integer({ min: 5, max: 12 }), scenarios: fc.array(musicScenarioArb, { minLength: 1, maxLength: 3 }) }),
  fc.record({ route: fc.constant('music' as const), seconds: fc.integer({ min: 5, max: 12 }), scenarios: fc.array(musicScenarioArb, { minLength: 1, maxLength: 3 }) }),
);

