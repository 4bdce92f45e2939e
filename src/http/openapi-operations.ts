/**
 * The per-operation part of /openapi.json: each Tool operation's input, result and request body
 * as named components, and documentation-only schemas for the routes whose body or result depends
 * on `operationId` (estimates, runs). The validating schemas of those routes stay generic so that
 * a wrong operationId or input keeps its specific error (UNKNOWN_OPERATION, INVALID_INPUT); only
 * the document says exactly what each operation takes and returns, so clients generated from it
 * (packages/sdk) get exact types.
 *
 * Components: `<operationId>.input`, `<operationId>.result` and `<operationId>.request`
 * (`{operationId: <const>, input: <operationId>.input}`); request bodies are a `oneOf` of the
 * requests with a discriminator on `operationId`.
 */
import type { TSchema } from 'typebox';
import { OPERATIONS } from '../operations/registry.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Component schemas of every operation: input, result and request body. */
export function operationComponentSchemas(): Record<string, TSchema> {
  return Object.fromEntries<TSchema>(
    OPERATIONS.flatMap((op) => [
      [`${op.id}.input`, op.inputSchema],
      [`${op.id}.result`, op.resultSchema],
      [
        `${op.id}.request`,
        {
          type: 'object',
          title: `${op.id} request`,
          properties: { operationId: { type: 'string', const: op.id }, input: ref(`${op.id}.input`) },
          required: ['operationId', 'input'],
          additionalProperties: false,
        } as unknown as TSchema,
      ],
    ]),
  );
}

/** The body of POST /v1/estimates and POST /v1/runs as documented: one request per operation. */
export function operationRequestBodySchema(): Record<string, unknown> {
  return {
    oneOf: OPERATIONS.map((op) => ref(`${op.id}.request`)),
    discriminator: { propertyName: 'operationId', mapping: Object.fromEntries(OPERATIONS.map((op) => [op.id, `#/components/schemas/${op.id}.request`])) },
    description: '`operationId` selects the input contract; exactly these two properties.',
  };
}

/** The `result` of a synchronous run as documented: the result of one of the synchronous operations. */
export function synchronousResultSchema(): Record<string, unknown> {
  const synchronous = OPERATIONS.filter((op) => !op.asynchronous);
  return {
    anyOf: [...synchronous.map((op) => ref(`${op.id}.result`)), { type: 'null' }],
    description: `The result of the synchronous operation (${synchronous.map((op) => op.id).join(', ')}); null when it failed (see errorCode).`,
  };
}
