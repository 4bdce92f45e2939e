/**
 * The money model over real adapters (issue 39 item 4): the model-based test of jobs and money
 * (jobs-model.test.ts, whose header states the model and what checkAll compares after every
 * command) with runs routed to the OpenAI and Replicate fakes, which are strict about what the
 * real APIs refuse, instead of the simulated provider.
 *
 * fast-check generates the same world (two workspaces, three keys, random budgets and credits)
 * and sequences of: runs of chat.generate (OpenAI, synchronous: random reported usage, also beyond
 * the bounds, none at all, a 429 first, 5xx or 429 until the retries run out), image.generate
 * (OpenAI, queued: 1 or 2 images, a 429 first, 5xx answers) and music.generate (Replicate,
 * queued: a create answered 429 first or 5xx, 5xx answers to polls, predictions that succeed,
 * fail, are cancelled at the provider or aborted, with random predict_time, also past the route's
 * deadline), each attempt of a job with its own scenario; replays; a worker running the next job;
 * a worker that dies while the provider works (the recovered attempt attaches to the running
 * prediction); cancels while the provider works (the prediction cancelled and its reported time
 * charged once, the fenced attempt writing nothing) and of pending or orphaned jobs; retries (a
 * new prediction per attempt); grants, budget changes, clock moves past leases and expiries, and
 * lease recovery (up to WORKER_LOST).
 *
 * After every command: the cost bound (every job's cost ≤ its maximum, and equal to the model's:
 * the file's prices applied to what the provider reported, capped at the hold), the ledger
 * invariants, balances, budgets and events as in jobs-model.test.ts, and "no double charge":
 * each job's usage transactions add up to its cost, and each music job has exactly one
 * prediction per attempt that created one. test/support/jobs-model-adapters.ts has the routes,
 * scenarios and commands.
 *
 * JOBS_MODEL_ADAPTERS_RUNS and JOBS_MODEL_ADAPTERS_COMMANDS raise the number and length of the
 * sequences (the defaults keep the file under a minute per database); JOBS_MODEL_SEED (with
 * JOBS_MODEL_PATH) replays a reported failure; JOBS_MODEL_STATS=1 prints what the sequences reached.
 */
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { createTestContext, disposeTestContext, type TestContext } from '../support/harness.js';
import { testDatabaseNames } from '../support/databases.js';
import { FakeOpenAi } from '../support/fake-openai.js';
import { FakeReplicate } from '../support/fake-replicate.js';
import { checkRefusals } from '../support/openapi-responses.js';
import { stats } from '../support/jobs-model.js';
import { AdvanceCmd, RecoverCmd, RetryCmd, type Advance, type Cmd, type IdemChoice } from '../support/jobs-model-commands.js';
import { budgetCmdArb, callerArb, grantCmdArb, pickArb, replayParameters, runSequence, worldArb } from '../support/jobs-model-world.js';
import { providersFile, registerFakes, RemoteCancelCmd, RemoteCancelMidWorkCmd, RemoteDieCmd, RemoteRunCmd, RemoteWorkCmd, remoteSpecArb } from '../support/jobs-model-adapters.js';

const RUNS = Math.max(1, Number(process.env.JOBS_MODEL_ADAPTERS_RUNS) || 25);
const MAX_COMMANDS = Math.max(1, Number(process.env.JOBS_MODEL_ADAPTERS_COMMANDS) || 30);

const idemArb: fc.Arbitrary<IdemChoice> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'fresh' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reuse' as const), pick: fc.nat(40), same: fc.boolean() }) },
);

const commandArbs: fc.Arbitrary<Cmd>[] = [
  fc.tuple(callerArb, remoteSpecArb, fc.nat(9)).map(([c, s, r]) => new RemoteRunCmd(c, s, r === 0)),
  fc.tuple(callerArb, remoteSpecArb).map(([c, s]) => new RemoteRunCmd(c, s, false)),
  fc.tuple(callerArb, remoteSpecArb).map(([c, s]) => new RemoteRunCmd(c, s, false)),
  fc.tuple(callerArb, remoteSpecArb).map(([c, s]) => new RemoteRunCmd(c, s, false)),
  fc.integer({ min: 1, max: 3 }).map((n) => new RemoteWorkCmd(n)),
  fc.integer({ min: 1, max: 3 }).map((n) => new RemoteWorkCmd(n)),
  fc.constant(new RemoteWorkCmd(1)),
  fc.tuple(fc.constantFrom(0, 1, 1, 2, 4), fc.boolean()).map(([c, w]) => new RemoteDieCmd(c, w)),
  fc.constantFrom(1, 4).map((c) => new RemoteDieCmd(c, true)),
  fc.constant(new RemoteCancelMidWorkCmd()),
  fc.tuple(pickArb('active'), fc.nat(3)).map(([p, k]) => new RemoteCancelCmd(p, k)),
  fc.tuple(pickArb('failed'), fc.nat(3), fc.nat(8), idemArb).map(([p, k, w, i]) => new RetryCmd(p, k, w === 0, i)),
  fc.constant(new RecoverCmd()),
  grantCmdArb,
  budgetCmdArb,
  fc.constantFrom<Advance>('second', 'pastLease', 'pastLease', 'hour', 'midnight', 'monthStart', 'expiry', 'pastExpiry').map((a) => new AdvanceCmd(a)),
];

for (const dbName of testDatabaseNames()) {
  describe(`job lifecycle and money over the OpenAI and Replicate adapters, model-based [${dbName}]`, () => {
    let openai: FakeOpenAi;
    let replicate: FakeReplicate;
    let ctx: TestContext;
    let dir: string;

    before(async () => {
      openai = await FakeOpenAi.start();
      replicate = await FakeReplicate.start();
      dir = mkdtempSync(join(tmpdir(), 'was-model-adapters-'));
      const file = join(dir, 'providers.json');
      writeFileSync(file, JSON.stringify(providersFile(openai, replicate)));
      ctx = await createTestContext(dbName, { env: { PROVIDERS_FILE: file, MODEL_OPENAI_KEY: 'sk-model-operator-key', MODEL_REPLICATE_TOKEN: 'r8_model_operator_token' } });
      registerFakes(ctx, { openai, replicate });
      // Every refusal of the sequences is one /openapi.json documents for its route.
      await checkRefusals(ctx.app);
    });

    after(async () => {
      if (ctx) await disposeTestContext(ctx);
      await openai?.close();
      await replicate?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    test('Rules 3-4, state table, Budgets, Errors over real adapters: random usage, 429s, 5xx, dying workers and cancels mid-prediction keep the money exact', async () => {
      await fc.assert(
        fc.asyncProperty(worldArb, fc.commands(commandArbs, { maxCommands: MAX_COMMANDS, size: 'max' }), (world, cmds) =>
          // Held predictions and images requests end, so nothing of this sequence runs into the next.
          runSequence(ctx, world, cmds, () => replicate.release()),
        ),
        {
          numRuns: RUNS,
          ...replayParameters(),
          includeErrorInReport: true,
          // A sequence that hangs is reported with its seed instead of stalling the suite.
          timeout: 60_000,
        },
      );
      if (process.env.JOBS_MODEL_STATS) console.error([...stats].sort().map(([k, v]) => `${k}: ${v}`).join('\n'));
    });
  });
}
