/**
 * The operator's cost reads (admin API and command line): the public cost query without its
 * `format` (the admin reads answer JSON), and the top spenders across workspaces.
 */
import { Type, type Static } from 'typebox';
import { CostQuerySchema } from '../modules/costs/routes.js';

const { format: _format, ...costQuery } = CostQuerySchema.properties;

export const AdminCostQuery = Type.Object(costQuery, { additionalProperties: false });

export const TopSpendersQuery = Type.Object(
  {
    bucket: costQuery.bucket,
    from: costQuery.from,
    to: costQuery.to,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
  },
  { additionalProperties: false },
);
export const TopSpendersSchema = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  items: Type.Array(Type.Object({ workspaceId: Type.String(), usageMillicents: Type.Integer(), costMillicents: Type.Integer(), usageEntries: Type.Integer() })),
});

export type AdminCostQueryParams = Static<typeof AdminCostQuery>;
export type TopSpendersQueryParams = Static<typeof TopSpendersQuery>;
