/** Request and response schemas of the admin API (decisions.md section 4). */
import { Type, type Static } from 'typebox';
import { Millicents, NullableTimestamp, Timestamp, Uuid } from '../http/schemas.js';
import { SCOPES, TRANSPORTS } from '../modules/auth/scopes.js';
import { OPERATION_IDS } from '../operations/ids.js';

const strict = { additionalProperties: false } as const;
/**
 * Text stored as it is (names, provider keys): no NUL, which PostgreSQL cannot store, and no
 * unpaired surrogate, which UTF-8 cannot encode (it would be stored as U+FFFD, unlike what the
 * response shows). Patterns are compiled with the `u` flag, so a surrogate pair is one code point.
 */
const STORABLE_TEXT = '^[^\\u0000\\uD800-\\uDFFF]*$';
const NameSchema = Type.String({ minLength: 1, maxLength: 200, pattern: STORABLE_TEXT });
const PlanSchema = Type.Union([Type.Literal('free'), Type.Literal('starter'), Type.Literal('pro')]);
const RoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]);
const PositiveMillicents = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const NullablePositiveMillicents = Type.Union([PositiveMillicents, Type.Null()]);
/** The workspace's credits.low threshold (src/modules/alerts): spendable credits below it raise the alert; null turns it off. */
const LowCreditsField = Type.Optional(
  Type.Union([PositiveMillicents, Type.Null()], { description: 'credits.low fires when spendable credits fall below this many millicents (at most once per UTC day); null: off.' }),
);

const ID_PROPERTIES = new Set(['id', 'userId', 'ownerUserId', 'organizationId', 'webhookId']);
const canonicalId = (v: unknown) => (typeof v === 'string' ? v.toLowerCase().replace(/^urn:uuid:/, '') : v);

/**
 * The ids of a checked input in the form they are stored in: lower case, without the `urn:uuid:`
 * prefix the uuid format also accepts. UUIDs are case-insensitive (RFC 9562), as the public API's
 * X-Service-Workspace header is, so any spelling the schema accepts names the same row.
 */
export function canonicalIds<T>(value: T): T {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [name, v] of Object.entries(out)) {
    if (ID_PROPERTIES.has(name)) out[name] = canonicalId(v);
    else if (name === 'workspaceIds' && Array.isArray(v)) out[name] = v.map(canonicalId);
  }
  return out as T;
}

/** Path parameters (the command line tool checks its id options with the same schemas). */
export const IdParams = Type.Object({ id: Uuid }, strict);
export const MemberParams = Type.Object({ id: Uuid, userId: Uuid }, strict);
export const HostnameParams = Type.Object({ id: Uuid, hostname: Type.String({ minLength: 1, maxLength: 253 }) }, strict);
/** Actions without input: no body, or an empty object; anything else is a 400 like every admin body. */
export const EmptyBody = Type.Union([Type.Object({}, strict), Type.Null()]);

export const CreateUserBody = Type.Object(
  { email: Type.String({ format: 'email', maxLength: 320 }), name: NameSchema },
  strict,
);
export const CreateOrganizationBody = Type.Object({ name: NameSchema, ownerUserId: Uuid }, strict);
export const AddMemberBody = Type.Object({ userId: Uuid, role: RoleSchema }, strict);
export const CreateWorkspaceBody = Type.Object(
  {
    name: NameSchema,
    plan: PlanSchema,
    ownerUserId: Type.Optional(Uuid),
    organizationId: Type.Optional(Uuid),
    lowCreditsMillicents: LowCreditsField,
  },
  strict,
);
const LimitValue = Type.Union([Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()]);
export const BudgetsBody = Type.Object(
  {
    dailyMillicents: Type.Optional(NullablePositiveMillicents),
    weeklyMillicents: Type.Optional(NullablePositiveMillicents),
    monthlyMillicents: Type.Optional(NullablePositiveMillicents),
  },
  strict,
);
export const WorkspaceSettingsBody = Type.Object(
  {
    plan: Type.Optional(PlanSchema),
    limits: Type.Optional(
      Type.Object(
        {
          pointsPerMinute: Type.Optional(LimitValue),
          pointsPerMonth: Type.Optional(LimitValue),
          runningJobs: Type.Optional(LimitValue),
          waitingJobs: Type.Optional(LimitValue),
          streams: Type.Optional(LimitValue),
          activeKeys: Type.Optional(LimitValue),
        },
        strict,
      ),
    ),
    budgets: Type.Optional(BudgetsBody),
    lowCreditsMillicents: LowCreditsField,
  },
  { ...strict, minProperties: 1 },
);
/** A key's mode, or the balance a grant goes to (decisions.md "Test mode"); `live` when absent. */
const ModeSchema = Type.Union([Type.Literal('live'), Type.Literal('test')], { description: 'live (default) or test: test keys run on the simulated provider, paid from the test balance.' });
export const GrantCreditsBody = Type.Object(
  {
    amountMillicents: PositiveMillicents,
    expiresAt: Type.Optional(Type.Union([Timestamp, Type.Null()])),
    provenance: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9_-]*$' })),
    mode: Type.Optional(ModeSchema),
  },
  strict,
);
export const AddDomainBody = Type.Object({ hostname: Type.String({ minLength: 1, maxLength: 253 }) }, strict);
export const VerifyDomainBody = Type.Object(
  { method: Type.Union([Type.Literal('dns'), Type.Literal('http'), Type.Literal('operator')]) },
  strict,
);
export const ProviderKeyBody = Type.Object(
  { provider: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9_.-]*$' }), apiKey: Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\uD800-\\uDFFF]*$' }) },
  strict,
);
export const CreateKeyBody = Type.Object(
  {
    userId: Uuid,
    workspaceIds: Type.Array(Uuid, { minItems: 1, maxItems: 100, uniqueItems: true }),
    scopes: Type.Array(Type.Enum(SCOPES), { minItems: 1, uniqueItems: true }),
    operations: Type.Array(Type.Enum(OPERATION_IDS), { uniqueItems: true }),
    transports: Type.Array(Type.Enum(TRANSPORTS), { minItems: 1, uniqueItems: true }),
    expiresAt: Type.Optional(Type.Union([Timestamp, Type.Null()])),
    ipRanges: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 64 }), { maxItems: 100 })),
    budgets: Type.Optional(BudgetsBody),
    mode: Type.Optional(ModeSchema),
  },
  strict,
);

