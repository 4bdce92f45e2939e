/**
 * The money rules of admission (runs/admission-rules.ts), the one decision every admitting path
 * calls: a run one by one, a workspace's queued runs in a batch, and a retry. Checked here as a
 * pure function against the contract's order (429 QUEUE_FULL for a queued job when the waiting
 * jobs fill the plan's limit, then funding by the workspace's own provider key, then 402
 * INSUFFICIENT_CREDITS unless spendable credits cover the maximum cost). The database paths that
 * call it are covered end to end by test/runs/runs.test.ts, test/db/batching.test.ts,
 * test/process/multi-process-admission.test.ts and test/jobs/jobs.test.ts (retries).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AppError } from '../../src/http/errors.js';
import type { AuthContext } from '../../src/modules/auth/types.js';
import { decideAdmission } from '../../src/modules/runs/admission-rules.js';
import type { Plan } from '../../src/modules/accounts/types.js';

/** Waiting-jobs limits of the spec's plan table (written from the spec, not read from src/). */
const WAITING_LIMIT: Record<Plan, number> = { free: 3, starter: 50, pro: 100 };
const NOW = Date.UTC(2026, 10, 27, 12);

function authOf(plan: Plan, waitingOverride?: number): AuthContext {
  return {
    role: 'owner',
    transport: 'rest',
    key: {
      id: 'k', userId: 'u', prefix: 'p', scopes: [], operations: [], transports: [], ipRanges: [], expiresAt: null,
      budgets: { dailyMillicents: null, weeklyMillicents: null, monthlyMillicents: null }, workspaceIds: ['w'], mode: 'live', createdAt: 0, revokedAt: null, suspendedUntil: null,
    },
    workspace: {
      id: 'w', name: 'w', plan, ownerUserId: null, organizationId: null,
      limitOverrides: waitingOverride === undefined ? {} : { waitingJobs: waitingOverride },
      budgets: { dailyMillicents: null, weeklyMillicents: null, monthlyMillicents: null }, lowCreditsMillicents: null, createdAt: 0, updatedAt: 0,
    },
  };
}

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError, `an AppError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a refusal');
}

test('admission: credits fund the job and its whole maximum cost is held when spendable credits cover it (exactly, too)', () => {
  const auth = authOf('starter');
  assert.deepEqual(decideAdmission(auth, { queued: true, maximumMillicents: 500 }, { waitingJobs: 0, ownProviderKey: false, spendableMillicents: 500 }, NOW), {
    funding: 'credits',
    holdMillicents: 500,
  });
});

test('admission: 402 INSUFFICIENT_CREDITS one millicent short, with what is spendable and what is required', () => {
  const err = refusal(() => decideAdmission(authOf('starter'), { queued: false, maximumMillicents: 500 }, { waitingJobs: 0, ownProviderKey: false, spendableMillicents: 499 }, NOW));
  assert.equal(err.code, 'INSUFFICIENT_CREDITS');
  assert.deepEqual(err.details, { spendableMillicents: 499, requiredMillicents: 500 });
  // Holds above live credits never show a negative spendable amount.
  const over = refusal(() => decideAdmission(authOf('starter'), { queued: false, maximumMillicents: 1 }, { waitingJobs: 0, ownProviderKey: false, spendableMillicents: -40 }, NOW));
  assert.deepEqual(over.details, { spendableMillicents: 0, requiredMillicents: 1 });
});

test("admission: the workspace's own provider key funds the job, with no hold and whatever its credits", () => {
  assert.deepEqual(decideAdmission(authOf('free'), { queued: true, maximumMillicents: 10_000 }, { waitingJobs: 0, ownProviderKey: true, spendableMillicents: 0 }, NOW), {
    funding: 'provider_key',
    holdMillicents: 0,
  });
});

test('admission: 429 QUEUE_FULL at the plan limit of waiting jobs (free 3, starter 50, pro 100, or the override), before credits are weighed', () => {
  for (const plan of ['free', 'starter', 'pro'] as const) {
    const limit = WAITING_LIMIT[plan];
    const below = decideAdmission(authOf(plan), { queued: true, maximumMillicents: 1 }, { waitingJobs: limit - 1, ownProviderKey: false, spendableMillicents: 1 }, NOW);
    assert.equal(below.funding, 'credits');
    // At the limit the queue refuses, even with no credits at all (the contract's order).
    const err = refusal(() => decideAdmission(authOf(plan), { queued: true, maximumMillicents: 1 }, { waitingJobs: limit, ownProviderKey: false, spendableMillicents: 0 }, NOW));
    assert.equal(err.code, 'QUEUE_FULL');
    assert.equal(err.retryAfter, 5);
    assert.deepEqual(err.details, { limit: 'WAITING_JOBS', waitingJobs: limit, maximum: limit, resetsAt: new Date(NOW + 5000).toISOString() });
  }
  const overridden = refusal(() => decideAdmission(authOf('pro', 7), { queued: true, maximumMillicents: 1 }, { waitingJobs: 7, ownProviderKey: true, spendableMillicents: 1 }, NOW));
  assert.equal(overridden.code, 'QUEUE_FULL');
});

test('admission: a synchronous run does not wait in the queue, so a full queue does not refuse it', () => {
  const decision = decideAdmission(authOf('free'), { queued: false, maximumMillicents: 5 }, { waitingJobs: 1_000, ownProviderKey: false, spendableMillicents: 5 }, NOW);
  assert.deepEqual(decision, { funding: 'credits', holdMillicents: 5 });
});

test('admission: any situation is decided as the contract orders it (property)', () => {
  const plans = fc.constantFrom<Plan>('free', 'starter', 'pro');
  fc.assert(
    fc.property(plans, fc.boolean(), fc.nat(150), fc.boolean(), fc.integer({ min: -1_000, max: 1_000_000 }), fc.nat(1_000_000), (plan, queued, waiting, own, spendable, maximum) => {
      const run = () => decideAdmission(authOf(plan), { queued, maximumMillicents: maximum }, { waitingJobs: waiting, ownProviderKey: own, spendableMillicents: spendable }, NOW);
      if (queued && waiting >= WAITING_LIMIT[plan]) return refusal(run).code === 'QUEUE_FULL';
      if (own) return assert.deepEqual(run(), { funding: 'provider_key', holdMillicents: 0 }) === undefined;
      if (spendable < maximum) return refusal(run).code === 'INSUFFICIENT_CREDITS';
      return assert.deepEqual(run(), { funding: 'credits', holdMillicents: maximum }) === undefined;
    }),
  );
});
