/**
 * The operator tool's cost and usage reads (issue 36): the admin API's reads of one workspace's
 * costs and usage history, and the top spenders across workspaces, checked with the admin API's
 * own query schemas and run through the same services.
 */
import { getTopSpenders, getWorkspaceCosts } from '../modules/costs/service.js';
import { getUsageHistory } from '../modules/usage/history-service.js';
import { UsageHistoryQuerySchema } from '../modules/usage/history-routes.js';
import { findWorkspace } from '../modules/accounts/store.js';
import { AppError } from '../http/errors.js';
import { checked, int, single, type Command, type Values } from './cli-input.js';
import { AdminCostQuery, TopSpendersQuery, type AdminCostQueryParams, type TopSpendersQueryParams } from './cost-schemas.js';
import * as S from './schemas.js';

function command<I>(c: Command<I>): Command<unknown> {
  return c as unknown as Command<unknown>;
}

const workspaceOf = (v: Values) => checked(S.IdParams, { id: single(v.workspace, '--workspace') }, { id: '--workspace' }).id;
const RANGE_FLAGS = { bucket: '--bucket', from: '--from', to: '--to', groupBy: '--group' } as const;

type HistoryQuery = Parameters<typeof getUsageHistory>[2];

export const COST_COMMANDS: Record<string, Command<unknown>> = {
  'costs get': command({
    options: ['workspace', 'bucket', 'from', 'to', 'group'],
    parse: (v) => ({
      id: workspaceOf(v),
      query: checked(AdminCostQuery, { bucket: v.bucket, from: v.from, to: v.to, groupBy: v.group }, RANGE_FLAGS),
    }),
    run: (deps, { id, query }: { id: string; query: AdminCostQueryParams }) => getWorkspaceCosts(deps, id, query),
  }),
  'costs top-spenders': command({
    options: ['bucket', 'from', 'to', 'limit'],
    parse: (v) => checked(TopSpendersQuery, { bucket: v.bucket, from: v.from, to: v.to, limit: int(single(v.limit, '--limit')) }, { ...RANGE_FLAGS, limit: '--limit' }),
    run: (deps, query: TopSpendersQueryParams) => getTopSpenders(deps, query),
  }),
  'usage history': command({
    options: ['workspace', 'bucket', 'from', 'to', 'group'],
    parse: (v) => ({
      id: workspaceOf(v),
      query: checked(UsageHistoryQuerySchema, { bucket: v.bucket, from: v.from, to: v.to, groupBy: v.group }, RANGE_FLAGS) as HistoryQuery,
    }),
    run: async (deps, { id, query }: { id: string; query: HistoryQuery }) => {
      if (!(await findWorkspace(deps.db, id))) throw new AppError('NOT_FOUND', { message: 'No such workspace.' });
      return getUsageHistory(deps, id, query);
    },
  }),
};
