/** GET /v1/balance and GET /v1/transactions. */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { envelopeSchema, ok } from '../../http/envelope.js';
import { PageQuerySchema, type PageQuery } from '../../http/pagination.js';
import { Millicents, NullableTimestamp, Timestamp, Uuid, WorkspaceHeaders } from '../../http/schemas.js';
import { toIso } from '../../lib/clock.js';
import { getBalance, listTransactions } from './service.js';

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
});

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

  app.get<{ Querystring: PageQuery }>(
    '/v1/transactions',
    {
      schema: {
        tags: ['billing'],
        summary: 'Credit transaction ledger, newest first',
        headers: WorkspaceHeaders,
        querystring: PageQuerySchema,
        response: { 200: envelopeSchema(Type.Object({ items: Type.Array(TransactionSchema), nextCursor: NextCursor })) },
      },
      config: { meta: { code: 'PUBLIC_TRANSACTIONS_LIST', message: 'Transactions listed.', auth: 'key', scope: 'billing:read', points: 2 } },
    },
    async (request) => {
      const auth = requireAuth(request);
      const page = await listTransactions(deps, auth.workspace.id, { limit: request.query.limit ?? 25, cursor: request.query.cursor });
      return ok(request, {
        items: page.items.map((t) => ({
          id: t.id,
          type: t.type,
          amountMillicents: t.amountMillicents,
          toolSlug: t.toolSlug,
          jobId: t.jobId,
          executionOrigin: t.executionOrigin,
          createdAt: toIso(t.createdAt),
        })),
        nextCursor: page.nextCursor,
      });
    },
  );
}
