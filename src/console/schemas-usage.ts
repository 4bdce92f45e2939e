/**
 * Request and response schemas of the console's Usage page endpoints (routes-usage.ts): the
 * public API's own query schemas of GET /v1/costs and GET /v1/usage/history (without the CSV
 * format, which the page does not read), and the shapes of GET /v1/balance, /v1/transactions and
 * /v1/usage, field for field.
 */
import { Type } from 'typebox';
import { PageQuerySchema } from '../http/pagination.js';
import { Millicents, NullableTimestamp, Timestamp, Uuid } from '../http/schemas.js';
import * as AS from '../admin/schemas.js';
import { CostQuerySchema, CostReportSchema } from '../modules/costs/routes.js';
import { UsageHistoryQuerySchema, UsageHistorySchema } from '../modules/usage/history-routes.js';
import { BalanceSchema, TransactionListSchema } from '../modules/billing/present.js';

const strict = { additionalProperties: false } as const;
const NextCursor = Type.Union([Type.String(), Type.Null()]);

export const PageQuery = PageQuerySchema;

/** A test-mode read: `live` (default) or `test` (the workspace's test balance and ledger; decisions.md "Test mode"). */
const ModeQuery = Type.Union([Type.Literal('live'), Type.Literal('test')]);
/** The balance's and the ledger's pages: limit and cursor as on the public API, and the mode to read. */
export const ModePageQuery = Type.Object({ ...PageQuerySchema.properties, mode: Type.Optional(ModeQuery) }, strict);

/** The most test credits one grant of an owner adds: 100,000,000 millicents (1,000 dollars of make-believe credits). */
export const MAX_TEST_GRANT_MILLICENTS = 100_000_000;
/** POST …/test-credits: an amount for the test balance only; live credits are the operator's to grant. */
export const TestCreditsBody = Type.Object(
  { amountMillicents: Type.Integer({ minimum: 1, maximum: MAX_TEST_GRANT_MILLICENTS, description: 'Whole millicents, 1 to 100,000,000.' }) },
  strict,
);
export const TestCreditsGrantSchema = Type.Object({ allocation: AS.AllocationSchema, balance: BalanceSchema });

/** GET /v1/costs' query without `format` (the console reads JSON), and the mode to read. */
const { format: _costFormat, ...costQuery } = CostQuerySchema.properties;
export const CostsQuery = Type.Object({ ...costQuery, mode: Type.Optional(ModeQuery) }, strict);
export const CostsSchema = CostReportSchema;

/** GET /v1/usage/history's query, and the mode to read. */
export const HistoryQuery = Type.Object({ ...UsageHistoryQuerySchema.properties, mode: Type.Optional(ModeQuery) }, strict);
/** GET …/usage: the mode to read (points, budgets and the keys of that mode). */
export const UsageQuery = Type.Object({ mode: Type.Optional(ModeQuery) }, strict);
export const HistorySchema = UsageHistorySchema;

/** GET /v1/balance's answer and GET /v1/transactions' page: the public API's own (billing/present.ts). */
export { BalanceSchema, TransactionListSchema };

const Period = Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month')]);
/** A budget ceiling with what is spent in its current UTC period and held against it (GET /v1/usage's budgets). */
const BudgetSchema = Type.Object({
  scope: Type.Union([Type.Literal('key'), Type.Literal('workspace')]),
  period: Period,
  limitMillicents: Millicents,
  spentMillicents: Millicents,
  reservedMillicents: Millicents,
  resetsAt: Timestamp,
});

export const UsageSummarySchema = Type.Object({
  workspaceId: Uuid,
  plan: Type.String(),
  /** The service's clock: the page draws its month and its last hour from it, not from the browser's. */
  now: Timestamp,
  /** GET /v1/usage's points. */
  points: Type.Object({
    minuteLimit: Type.Integer(),
    minuteUsed: Type.Integer(),
    minuteResetsAt: Timestamp,
    monthlyLimit: Type.Integer(),
    monthlyUsed: Type.Integer(),
    monthlyResetsAt: Timestamp,
  }),
  /** The workspace's own ceilings. */
  workspaceBudgets: Type.Array(BudgetSchema),
  /** The ceilings of each unrevoked key of the workspace that has one (owners and admins only; a member sees no keys). */
  keyBudgets: Type.Array(Type.Object({ keyId: Uuid, prefix: Type.String(), budgets: Type.Array(BudgetSchema) })),
  /** Whether keyBudgets could be shown (owner or admin). */
  canSeeKeys: Type.Boolean(),
});

export const NotificationsQuery = AS.NotificationsQuery;
export const NotificationListSchema = Type.Object({ items: Type.Array(AS.NotificationSchema), nextCursor: NextCursor });
