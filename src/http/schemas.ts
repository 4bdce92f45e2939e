/** Schema pieces shared by many routes. */
import { Type } from 'typebox';

export const Uuid = Type.String({ format: 'uuid' });
/** `livemode` of every object a workspace owns (decisions.md "Test mode"). */
export const Livemode = Type.Boolean({ description: 'false for an object of test mode (made with a test key), true otherwise.' });
export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
export const Millicents = Type.Integer({ description: 'Integer millicents (1 cent = 1000 millicents).' });

/** The header every public endpoint requires; declared so it appears in the OpenAPI document. */
export const WorkspaceHeaders = Type.Object({
  'x-service-workspace': Type.String({ description: 'UUID of a workspace included in the API key.' }),
});

export const IdParams = (name: string) => Type.Object({ [name]: Uuid }, { additionalProperties: false });
