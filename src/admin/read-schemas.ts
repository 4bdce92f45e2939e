/**
 * Schemas of the operator's reads and changes (decisions.md section 6, issue 19): queries, the
 * change bodies (key update and roll, credit adjustment) and the shapes of what is shown. Every
 * shape lists its fields, so serialisation drops anything else: no secret, hash or sealed value
 * can leave even if a row carried one.
 */
import { Type, type Static } from 'typebox';
import { Millicents, NullableTimestamp, Timestamp, Uuid } from '../http/schemas.js';
import { SCOPES, TRANSPORTS } from '../modules/auth/scopes.js';
import { MAX_ROLL_OVERLAP_SECONDS } from '../modules/auth/keys.js';
import { OPERATION_IDS } from '../operations/ids.js';
import { AdminWorkspaceSchema, BudgetsBody, KeySchema, LimitsSchema, MemberSchema, OrganizationSchema, UserSchema } from './schemas.js';

const strict = { additionalProperties: false } as const;
const NullableString = Type.Union([Type.String(), Type.Null()]);
const NullableInteger = Type.Union([Type.Integer(), Type.Null()]);
const NextCursor = Type.Union([Type.String(), Type.Null()]);

/** limit 1..100 (default 25) and an opaque cursor, as the public lists take. */
export const AdminPageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  strict,
);
export type AdminPage = Static<typeof AdminPageQuery>;
export const EmptyQuery = Type.Object({}, strict);
export const WebhookParams = Type.Object({ id: Uuid, webhookId: Uuid }, strict);

export const page = <T extends Parameters<typeof Type.Array>[0]>(item: T) => Type.Object({ items: Type.Array(item), nextCursor: NextCursor });

// ---- changes --------------------------------------------------------------------------------

export const UpdateKeyBody = Type.Object(
  {
    scopes: Type.Optional(Type.Array(Type.Enum(SCOPES), { minItems: 1, uniqueItems: true })),
    operations: Type.Optional(Type.Array(Type.Enum(OPERATION_IDS), { uniqueItems: true })),
    transports: Type.Optional(Type.Array(Type.Enum(TRANSPORTS), { minItems: 1, uniqueItems: true })),
    expiresAt: Type.Optional(Type.Union([Timestamp, Type.Null()])),
    ipRanges: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 64 }), { maxItems: 100 })),
    budgets: Type.Optional(BudgetsBody),
  },
  { ...strict, minProperties: 1 },
);
export type UpdateKeyRequest = Static<typeof UpdateKeyBody>;

export const RollKeyBody = Type.Object({ overlapSeconds: Type.Integer({ minimum: 0, maximum: MAX_ROLL_OVERLAP_SECONDS }) }, strict);

const NonZeroMillicents = Type.Union([
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: -1 }),
]);
export const AdjustCreditsBody = Type.Object(
  {
    amountMillicents: NonZeroMillicents,
    reason: Type.String({ minLength: 1, maxLength: 500, pattern: '^[^\\u0000\\uD800-\\uDFFF]*$' }),
    provenance: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9_-]*$' })),
    expiresAt: Type.Optional(Type.Union([Timestamp, Type.Null()])),
  },
  strict,
);
export type AdjustCreditsRequest = Static<typeof AdjustCreditsBody>;

// ---- shapes ---------------------------------------------------------------------------------

export const BudgetUsageSchema = Type.Object({
  scope: Type.String(),
  period: Type.String(),
  limitMillicents: Millicents,
  spentMillicents: Millicents,
  reservedMillicents: Millicents,
  resetsAt: Timestamp,
});
export const BalanceTotalsSchema = Type.Object({ totalMillicents: Millicents, reservedMillicents: Millicents, spendableMillicents: Millicents });

