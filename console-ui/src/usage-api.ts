/** The console's Usage page endpoints (src/console/routes-usage.ts) and what they answer: the public API's figures. */
import { request, type KeyMode } from './api.js';

export interface Allocation {
  id: string;
  remainingMillicents: number;
  expiresAt: string | null;
  provenance: string;
  createdAt: string;
}

export interface Balance {
  workspaceId: string;
  /** false for the test balance. */
  livemode: boolean;
  totalMillicents: number;
  reservedMillicents: number;
  spendableMillicents: number;
  allocations: Allocation[];
  nextCursor: string | null;
}

export interface LedgerEntry {
  id: string;
  type: string;
  amountMillicents: number;
  toolSlug: string | null;
  jobId: string | null;
  executionOrigin: string | null;
  createdAt: string;
  keyId: string | null;
  operationId: string | null;
}

export interface CostLine {
  type: 'usage' | 'refund' | 'debit' | 'expiration';
  operationId?: string | null;
  keyId?: string | null;
  executionOrigin?: string | null;
  costMillicents: number;
  entries: number;
}

export interface CostReport {
  bucket: string;
  from: string;
  to: string;
  groupBy: string[];
  buckets: { start: string; end: string; costMillicents: number; lines: CostLine[] }[];
  totals: { costMillicents: number; byType: Record<string, number>; lines: CostLine[] };
}

export interface HistoryLine {
  keyId?: string;
  operation?: string;
  points: number;
  refused: Record<string, number>;
}

export interface UsageHistory {
  bucket: string;
  from: string;
  to: string;
  groupBy: string[];
  buckets: { start: string; end: string; points: number; refused: Record<string, number>; lines: HistoryLine[] }[];
  totals: { points: number; refused: Record<string, number>; lines: HistoryLine[] };
}

export interface Budget {
  scope: 'key' | 'workspace';
  period: 'day' | 'week' | 'month';
  limitMillicents: number;
  spentMillicents: number;
  reservedMillicents: number;
  resetsAt: string;
}

export interface UsageSummary {
  workspaceId: string;
  plan: string;
  now: string;
  points: { minuteLimit: number; minuteUsed: number; minuteResetsAt: string; monthlyLimit: number; monthlyUsed: number; monthlyResetsAt: string };
  workspaceBudgets: Budget[];
  keyBudgets: { keyId: string; prefix: string; budgets: Budget[] }[];
  canSeeKeys: boolean;
}

export interface Notification {
  id: string;
  workspaceId: string;
  kind: string;
  webhookId: string | null;
  message: string;
  createdAt: string;
  details: Record<string, unknown>;
}

type Query = Record<string, string | string[] | undefined>;

function path(workspaceId: string, what: string, query: Query = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    for (const x of Array.isArray(v) ? v : [v]) q.append(k, x);
  }
  const s = q.toString();
  return `/workspaces/${encodeURIComponent(workspaceId)}/${what}${s ? `?${s}` : ''}`;
}

/** The `mode` query of a read: `test` for the test mode's figures; nothing for live (the server's default). */
const modeParam = (mode: KeyMode) => (mode === 'test' ? 'test' : undefined);

export const usageApi = {
  balance: (workspaceId: string, cursor?: string, mode: KeyMode = 'live') => request<Balance>('GET', path(workspaceId, 'balance', { limit: '100', cursor, mode: mode === 'test' ? 'test' : undefined })),
  /** Owners and admins: make-believe credits for the test balance (never live ones). */
  addTestCredits: (workspaceId: string, amountMillicents: number) =>
    request<{ allocation: Allocation & { amountMillicents: number; livemode: boolean }; balance: Balance }>('POST', path(workspaceId, 'test-credits'), { amountMillicents }),
  transactions: (workspaceId: string, cursor?: string, mode: KeyMode = 'live') => request<{ items: LedgerEntry[]; nextCursor: string | null }>('GET', path(workspaceId, 'transactions', { limit: '25', cursor, mode: modeParam(mode) })),
  costs: (workspaceId: string, query: { bucket: 'hour' | 'day' | 'month'; from?: string; to?: string; groupBy?: string[] }, mode: KeyMode = 'live') => request<CostReport>('GET', path(workspaceId, 'costs', { ...query, mode: modeParam(mode) })),
  history: (workspaceId: string, query: { bucket: 'minute' | 'hour' | 'day'; from?: string; to?: string; groupBy?: string[] }, mode: KeyMode = 'live') => request<UsageHistory>('GET', path(workspaceId, 'usage/history', { ...query, mode: modeParam(mode) })),
  summary: (workspaceId: string, mode: KeyMode = 'live') => request<UsageSummary>('GET', path(workspaceId, 'usage', { mode: modeParam(mode) })),
  notifications: (workspaceId: string, cursor?: string) => request<{ items: Notification[]; nextCursor: string | null }>('GET', path(workspaceId, 'notifications', { limit: '25', cursor })),
};

/** The UTC calendar month holding `iso` (the service's clock): its first day and the next month's, as dates. */
export function monthOf(iso: string): { from: string; to: string; label: string } {
  const d = new Date(iso);
  const from = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  const to = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  const day = (x: Date) => x.toISOString().slice(0, 10);
  return { from: day(from), to: day(to), label: from.toLocaleDateString('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' }) };
}

/** The most test credits one grant of an owner adds (the API's bound): 100,000,000 millicents, 1,000 dollars. */
export const MAX_TEST_GRANT_MILLICENTS = 100_000_000;

/** A dollar amount typed in the form as whole millicents (1 dollar = 100,000 millicents); NaN when it is not a number. */
export function dollarsToMillicents(text: string): number {
  const t = text.trim();
  if (!/^\d+(\.\d+)?$/.test(t)) return Number.NaN;
  return Math.round(Number(t) * 100_000);
}
