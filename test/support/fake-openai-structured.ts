/**
 * The fake OpenAI server's rules for `response_format` on POST /v1/chat/completions (structured
 * output), written from the public reference independently of src/providers/openai/structured.ts:
 * "Create chat completion", response_format (https://platform.openai.com/docs/api-reference/chat/create):
 * `type` is text, json_object or json_schema; a json_schema has a `name` of a-z, A-Z, 0-9, _ and -
 * up to 64 characters and a `schema`. "Structured Outputs", Supported schemas
 * (https://platform.openai.com/docs/guides/structured-outputs): with `strict: true` the root is an
 * object and not anyOf; every object has `additionalProperties: false` and lists every property in
 * `required`; unions are anyOf (allOf, not, if/then/else and the like are not permitted; this fake
 * refuses oneOf too, which the guide does not list among the supported keywords). The API refuses
 * a schema breaking them with 400 invalid_request_error, param "response_format", naming the
 * context as `In context=('properties', 'edits'), …`.
 */

export interface FormatRefusal {
  message: string;
  param: string;
  code: string | null;
}

const NOT_PERMITTED = ['oneOf', 'allOf', 'not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'patternProperties'];

/** Why the API would refuse the request's response_format, or undefined. */
export function responseFormatRefusal(body: any): FormatRefusal | undefined {
  const format = body?.response_format;
  if (format === undefined) return undefined;
  const type = format?.type;
  if (!['text', 'json_object', 'json_schema'].includes(type)) {
    return { message: `Invalid value: '${String(type)}'. Supported values are: 'text', 'json_object', and 'json_schema'.`, param: 'response_format.type', code: 'invalid_value' };
  }
  if (type !== 'json_schema') return undefined;
  const spec = format.json_schema;
  if (typeof spec?.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(spec.name)) {
    return { message: "Invalid 'response_format.json_schema.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", param: 'response_format.json_schema.name', code: 'invalid_value' };
  }
  if (spec.strict !== true) return undefined;
  const problem = strictProblem(spec.schema, [], true);
  return problem ? { message: `Invalid schema for response_format '${spec.name}': ${problem}`, param: 'response_format', code: null } : undefined;
}

function context(path: string[]): string {
  return `In context=(${path.map((p) => `'${p}'`).join(', ')})`;
}

function strictProblem(schema: any, path: string[], root = false): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return `${context(path)}, schema must be a JSON Schema of 'type: "object"'.`;
  if (root && (schema.type !== 'object' || schema.anyOf !== undefined)) return `${context(path)}, schema must be a JSON Schema of 'type: "object"', got 'type: "${String(schema.type)}"'.`;
  for (const keyword of NOT_PERMITTED) if (schema[keyword] !== undefined) return `${context(path)}, '${keyword}' is not permitted.`;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('object') || schema.properties !== undefined) {
    if (schema.additionalProperties !== false) return `${context(path)}, 'additionalProperties' is required to be supplied and to be false.`;
    const keys = Object.keys(schema.properties ?? {});
    const required: unknown[] = Array.isArray(schema.required) ? schema.required : [];
    const missing = keys.filter((k) => !required.includes(k));
    if (missing.length > 0) return `${context(path)}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing[0]}'.`;
    for (const k of keys) {
      const inner = strictProblem(schema.properties[k], [...path, 'properties', k]);
      if (inner) return inner;
    }
  }
  if (schema.items !== undefined) {
    const inner = strictProblem(schema.items, [...path, 'items']);
    if (inner) return inner;
  }
  if (Array.isArray(schema.anyOf)) {
    for (const [i, s] of schema.anyOf.entries()) {
      const inner = strictProblem(s, [...path, 'anyOf', String(i)]);
      if (inner) return inner;
    }
  }
  return undefined;
}
