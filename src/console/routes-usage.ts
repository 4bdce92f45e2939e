/**
 * The console's Usage page endpoints (issue 35, item 6), on the services of the public API's
 * money and usage reads (no second copy of a rule): getBalance (GET /v1/balance),
 * listTransactions (GET /v1/transactions), getCosts (GET /v1/costs), getUsageHistory
 * (GET /v1/usage/history), the usage meter and budgetReportsOf (GET /v1/usage), and the
 * workspace's notifications (listWorkspaceNotifications, the admin API's read: alerts of
 * decisions.md section 6 and the other account notifications). Every member of the workspace
 * reads them; the keys' budgets are shown to owners and admins only, since a member does not see
 * the workspace's keys. Another user's workspace is 404. The console's reads charge no usage
 * points. `mode=test` (every read) answers for the workspace's test mode, as the public API
 * answers a test key (decisions.md "Test mode"): the test balance, ledger, costs, usage history,
 * points, the workspace's test spending against its ceilings and the test keys' budgets.
 * Notifications are the live workspace's (the admin API's list, which names live workspaces
 * only). Owners and admins add test credits (never live ones: those are the operator's).
 *
 * - GET …/balance?limit&cursor&mode              CONSOLE_BALANCE_GET
 * - GET …/transactions?limit&cursor&mode         CONSOLE_TRANSACTIONS_LIST
 * - POST …/test-credits {amountMillicents}       CONSOLE_TEST_CREDITS_GRANT (owners and admins)
 * - GET …/costs?bucket&from&to&groupBy&mode      CONSOLE_COSTS_GET
 * - GET …/usage/history?bucket&from&to&groupBy&mode   CONSOLE_USAGE_HISTORY_GET
 * - GET …/usage?mode                             CONSOLE_USAGE_GET (points and every budget)
 * - GET …/notifications?limit&cursor             CONSOLE_NOTIFICATIONS_LIST
 * (… = /console/api/workspaces/{workspaceId})
 */
import { presentBalance, presentTransaction } from '../modules/billing/present.js';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { presentAllocation, presentNotification } from '../admin/present.js';
import { scopeFor } from '../lib/livemode.js';
import { testView } from '../modules/accounts/test-twins.js';
import { grantTestCredits } from './service-credits.js';
import { toIso, windowIso } from '../lib/clock.js';
import * as keyStore from '../modules/auth/store.js';
import { getBalance, listTransactions } from '../modules/billing/service.js';
import { checkCostQuery, getCosts } from '../modules/costs/service.js';
import { listWorkspaceNotifications } from '../modules/notifications/service.js';
import { checkHistoryQuery, getUsageHistory } from '../modules/usage/history-service.js';
import { resolveLimits } from '../modules/usage/plans.js';
import { budgetReportsOf, type BudgetReport } from '../modules/usage/service.js';
import { hasBudgetCeilings } from '../modules/accounts/types.js';
import { consoleRoute, sessionOf } from './routes-define.js';
import { WorkspaceParams } from './schemas.js';
import * as U from './schemas-usage.js';
import { KEY_PAGE_SIZE } from './service.js';
import { readableWorkspace } from './service-webhooks.js';

const ws = '/console/api/workspaces/:workspaceId';

const presentBudget = (b: BudgetReport) => ({ ...b, resetsAt: windowIso(b.resetsAt) });

