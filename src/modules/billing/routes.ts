/** GET /v1/balance and GET /v1/transactions. */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { envelopeSchema, ok } from '../../http/envelope.js';
import { PageQuerySchema, type PageQuery } from '../../http/pagination.js';
import { Millicents, NullableTimestamp, Timestamp, Uuid, WorkspaceHeaders } from '../../http/schemas.js';
import { toIso } from '../../lib/clock.js';
import { exportLedger, getBalance, listTransactions } from './service.js';
import { csvRow, sendCsv, wantsCsv } from '../costs/csv.js';
import { invalidField, parseTime } from '../costs/range.js';
import type { LedgerRange } from './store.js';

const NextCursor = Type.Union([Type.String(), Type.Null()]);

const BalanceSchema = Type.Object({
  workspaceId: Uuid,
  totalMillicents: Millicents,
  reservedMillicents: Millicents,
  spendableMillicents: Millicents,
  allocations: Type.Array(
    Type.Object({
      id: Uuid,
      remainingMillicents: Millicents,
      expiresAt: NullableTimestamp,
      provenance: Type.String(),
      createdAt: Timestamp,
    }),
  ),
  nextCursor: NextCursor,
});

const TransactionSchema = Type.Object({
  id: Uuid,
  type: Type.String({ description: 'purchase, usage, expiration or adjustment (an operator correction)' }),
  amountMillicents: Type.Integer({ description: 'Signed; negative for spending.' }),
  toolSlug: Type.Union([Type.String(), Type.Null()]),
  jobId: Type.Union([Uuid, Type.Null()]),
  executionOrigin: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  // Added fields (issue 36): who and what an entry of a job was for.
  keyId: Type.Union([Uuid, Type.Null()], { description: 'The API key whose job the entry belongs to; null for entries of no job.' }),
  operationId: Type.Union([Type.String(), Type.Null()], { description: 'The operation the job ran; null for entries of no job.' }),
});

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
      return ok(request, {
        ...b,
        allocations: b.allocations.map((a) => ({
          id: a.id,
          remainingMillicents: a.remainingMillicents,
          expiresAt: toIso(a.expiresAt),
          provenance: a.provenance,
          createdAt: toIso(a.createdAt),
        })),
      });
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
        response: { 200: envelopeSchema(Type.Object({ items: Type.Array(TransactionSchema), nextCursor: NextCursor })) },
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
      return ok(request, {
        items: page.items.map((t) => ({
          id: t.id,
          type: t.type,
          amountMillicents: t.amountMillicents,
          toolSlug: t.toolSlug,
          jobId: t.jobId,
          executionOrigin: t.executionOrigin,
          createdAt: toIso(t.createdAt),
          keyId: t.keyId,
          operationId: t.operationId ?? null,
        })),
        nextCursor: page.nextCursor,
      });
    },
  );
}
