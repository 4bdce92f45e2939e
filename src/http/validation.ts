/**
 * Request validation. Bodies are validated strictly: no type coercion and no removal of unknown
 * properties (spec Rule 1 needs them rejected). Query strings, params and headers arrive as
 * strings, so they are coerced (`limit=5` → 5).
 */
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats ships CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: false, strict: false, removeAdditional: false, useDefaults: true, ...options });
  addFormats(ajv);
  return ajv;
}

const strictAjv = makeAjv({ coerceTypes: false });
const coercingAjv = makeAjv({ coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/** Validators for schemas checked outside routes (operation inputs). */
export function compileStrict(schema: object) {
  return strictAjv.compile(schema);
}
