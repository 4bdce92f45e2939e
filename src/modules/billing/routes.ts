/** GET /v1/balance and GET /v1/transactions. */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { envelopeSchema, ok } from '../../http/envelope.js';
import { PageQuerySchema, type PageQuery } from '../../http/pagination.js';
import { WorkspaceHeaders } from '../../http/schemas.js';
import { BalanceSchema, presentBalance, presentTransaction, TransactionListSchema } from './present.js';
import { toIso } from '../../lib/clock.js';
import { exportLedger, getBalance, listTransactions } from './service.js';
import { csvRow, sendCsv, wantsCsv } from '../costs/csv.js';
import { invalidField, parseTime } from '../costs/range.js';
import type { LedgerRange } from './store.js';

const TransactionsQuerySchema = Type.Object(
  {
    ...PageQuerySchema.properties,
    from: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'Only entries created at or after this time (RFC 3339 date-time or YYYY-MM-DD, UTC).' })),
    to: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'Only entries created before this time (RFC 3339 date-time or YYYY-MM-DD, UTC).' })),
    format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')], { description: 'csv: every entry of the range, oldest first, as streamed CSV (same as Accept: text/csv); limit and cursor do not apply.' })),
  },
  { additionalProperties: false },
);
type TransactionsQuery = PageQuery & { from?: string; to?: string; format?: 'json' | 'csv' };

export const LEDGER_CSV_COLUMNS = ['id', 'createdAt', 'type', 'amountMillicents', 'toolSlug', 'operationId', 'keyId', 'jobId', 'executionOrigin'];

function ledgerRangeOf(query: TransactionsQuery): LedgerRange {
  const from = query.from === undefined ? undefined : parseTime('from', query.from);
  const to = query.to === undefined ? undefined : parseTime('to', query.to);
  if (from !== undefined && to !== undefined && to <= from) throw invalidField('to', 'must be later than from');
  return { from, to };
}

export async function billingRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  app.get<{ Querystring: PageQuery }>(
    '/v1/balance',
    {
      schema: { tags: ['billing'], summary: 'Credit balance and allocations', headers: WorkspaceHeaders, querystring: PageQuerySchema, response: { 200: envelopeSchema(BalanceSchema) } },
      config: { meta: { code: 'PUBLIC_BALANCE_GET', message: 'Balance read.', auth: 'key', scope: 'billing:read', points: 2 } },
    },
    async (request) => {
      const auth = requireAuth(request);
      const b = await getBalance(deps, auth.workspace.id, { limit: request.query.limit ?? 25, cursor: request.query.cursor });
      return ok(request, presentBalance(b));
    },
  );

  app.get<{ Querystring: TransactionsQuery }>(
    '/v1/transactions',
    {
      schema: {
        tags: ['billing'],
        summary: 'Credit transaction ledger, newest first',
        description: '`Accept: text/csv` or `format=csv` streams every entry of the range (`from`, `to`) as CSV, oldest first.',
        headers: WorkspaceHeaders,
        querystring: TransactionsQuerySchema,
        response: { 200: envelopeSchema(TransactionListSchema) },
      },
      config: { meta: { code: 'PUBLIC_TRANSACTIONS_LIST', message: 'Transactions listed.', auth: 'key', scope: 'billing:read', points: 2 } },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const range = ledgerRangeOf(request.query);
      if (wantsCsv(request, request.query.format)) {
        async function* rows() {
          for await (const chunk of exportLedger(deps, auth.workspace.id, range)) {
            yield chunk.map((t) => csvRow([t.id, toIso(t.createdAt), t.type, t.amountMillicents, t.toolSlug, t.operationId ?? null, t.keyId, t.jobId, t.executionOrigin]));
          }
        }
        return sendCsv(reply, 'transactions.csv', LEDGER_CSV_COLUMNS, rows());
      }
      const page = await listTransactions(deps, auth.workspace.id, { limit: request.query.limit ?? 25, cursor: request.query.cursor }, range);
      return ok(request, { items: page.items.map(presentTransaction), nextCursor: page.nextCursor });
    },
  );
}
