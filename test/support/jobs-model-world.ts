/**
 * The generated world of the model-based tests of jobs and money (test/jobs/jobs-model.test.ts,
 * on the simulated provider, and test/jobs/jobs-model-adapters.test.ts, on the OpenAI and
 * Replicate fakes): two workspaces and three keys of one owner (K0 and K1 in both workspaces, K2
 * in W0 only; K1, K2 and W1 with random budgets; W0 runs 2 jobs at once and lets 2 wait), their
 * first credits, the model of that state and the service side (`Real`), and the clean-up after a
 * sequence.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import type { TestContext } from './harness.js';
import type { Mode } from '../../src/lib/livemode.js';
import { ensureTestTwin } from '../../src/modules/accounts/test-twins.js';
import { findWorkspace } from '../../src/modules/accounts/store.js';
import { CALLERS, KEY_WORKSPACES, type Ceilings, type Model } from './jobs-model.js';
import { adminOk, api, checkAll, checkEventsExactly, pageAll, type Real } from './jobs-model-checks.js';
import { BudgetCmd, grant, GrantCmd, type Cmd, type Expiry, type JobFilter, type JobPick } from './jobs-model-commands.js';

export const amountArb = fc.constantFrom(200, 1_000, 5_000, 20_000, 50_000, 120_000);
export const expiryArb = fc.constantFrom<Expiry>('never', 'never', 'min10', 'hour', 'midnight', 'day', 'days3');
export const ceilingArb = fc.constantFrom<number | null>(null, null, 3_000, 15_000, 60_000, 150_000);
export const ceilingsArb: fc.Arbitrary<Ceilings> = fc.record({ dailyMillicents: ceilingArb, weeklyMillicents: ceilingArb, monthlyMillicents: ceilingArb });

/** The key and workspace header a command acts with. */
export const callerArb = fc.constantFrom(...CALLERS);
/** Mostly the jobs a command is about (failed ones for retries, active ones for cancels), sometimes any. */
export const pickArb = (filter: JobFilter): fc.Arbitrary<JobPick> => fc.record({ filter: fc.constantFrom<JobFilter>(filter, filter, filter, 'any'), n: fc.nat(40) });
/** An operator's grant to either workspace. */
export const grantCmdArb: fc.Arbitrary<Cmd> = fc.tuple(fc.nat(1), amountArb, expiryArb).map(([w, a, e]) => new GrantCmd(w, a, e));
/** New budgets of either workspace (each ceiling set, cleared or left out). */
export const budgetCmdArb: fc.Arbitrary<Cmd> = fc.tuple(fc.nat(1), fc.record({ dailyMillicents: ceilingArb, weeklyMillicents: ceilingArb, monthlyMillicents: ceilingArb }, { requiredKeys: [] })).map(([w, b]) => new BudgetCmd(w, b));

/** fc.assert's parameters that replay a reported failure: JOBS_MODEL_SEED, with JOBS_MODEL_PATH. */
export function replayParameters(): { seed?: number; path?: string } {
  const seed = process.env.JOBS_MODEL_SEED ? Number(process.env.JOBS_MODEL_SEED) : undefined;
  const path = process.env.JOBS_MODEL_PATH;
  return seed !== undefined ? { seed, ...(path ? { path } : {}) } : {};
}

/**
 * One generated sequence: the world set up and checked, the commands run against the model and
 * the service, the event feed checked exactly, and the world cleaned up whatever happened
 * (`beforeCleanup` first: it ends what the sequence left running at a fake).
 */
export async function runSequence(ctx: TestContext, world: World, cmds: Iterable<Cmd>, beforeCleanup?: () => void, mode: Mode = 'live'): Promise<void> {
  let real: Real | undefined;
  try {
    let model: Model | undefined;
    await fc.asyncModelRun(async () => {
      const s = await setup(ctx, world, mode);
      real = s.real;
      model = s.model;
      await checkAll(s.model, s.real);
      return s;
    }, cmds);
    await checkEventsExactly(model!, real!);
  } finally {
    beforeCleanup?.();
    if (real) await cleanup(real);
  }
}


export interface World {
  keyBudgets: Ceilings[];
  wsBudgets: Ceilings[];
  grants: { ws: number; amount: number; expiry: Expiry }[];
}

export const worldArb: fc.Arbitrary<World> = fc.record({
  keyBudgets: fc.tuple(ceilingsArb, ceilingsArb).map(([k1, k2]) => [{ dailyMillicents: null, weeklyMillicents: null, monthlyMillicents: null }, k1, k2]),
  wsBudgets: fc.tuple(fc.constant({ dailyMillicents: null, weeklyMillicents: null, monthlyMillicents: null }), ceilingsArb),
  grants: fc
    .array(fc.record({ ws: fc.nat(1), amount: amountArb, expiry: expiryArb }), { minLength: 1, maxLength: 4 })
    // Each workspace starts with some credits that do not expire, so most runs get admitted.
    .chain((g) => fc.tuple(fc.constantFrom(10_000, 30_000, 60_000), fc.constantFrom(10_000, 30_000, 60_000)).map(([a, b]) => [{ ws: 0, amount: a, expiry: 'never' as Expiry }, { ws: 1, amount: b, expiry: 'never' as Expiry }, ...g])),
});

/**
 * The world's workspaces, keys and first credits. `mode` test: test keys, and the grants go to the
 * test balances (each twin made first with no grant of its own, so the model counts every credit).
 */
export async function setup(ctx: TestContext, world: World, mode: Mode = 'live'): Promise<{ model: Model; real: Real }> {
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
  if (mode === 'test') for (const id of wsIds) await ensureTestTwin(ctx.deps.db, (await findWorkspace(ctx.deps.db, id))!, 0, ctx.clock.now());
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
      ...(mode === 'test' ? { mode } : {}),
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
  const real: Real = { ctx, userId: user.id, wsIds, mode, keyIds, secrets, eventCursors: [undefined, undefined], events: new Map(), observed: new Map() };
  for (const g of world.grants) await grant(model, real, g.ws, g.amount, g.expiry);
  return { model, real };
}

/** Leaves no job of a finished run active (the claims and recoveries of the next run are global). */
export async function cleanup(real: Real): Promise<void> {
  for (let ws = 0; ws < 2; ws++) {
    for (const j of await pageAll(real, ws, '/v1/jobs')) {
      if (j.status === 'pending' || j.status === 'processing') await api(real, 0, ws, 'POST', `/v1/jobs/${j.id}/cancel`);
    }
  }
}
