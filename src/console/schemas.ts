/** Request and response schemas of the console API (/console/api), built from the admin API's. */
import { Type } from 'typebox';
import { Uuid } from '../http/schemas.js';
import * as S from '../admin/schemas.js';
import * as RS from '../admin/read-schemas.js';

const strict = { additionalProperties: false } as const;
const key = S.CreateKeyBody.properties;

/** A one-time link token as issued (43 base64url characters); anything else is 400. */
export const SignInBody = Type.Object({ token: Type.String({ minLength: 16, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }) }, strict);

/**
 * Everything the spec lets a creator choose, and the key's mode (`live` by default, or `test`:
 * decisions.md "Test mode"); the user and the workspace come from the session and the path.
 */
export const CreateKeyBody = Type.Object(
  { scopes: key.scopes, operations: key.operations, transports: key.transports, expiresAt: key.expiresAt, ipRanges: key.ipRanges, budgets: key.budgets, mode: key.mode },
  strict,
);
/** The admin API's bodies of a key change and a roll (decisions.md section 6). */
export const RollKeyBody = RS.RollKeyBody;
export const UpdateKeyBody = RS.UpdateKeyBody;

export const WorkspaceParams = Type.Object({ workspaceId: Uuid }, strict);
export const KeyParams = Type.Object({ workspaceId: Uuid, keyId: Uuid }, strict);

const RoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]);
export const ConsoleWorkspaceSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  plan: Type.String(),
  organizationId: Type.Union([Uuid, Type.Null()]),
  organizationName: Type.Union([Type.String(), Type.Null()]),
  role: RoleSchema,
  /** Whether this user may create, revoke and roll the workspace's keys (owner or admin). */
  canManageKeys: Type.Boolean(),
});
export const SessionSchema = Type.Object({ user: S.UserSchema, csrfToken: Type.String() });
/** What a key may be given (the create form's choices), from the same lists the schemas check. */
export const KeyOptionsSchema = Type.Object({ scopes: Type.Array(Type.String()), transports: Type.Array(Type.String()), operations: Type.Array(Type.String()) });
export const MeSchema = Type.Object({ user: S.UserSchema, csrfToken: Type.String(), workspaces: Type.Array(ConsoleWorkspaceSchema), keyOptions: KeyOptionsSchema });
export const KeyListSchema = Type.Object({ items: Type.Array(S.KeySchema) });
export const KeyWithSecretSchema = Type.Object({ key: S.KeySchema, secret: Type.String() });
export const KeyOnlySchema = Type.Object({ key: S.KeySchema });
export const SignedOutSchema = Type.Object({ signedOut: Type.Boolean() });
