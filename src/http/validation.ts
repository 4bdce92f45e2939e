/**
 * Request validation. Bodies are validated strictly: no type coercion and no removal of unknown
 * properties (spec Rule 1 needs them rejected). Query strings, params and headers arrive as
 * strings, so they are coerced (`limit=5` → 5), integers only from plain decimal digits.
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

type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };

/** Plain decimal integers: what a query or path integer may be written as. */
const DECIMAL_INTEGER = /^-?(0|[1-9][0-9]*)$/;

/** Names of the integer properties of a query or params schema. */
function integerProperties(schema: object): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.keys(properties).filter((name) => properties[name]!.type === 'integer');
}

/**
 * Ajv's coercion takes any string that JavaScript's `+` reads as an integer: `0x10`, `1e1`,
 * ` 5`, `2.0`. A query or path integer must be written in plain decimal digits (`limit=0x10` is
 * 400 INVALID_REQUEST, as an API that documents `limit` as an integer should answer), so those
 * values are checked as sent before Ajv coerces them.
 */
function withDecimalIntegers(validate: Validate, integers: string[]): Validate {
  const checked: Validate = (data) => {
    const values = (data ?? {}) as Record<string, unknown>;
    for (const name of integers) {
      const raw = values[name];
      for (const value of Array.isArray(raw) ? raw : [raw]) {
        if (typeof value === 'string' && !DECIMAL_INTEGER.test(value)) {
          checked.errors = [{ instancePath: `/${name}`, schemaPath: '#/type', keyword: 'type', params: { type: 'integer' }, message: 'must be an integer in decimal digits' }];
          return false;
        }
      }
    }
    const valid = validate(data);
    checked.errors = validate.errors;
    return valid;
  };
  return checked;
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  if (httpPart === 'body') return strictAjv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
  const validate = coercingAjv.compile(schema as object) as Validate;
  const integers = integerProperties(schema as object);
  return (integers.length > 0 ? withDecimalIntegers(validate, integers) : validate) as ReturnType<FastifySchemaCompiler<unknown>>;
};

/** Validators for schemas checked outside routes (operation inputs). */
export function compileStrict(schema: object) {
  return strictAjv.compile(schema);
}
