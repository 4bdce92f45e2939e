/** GET /v1/usage/history (issue 36): usage points and 429s per UTC minute, hour or day, by key or operation. */
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { envelopeSchema, ok } from '../../http/envelope.js';
import { WorkspaceHeaders } from '../../http/schemas.js';
import { getUsageHistory, HISTORY_GROUPS } from './history-service.js';

const TimeParam = (what: string) => Type.String({ minLength: 1, maxLength: 40, description: `${what}: an RFC 3339 date-time or a date (YYYY-MM-DD, midnight UTC), rounded out to whole UTC buckets.` });

export const UsageHistoryQuerySchema = Type.Object(
  {
    bucket: Type.Optional(Type.Union([Type.Literal('minute'), Type.Literal('hour'), Type.Literal('day')], { description: 'minute (the last 24 hours), hour (the last 61 days; default) or day.' })),
    from: Type.Optional(TimeParam('Start (inclusive); default 60 minutes, 24 hours or 31 days before `to`')),
    to: Type.Optional(TimeParam('End (exclusive); default the end of the current bucket')),
    groupBy: Type.Optional(Type.Array(Type.Union(HISTORY_GROUPS.map((g) => Type.Literal(g))), { maxItems: 2, description: 'Repeatable: keyId, operation.' })),
  },
  { additionalProperties: false },
);

const Refused = Type.Record(Type.String(), Type.Integer(), { description: '429 answers by their details.limit (POINTS_MINUTE, POINTS_MONTH, BUDGET_…, WAITING_JOBS, STREAMS …).' });
const HistoryLine = Type.Object({
  keyId: Type.Optional(Type.String()),
  operation: Type.Optional(Type.String({ description: 'The operation of a run or retry; `replay` and `refusal` for their one point; else the endpoint (`GET /v1/balance`).' })),
  points: Type.Integer(),
  refused: Refused,
});
export const UsageHistorySchema = Type.Object({
  livemode: Type.Boolean({ description: 'true: live usage; false: test mode usage (a test key reads its own mode).' }),
  bucket: Type.String(),
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  groupBy: Type.Array(Type.String()),
  buckets: Type.Array(Type.Object({ start: Type.String({ format: 'date-time' }), end: Type.String({ format: 'date-time' }), points: Type.Integer(), refused: Refused, lines: Type.Array(HistoryLine) })),
  totals: Type.Object({ points: Type.Integer(), refused: Refused, lines: Type.Array(HistoryLine) }),
});

export async function usageHistoryRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  app.get<{ Querystring: Static<typeof UsageHistoryQuerySchema> }>(
    '/v1/usage/history',
    {
      schema: {
        tags: ['usage'],
        summary: 'Usage points and 429s per UTC minute, hour or day, by key or operation',
        headers: WorkspaceHeaders,
        querystring: UsageHistoryQuerySchema,
        response: { 200: envelopeSchema(UsageHistorySchema) },
      },
      config: { meta: { code: 'PUBLIC_USAGE_HISTORY_GET', message: 'Usage history read.', auth: 'key', scope: 'usage:read', points: 1 } },
    },
    async (request) => {
      const auth = requireAuth(request);
      return ok(request, await getUsageHistory(deps, auth.workspace.id, request.query));
    },
  );
}
