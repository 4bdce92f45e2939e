/**
 * A randomized money workload for the cost-analytics tests (issue 36): runs that complete
 * (synchronous chat, queued music), runs that fail, queued runs cancelled before they start,
 * two keys, credits that expire, operator refunds and debits, and clock moves of minutes to
 * days, through the public and admin APIs and the worker, as a workspace's owner would cause them.
 * Operator adjustments exist in live mode only, so the keys are live and their runs real work on
 * the paid providers' fakes of a context started with `{ live: { unitPrices: true } }`
 * (support/live-backend.ts): each run costs exactly what the fake reports (live-costing.ts).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { adjustCredits } from '../../src/modules/billing/adjustments.js';
import { AppError } from '../../src/http/errors.js';
import { sweepExpirations } from '../../src/modules/billing/service.js';
import { admin, call, type TestContext } from './harness.js';
import { drain, run } from './jobs.js';
import { seedKey, seedTenant, type Tenant } from './seed.js';
import { liveChatCosting, liveMusicCosting } from './live-costing.js';

export type CostCommand =
  | { kind: 'chat'; cost: number; key: number }
  | { kind: 'music'; cost: number; key: number }
  | { kind: 'fail'; cost: number; key: number }
  | { kind: 'cancel'; key: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'expiring'; amount: number; hours: number }
  | { kind: 'refund'; amount: number }
  | { kind: 'debit'; amount: number };

const key = fc.integer({ min: 0, max: 1 });
export const costCommand: fc.Arbitrary<CostCommand> = fc.oneof(
  fc.record({ kind: fc.constant('chat' as const), cost: fc.integer({ min: 0, max: 40 }), key }),
  fc.record({ kind: fc.constant('music' as const), cost: fc.integer({ min: 0, max: 5000 }), key }),
  fc.record({ kind: fc.constant('fail' as const), cost: fc.integer({ min: 0, max: 5000 }), key }),
  fc.record({ kind: fc.constant('cancel' as const), key }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.oneof(fc.integer({ min: 1, max: 3_600_000 }), fc.integer({ min: 3_600_000, max: 3 * 86_400_000 })) }),
  fc.record({ kind: fc.constant('expiring' as const), amount: fc.integer({ min: 1, max: 50_000 }), hours: fc.integer({ min: 1, max: 30 }) }),
  fc.record({ kind: fc.constant('refund' as const), amount: fc.integer({ min: 1, max: 20_000 }) }),
  fc.record({ kind: fc.constant('debit' as const), amount: fc.integer({ min: 1, max: 20_000 }) }),
);

export interface Workload {
  tenant: Tenant;
  /** The tenant's key and a second key of the same owner and workspace. */
  secrets: string[];
  keyIds: string[];
  startedAt: number;
}

export async function startWorkload(ctx: TestContext, credits = 5_000_000): Promise<Workload> {
  const tenant = await seedTenant(ctx.deps, { credits });
  const second = await seedKey(ctx.deps, tenant.user.id, [tenant.workspace.id]);
  return { tenant, secrets: [tenant.secret, second.secret], keyIds: [tenant.key.id, second.key.id], startedAt: ctx.clock.now() };
}

const as = (w: Workload, k: number) => ({ secret: w.secrets[k]!, workspace: w.tenant.workspace });

export async function applyCommand(ctx: TestContext, w: Workload, c: CostCommand): Promise<void> {
  const ws = w.tenant.workspace.id;
  switch (c.kind) {
    case 'chat': {
      const res = await run(ctx, as(w, c.key), 'chat.generate', liveChatCosting(ctx, c.cost));
      assert.equal(res.statusCode, 200, res.body);
      break;
    }
    case 'music':
    case 'fail': {
      // A failed prediction is charged the prediction time it reports, as a completed one is.
      const res = await run(ctx, as(w, c.key), 'music.generate', liveMusicCosting(ctx, c.cost, c.kind === 'fail' ? 'failed' : 'succeeded'));
      assert.equal(res.statusCode, 202, res.body);
      await drain(ctx);
      break;
    }
    case 'cancel': {
      // Cancelled before a worker takes it: no prediction is made.
      const res = await run(ctx, as(w, c.key), 'music.generate', { prompt: 'a tune', durationSeconds: 10 });
      assert.equal(res.statusCode, 202, res.body);
      const cancel = await call(ctx, 'POST', `/v1/jobs/${res.json().data.jobId}/cancel`, { secret: w.secrets[c.key]!, workspaceId: ws });
      assert.equal(cancel.statusCode, 200, cancel.body);
      break;
    }
    case 'advance':
      ctx.clock.advance(c.ms);
      await sweepExpirations(ctx.deps);
      break;
    case 'expiring': {
      const res = await admin(ctx, `/admin/v1/workspaces/${ws}/credits`, { amountMillicents: c.amount, expiresAt: new Date(ctx.clock.now() + c.hours * 3_600_000).toISOString() });
      assert.ok(res.statusCode === 200 || res.statusCode === 201, res.body);
      break;
    }
    case 'refund':
    case 'debit':
      try {
        await adjustCredits(ctx.deps, ws, { amountMillicents: c.kind === 'refund' ? c.amount : -c.amount, reason: `test ${c.kind}` });
      } catch (err) {
        // A debit beyond the spendable credits is refused whole (409): nothing written.
        if (!(err instanceof AppError && err.code === 'INSUFFICIENT_CREDITS')) throw err;
      }
      break;
  }
}