export function registerUsageRoutes(app: FastifyInstance, deps: Deps): void {
  const visible = (r: Parameters<typeof sessionOf>[0], workspaceId: string) => readableWorkspace(deps, sessionOf(r).user.id, workspaceId);

  consoleRoute(app, 'GET', `${ws}/balance`, { code: 'CONSOLE_BALANCE_GET', message: 'Balance read.' }, { params: WorkspaceParams, querystring: U.ModePageQuery, response: U.BalanceSchema }, async (r) => {
    const { workspace } = await visible(r, r.params.workspaceId);
    const b = await getBalance(deps, scopeFor(workspace.id, r.query.mode ?? 'live'), { limit: r.query.limit ?? 25, cursor: r.query.cursor });
    return presentBalance(b);
  });

  consoleRoute(app, 'GET', `${ws}/transactions`, { code: 'CONSOLE_TRANSACTIONS_LIST', message: 'Ledger entries, newest first.' }, { params: WorkspaceParams, querystring: U.ModePageQuery, response: U.TransactionListSchema }, async (r) => {
    const { workspace } = await visible(r, r.params.workspaceId);
    const page = await listTransactions(deps, scopeFor(workspace.id, r.query.mode ?? 'live'), { limit: r.query.limit ?? 25, cursor: r.query.cursor });
    return { items: page.items.map(presentTransaction), nextCursor: page.nextCursor };
  });

  // Test credits: owners and admins add to the test balance only (service-credits.ts); the answer is the allocation and the test balance.
  consoleRoute(app, 'POST', `${ws}/test-credits`, { code: 'CONSOLE_TEST_CREDITS_GRANT', message: 'Test credits added.' }, { params: WorkspaceParams, body: U.TestCreditsBody, response: U.TestCreditsGrantSchema }, async (r) => {
    const allocation = await grantTestCredits(deps, sessionOf(r).user.id, r.params.workspaceId, r.body.amountMillicents);
    const balance = await getBalance(deps, allocation.workspaceId, { limit: 25 });
    return { allocation: presentAllocation(allocation), balance: presentBalance(balance) };
  });

  consoleRoute(app, 'GET', `${ws}/costs`, { code: 'CONSOLE_COSTS_GET', message: 'Costs read.' }, { params: WorkspaceParams, querystring: U.CostsQuery, response: U.CostsSchema }, async (r) => {
    // The query is checked first (400, as on the public API), then the workspace (404).
    const { mode, ...query } = r.query;
    checkCostQuery(deps, query);
    const { workspace } = await visible(r, r.params.workspaceId);
    return getCosts(deps, scopeFor(workspace.id, mode ?? 'live'), query);
  });

  consoleRoute(app, 'GET', `${ws}/usage/history`, { code: 'CONSOLE_USAGE_HISTORY_GET', message: 'Usage history read.' }, { params: WorkspaceParams, querystring: U.HistoryQuery, response: U.HistorySchema }, async (r) => {
    const { mode, ...query } = r.query;
    checkHistoryQuery(deps, query);
    const { workspace } = await visible(r, r.params.workspaceId);
    return getUsageHistory(deps, scopeFor(workspace.id, mode ?? 'live'), query);
  });

  consoleRoute(app, 'GET', `${ws}/usage`, { code: 'CONSOLE_USAGE_GET', message: 'Usage read.' }, { params: WorkspaceParams, querystring: U.UsageQuery, response: U.UsageSummarySchema }, async (r) => {
    const { workspace: live, canManage } = await visible(r, r.params.workspaceId);
    const mode = r.query.mode ?? 'live';
    // What a key of the mode sees: the workspace itself, or its test twin (same plan and ceilings).
    const workspace = mode === 'test' ? testView(live) : live;
    const now = deps.clock.now();
    const { minute, month } = await deps.usage.peek(workspace.id, resolveLimits(workspace));
    const keyBudgets = [];
    if (canManage) {
      for (const key of await keyStore.pageKeys(deps.db, { workspaceId: live.id }, undefined, KEY_PAGE_SIZE)) {
        if (key.mode !== mode) continue;
        if (key.revokedAt !== null || (key.expiresAt !== null && key.expiresAt <= now) || !hasBudgetCeilings(key.budgets)) continue;
        keyBudgets.push({ keyId: key.id, prefix: key.prefix, budgets: (await budgetReportsOf(deps, { key })).map(presentBudget) });
      }
    }
    return {
      workspaceId: live.id,
      plan: workspace.plan,
      now: toIso(now)!,
      points: {
        minuteLimit: minute.limit,
        minuteUsed: minute.used,
        minuteResetsAt: windowIso(minute.resetsAt),
        monthlyLimit: month.limit,
        monthlyUsed: month.used,
        monthlyResetsAt: windowIso(month.resetsAt),
      },
      workspaceBudgets: (await budgetReportsOf(deps, { workspace })).map(presentBudget),
      keyBudgets,
      canSeeKeys: canManage,
    };
  });

  consoleRoute(app, 'GET', `${ws}/notifications`, { code: 'CONSOLE_NOTIFICATIONS_LIST', message: 'Notifications, newest first.' }, { params: WorkspaceParams, querystring: U.NotificationsQuery, response: U.NotificationListSchema }, async (r) => {
    const { workspace } = await visible(r, r.params.workspaceId);
    const page = await listWorkspaceNotifications(deps, workspace.id, { limit: r.query.limit ?? 50, cursor: r.query.cursor });
    return { items: page.items.map(presentNotification), nextCursor: page.nextCursor };
  });
}
