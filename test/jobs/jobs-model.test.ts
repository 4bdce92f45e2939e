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
 * Every response is compared with the model's prediction (and every refusal with the answers
 * /openapi.json documents for its route, test/support/openapi-responses.ts checkRefusals): 202/200 bodies, 402
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
 * The model is test/support/jobs-model.ts, the service side and the checks after every command
 * test/support/jobs-model-checks.ts, the commands test/support/jobs-model-commands.ts, the
 * generated world and its set-up test/support/jobs-model-world.ts (shared with the variant on the
 * OpenAI and Replicate fakes, jobs-model-adapters.test.ts); this file holds the arbitraries of
 * the commands, the property and the regressions.
 *
 * The keys are test keys (simulated work, the test balances; rows and ledger invariants under the
 * test twins' ids, support/jobs-model-checks.ts scopeOf); the variant on the fakes keeps live keys.
 *
 * JOBS_MODEL_RUNS raises the number of generated sequences (the default keeps the file well under
 * 90 s per database); JOBS_MODEL_COMMANDS the maximum sequence length; JOBS_MODEL_SEED (with
 * JOBS_MODEL_PATH) replays a reported failure; JOBS_MODEL_STATS=1 prints what the sequences reached.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { claimJobs } from '../../src/worker/job-claim.js';
import { recoverExpiredLeases } from '../../src/worker/job-recovery.js';
import { executeJob } from '../../src/modules/jobs/executor.js';
import { JobWorker } from '../../src/worker/job-worker.js';
import { describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { stats, type Dirs, type OpKind, type Spec } from '../support/jobs-model.js';
import { api, scopeOf, type Real } from '../support/jobs-model-checks.js';
import { AdvanceCmd, BurstCmd, CancelCmd, DieCmd, DrainCmd, dyingSignal, MaintenanceCmd, RecoverCmd, RetryCmd, RunCmd, WorkCmd, type Advance, type Cmd, type IdemChoice } from '../support/jobs-model-commands.js';
import { budgetCmdArb, callerArb, cleanup, grantCmdArb, pickArb, replayParameters, runSequence, setup, worldArb, type World } from '../support/jobs-model-world.js';
import { checkRefusals } from '../support/openapi-responses.js';

const RUNS = Math.max(1, Number(process.env.JOBS_MODEL_RUNS) || 50);
const MAX_COMMANDS = Math.max(1, Number(process.env.JOBS_MODEL_COMMANDS) || 28);

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
const idemArb: fc.Arbitrary<IdemChoice> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'fresh' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reuse' as const), pick: fc.nat(40), same: fc.boolean() }) },
  // The key just sent, with the same request: a client retrying after a network failure.
  { weight: 1, arbitrary: fc.constant({ kind: 'reuse' as const, pick: 0, same: true }) },
);
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
  grantCmdArb,
  budgetCmdArb,
  fc.constantFrom<Advance>('second', 'pastLease', 'pastLease', 'min10', 'hour', 'midnight', 'beforeMidnight', 'monday', 'monthStart', 'expiry', 'pastExpiry').map((a) => new AdvanceCmd(a)),
  fc.constantFrom<Advance>('pastLease', 'expiry', 'pastExpiry', 'midnight').map((a) => new AdvanceCmd(a)),
];

// ---------------------------------------------------------------------------------------------

describeEachDatabase('job lifecycle and money, model-based', (get) => {
  test('Rules 3-4, state table, Budgets, Errors: random runs, cancels, retries, workers, grants and clock moves keep the money exact', async () => {
    const ctx = get();
    // Every refusal of the sequences (402, 404, 409, 429 …) is one /openapi.json documents for its route.
    await checkRefusals(ctx.app);
    await fc.assert(
      fc.asyncProperty(worldArb, fc.commands(commandArbs, { maxCommands: MAX_COMMANDS, size: 'max' }), (world, cmds) => runSequence(ctx, world, cmds, undefined, 'test')),
      { numRuns: RUNS, ...replayParameters(), includeErrorInReport: true },
    );
    if (process.env.JOBS_MODEL_STATS) console.error([...stats].sort().map(([k, v]) => `${k}: ${v}`).join('\n'));
  });
}, testKeySuite());

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
    const { real: r } = await setup(ctx, world, 'test');
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
      await assertLedgerInvariants(ctx.deps, scopeOf(r, 0));
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
      await assertLedgerInvariants(ctx.deps, scopeOf(r, 0));
    } finally {
      await cleanup(r);
    }
  });
}, testKeySuite());