export type CreateUserInput = Static<typeof CreateUserBody>;
export type CreateOrganizationInput = Static<typeof CreateOrganizationBody>;
export type AddMemberInput = Static<typeof AddMemberBody>;
export type CreateWorkspaceInput = Static<typeof CreateWorkspaceBody>;
export type WorkspaceSettingsInput = Static<typeof WorkspaceSettingsBody>;
export type GrantCreditsInput = Static<typeof GrantCreditsBody>;
export type VerifyDomainInput = Static<typeof VerifyDomainBody>;
export type ProviderKeyInput = Static<typeof ProviderKeyBody>;
export type CreateKeyRequest = Static<typeof CreateKeyBody>;

export const UserSchema = Type.Object({ id: Uuid, email: Type.String(), name: Type.String(), createdAt: Timestamp });
export const OrganizationSchema = Type.Object({ id: Uuid, name: Type.String(), createdAt: Timestamp });
export const MemberSchema = Type.Object({ organizationId: Uuid, userId: Uuid, role: RoleSchema });
const Ceilings = Type.Object({
  dailyMillicents: Type.Union([Millicents, Type.Null()]),
  weeklyMillicents: Type.Union([Millicents, Type.Null()]),
  monthlyMillicents: Type.Union([Millicents, Type.Null()]),
});
export const AdminWorkspaceSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  plan: Type.String(),
  ownerUserId: Type.Union([Uuid, Type.Null()]),
  organizationId: Type.Union([Uuid, Type.Null()]),
  lowCreditsMillicents: Type.Union([Millicents, Type.Null()]),
  createdAt: Timestamp,
});
export const LimitsSchema = Type.Object({
  pointsPerMinute: Type.Integer(),
  pointsPerMonth: Type.Integer(),
  activeKeys: Type.Integer(),
  runningJobs: Type.Integer(),
  waitingJobs: Type.Integer(),
  streams: Type.Integer(),
});
export const SettingsSchema = Type.Object({ workspace: AdminWorkspaceSchema, limits: LimitsSchema, budgets: Ceilings });
export const AllocationSchema = Type.Object({
  id: Uuid,
  workspaceId: Uuid,
  livemode: Type.Boolean(),
  amountMillicents: Millicents,
  remainingMillicents: Millicents,
  expiresAt: NullableTimestamp,
  provenance: Type.String(),
  createdAt: Timestamp,
});
export const DomainSchema = Type.Object({
  workspaceId: Uuid,
  hostname: Type.String(),
  status: Type.String(),
  verificationToken: Type.String(),
  verifiedMethod: Type.Union([Type.String(), Type.Null()]),
  verifiedAt: NullableTimestamp,
  createdAt: Timestamp,
});
export const ProviderKeySchema = Type.Object({ id: Uuid, workspaceId: Uuid, provider: Type.String(), createdAt: Timestamp, updatedAt: Timestamp });
export const KeySchema = Type.Object({
  id: Uuid,
  userId: Uuid,
  prefix: Type.String(),
  workspaceIds: Type.Array(Uuid),
  scopes: Type.Array(Type.String()),
  operations: Type.Array(Type.String()),
  transports: Type.Array(Type.String()),
  ipRanges: Type.Array(Type.String()),
  expiresAt: NullableTimestamp,
  budgets: Ceilings,
  createdAt: Timestamp,
  revokedAt: NullableTimestamp,
  suspendedUntil: NullableTimestamp,
  /** When the secret the last roll replaced stops (or stopped) working; null for a key never rolled. */
  previousSecretExpiresAt: NullableTimestamp,
  mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
});

/** GET /admin/v1/workspaces/{id}/notifications: a bounded page, newest first. */
export const NotificationsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  strict,
);
export const NotificationSchema = Type.Object({
  id: Uuid,
  workspaceId: Uuid,
  kind: Type.String(),
  /** The failing webhook of a `webhook.failing` notification; null for other kinds. */
  webhookId: Type.Union([Uuid, Type.Null()]),
  message: Type.String(),
  createdAt: Timestamp,
  details: Type.Object({}, { additionalProperties: true }),
});

/** POST /admin/v1/users/{id}/sign-in-links: the one-time console link (the token is in the URL's fragment). */
export const SignInLinkSchema = Type.Object({ url: Type.String(), expiresAt: Timestamp });
/** `users sign-in-link --email E`: the user to sign in, by email. */
export const SignInLinkEmail = Type.Object({ email: Type.String({ format: 'email', maxLength: 320 }) }, { additionalProperties: false });
