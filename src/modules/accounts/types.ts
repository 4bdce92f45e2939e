/** Users, organizations and workspaces as the domain sees them. */
export type MemberRole = 'owner' | 'admin' | 'member';
export type Plan = 'free' | 'starter' | 'pro';
export const PLANS: readonly Plan[] = ['free', 'starter', 'pro'];

export interface User {
  id: string;
  email: string;
  name: string;
  createdAt: number;
}

export interface Organization {
  id: string;
  name: string;
  createdAt: number;
}

/** Monetary ceilings per UTC period, integer millicents; null = no ceiling. */
export interface BudgetCeilings {
  dailyMillicents: number | null;
  weeklyMillicents: number | null;
  monthlyMillicents: number | null;
}

/** Whether any ceiling is set (then admission sums the owner's spending per period). */
export function hasBudgetCeilings(b: BudgetCeilings | null | undefined): boolean {
  return !!b && (b.dailyMillicents != null || b.weeklyMillicents != null || b.monthlyMillicents != null);
}

export interface LimitOverrides {
  pointsPerMinute?: number;
  pointsPerMonth?: number;
  runningJobs?: number;
  waitingJobs?: number;
  streams?: number;
  activeKeys?: number;
}

export interface Workspace {
  id: string;
  name: string;
  plan: Plan;
  ownerUserId: string | null;
  organizationId: string | null;
  limitOverrides: LimitOverrides;
  budgets: BudgetCeilings;
  /** Spendable credits below which the workspace gets `credits.low` (modules/alerts); null: off. */
  lowCreditsMillicents: number | null;
  createdAt: number;
  updatedAt: number;
}
