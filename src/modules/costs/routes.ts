/** GET /v1/costs (issue 36): spending per UTC bucket, grouped by operation, key and origin; JSON or CSV. */
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { envelopeSchema, ok } from '../../http/envelope.js';
import { WorkspaceHeaders } from '../../http/schemas.js';
import { csvRow, sendCsv, wantsCsv } from './csv.js';
import { getCosts, type CostReport } from './service.js';
import { COST_KINDS, GROUP_FIELDS } from './store.js';
import { MAX_BUCKETS } from './range.js';

const TimeParam = (what: string) =>
  Type.String({ minLength: 1, maxLength: 40, description: `${what}: an RFC 3339 date-time or a date (YYYY-MM-DD, midnight UTC), rounded out to whole UTC buckets.` });

export const GroupField = Type.Union(GROUP_FIELDS.map((g) => Type.Literal(g)));

export const CostQuerySchema = Type.Object(
  {
    bucket: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('month')], { description: 'UTC bucket width (default day).' })),
    from: Type.Optional(TimeParam('Start of the range (inclusive); default the bucket width times 24 (hours), 31 (days) or 12 (months) before `to`')),
    to: Type.Optional(TimeParam('End of the range (exclusive); default the end of the current bucket')),
    groupBy: Type.Optional(
      Type.Array(GroupField, { maxItems: 3, description: 'Repeatable: operationId, keyId, executionOrigin. Every line is also split by type.' }),
    ),
    format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')], { description: 'csv: the lines as CSV (same as Accept: text/csv).' })),
  },
  { additionalProperties: false },
);
export type CostQueryParams = Static<typeof CostQuerySchema>;

const Nullable = Type.Union([Type.String(), Type.Null()]);
export const CostLineSchema = Type.Object({
  type: Type.Union(COST_KINDS.map((k) => Type.Literal(k)), {
    description: 'usage (spending by jobs), refund (an operator adjustment adding credits), debit (an operator adjustment taking credits), expiration (credits expired unused).',
  }),
  operationId: Type.Optional(Nullable),
  keyId: Type.Optional(Nullable),
  executionOrigin: Type.Optional(Nullable),
  costMillicents: Type.Integer({ description: 'Minus the sum of the ledger entries of the line: positive for spending, negative for refunds.' }),
  entries: Type.Integer({ description: 'Ledger entries summed.' }),
});

export const CostReportSchema = Type.Object({
  livemode: Type.Boolean({ description: 'true: the live spending; false: the test mode spending (a test key reads its own mode).' }),
  bucket: Type.String(),
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  groupBy: Type.Array(Type.String()),
  buckets: Type.Array(Type.Object({ start: Type.String({ format: 'date-time' }), end: Type.String({ format: 'date-time' }), costMillicents: Type.Integer(), lines: Type.Array(CostLineSchema) })),
  totals: Type.Object({
    costMillicents: Type.Integer(),
    byType: Type.Object(Object.fromEntries(COST_KINDS.map((k) => [k, Type.Integer()]))),
    lines: Type.Array(CostLineSchema),
  }),
});

export const COST_CSV_COLUMNS = ['bucketStart', 'bucketEnd', 'type', ...GROUP_FIELDS, 'costMillicents', 'entries'] as const;

/** The report's lines as CSV rows, bucket by bucket (all group columns; empty where not grouped or none). */
export async function* costCsvRows(report: CostReport): AsyncIterable<string[]> {
  for (const b of report.buckets) {
    yield b.lines.map((l) => csvRow([b.start, b.end, l.type, l.operationId, l.keyId, l.executionOrigin, l.costMillicents, l.entries]));
  }
}

export async function costRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  app.get<{ Querystring: CostQueryParams }>(
    '/v1/costs',
    {
      schema: {
        tags: ['billing'],
        summary: 'Costs per UTC bucket, grouped by operation, key or execution origin',
        description:
          `Spending from the ledger in whole UTC buckets (at most ${MAX_BUCKETS.hour} hours, ${MAX_BUCKETS.day} days or ${MAX_BUCKETS.month} months), ` +
          'exact to the millicent: the totals equal minus the sum of the ledger entries of the range other than purchases. ' +
          'Refunds, debits and expirations are lines of their own. `Accept: text/csv` or `format=csv` answers the lines as CSV.',
        headers: WorkspaceHeaders,
        querystring: CostQuerySchema,
        response: { 200: envelopeSchema(CostReportSchema) },
      },
      config: { meta: { code: 'PUBLIC_COSTS_GET', message: 'Costs read.', auth: 'key', scope: 'billing:read', points: 2 } },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const report = await getCosts(deps, auth.workspace.id, request.query);
      if (wantsCsv(request, request.query.format)) return sendCsv(reply, `costs-${report.bucket}.csv`, COST_CSV_COLUMNS, costCsvRows(report));
      return ok(request, report);
    },
  );
}
