/** Plan defaults of the spec's Limits table, and the limits a workspace really has after overrides. */
import type { LimitOverrides, Plan, Workspace } from '../accounts/types.js';

export interface Limits {
  pointsPerMinute: number;
  pointsPerMonth: number;
  activeKeys: number;
  runningJobs: number;
  waitingJobs: number;
  streams: number;
}

export const PLAN_DEFAULTS: Record<Plan, Limits> = {
  free: { pointsPerMinute: 240, pointsPerMonth: 10_000, activeKeys: 5, runningJobs: 1, waitingJobs: 3, streams: 0 },
  starter: { pointsPerMinute: 1_200, pointsPerMonth: 200_000, activeKeys: 20, runningJobs: 3, waitingJobs: 50, streams: 0 },
  pro: { pointsPerMinute: 3_600, pointsPerMonth: 1_000_000, activeKeys: 50, runningJobs: 6, waitingJobs: 100, streams: 3 },
};

export const LIMIT_NAMES = ['pointsPerMinute', 'pointsPerMonth', 'runningJobs', 'waitingJobs', 'streams', 'activeKeys'] as const satisfies readonly (keyof LimitOverrides)[];

interface Resolved {
  plan: Plan;
  overrides: LimitOverrides;
  limits: Readonly<Limits>;
}

/** Per workspace object (the auth cache hands out the same one on every request). */
const resolved = new WeakMap<object, Resolved>();

/** The plan's defaults with the workspace's overrides applied (read-only; shared between calls). */
export function resolveLimits(ws: Pick<Workspace, 'plan' | 'limitOverrides'>): Readonly<Limits> {
  const hit = resolved.get(ws);
  if (hit && hit.plan === ws.plan && hit.overrides === ws.limitOverrides) return hit.limits;
  const limits = Object.freeze({ ...PLAN_DEFAULTS[ws.plan], ...ws.limitOverrides });
  resolved.set(ws, { plan: ws.plan, overrides: ws.limitOverrides, limits });
  return limits;
}
