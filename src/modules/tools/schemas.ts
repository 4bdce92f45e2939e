/** The body of an operation request (POST /v1/estimates and POST /v1/runs). */
import { Type, type Static } from 'typebox';

export const OperationRequestBody = Type.Object(
  { operationId: Type.String({ minLength: 1, maxLength: 100 }), input: Type.Object({}, { additionalProperties: true }) },
  { additionalProperties: false },
);
export type OperationRequest = Static<typeof OperationRequestBody>;