export const UserDetailSchema = Type.Object({
  user: UserSchema,
  memberships: Type.Array(Type.Object({ organizationId: Uuid, name: Type.String(), role: Type.String() })),
  workspaceIds: Type.Array(Uuid),
});
export const OrganizationDetailSchema = Type.Object({
  organization: OrganizationSchema,
  members: Type.Array(Type.Object({ ...MemberSchema.properties, email: Type.String(), name: Type.String(), createdAt: Timestamp })),
  workspaceIds: Type.Array(Uuid),
});
const Ceilings = Type.Object({
  dailyMillicents: Type.Union([Millicents, Type.Null()]),
  weeklyMillicents: Type.Union([Millicents, Type.Null()]),
  monthlyMillicents: Type.Union([Millicents, Type.Null()]),
});
export const WorkspaceDetailSchema = Type.Object({
  workspace: AdminWorkspaceSchema,
  limits: LimitsSchema,
  limitOverrides: Type.Object({}, { additionalProperties: Type.Integer() }),
  budgets: Ceilings,
  budgetUsage: Type.Array(BudgetUsageSchema),
  balance: BalanceTotalsSchema,
});
export const KeyDetailSchema = Type.Object({ key: KeySchema, budgetUsage: Type.Array(BudgetUsageSchema) });

const AdminJobFields = {
  id: Uuid,
  workspaceId: Uuid,
  keyId: Type.Union([Uuid, Type.Null()]),
  operationId: Type.String(),
  toolSlug: Type.String(),
  status: Type.String(),
  executionOrigin: NullableString,
  funding: Type.String({ description: 'credits or provider_key' }),
  provider: NullableString,
  model: NullableString,
  attempt: Type.Integer(),
  recoveries: Type.Integer(),
  stepsTotal: Type.Integer(),
  stepsDone: Type.Integer(),
  progress: Type.Object({ percentage: Type.Number() }),
  costMillicents: Millicents,
  maximumCostMillicents: Millicents,
  errorCode: NullableString,
  version: Type.Integer(),
  outputSha256: NullableString,
  createdAt: Timestamp,
  startedAt: NullableTimestamp,
  completedAt: NullableTimestamp,
  updatedAt: Timestamp,
  runAfter: Timestamp,
  leaseExpiresAt: NullableTimestamp,
};
export const AdminJobSchema = Type.Object(AdminJobFields);
export const AdminJobDetailSchema = Type.Object({ ...AdminJobFields, input: Type.Unknown() });

export const AdminTransactionSchema = Type.Object({
  id: Uuid,
  workspaceId: Uuid,
  type: Type.String(),
  amountMillicents: Millicents,
  allocationId: Type.Union([Uuid, Type.Null()]),
  keyId: Type.Union([Uuid, Type.Null()]),
  toolSlug: NullableString,
  operationId: NullableString,
  jobId: Type.Union([Uuid, Type.Null()]),
  executionOrigin: NullableString,
  reason: NullableString,
  provenance: NullableString,
  createdAt: Timestamp,
});
export const AdminAllocationSchema = Type.Object({
  id: Uuid,
  workspaceId: Uuid,
  amountMillicents: Millicents,
  remainingMillicents: Millicents,
  expiresAt: NullableTimestamp,
  provenance: Type.String(),
  createdAt: Timestamp,
});
export const AdjustmentSchema = Type.Object({
  adjustment: Type.Object({
    workspaceId: Uuid,
    amountMillicents: Millicents,
    reason: Type.String(),
    provenance: Type.String(),
    allocation: Type.Union([AdminAllocationSchema, Type.Null()]),
    transactions: Type.Array(AdminTransactionSchema),
  }),
  balance: BalanceTotalsSchema,
});

export const AdminDeliverySchema = Type.Object({
  id: Uuid,
  webhookId: Uuid,
  eventId: Uuid,
  status: Type.String(),
  attempts: Type.Integer(),
  replayCount: Type.Integer(),
  lastStatusCode: NullableInteger,
  lastErrorCode: NullableString,
  nextAttemptAt: Timestamp,
  createdAt: Timestamp,
  deliveredAt: NullableTimestamp,
});
export const AdminWebhookSchema = Type.Object({
  id: Uuid,
  workspaceId: Uuid,
  url: Type.String(),
  eventTypes: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  revokedAt: NullableTimestamp,
  recentDeliveries: Type.Array(AdminDeliverySchema),
});
export const ProviderKeyNameSchema = Type.Object({ id: Uuid, workspaceId: Uuid, provider: Type.String(), createdAt: Timestamp, updatedAt: Timestamp });
