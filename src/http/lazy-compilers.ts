/**
 * Route schemas compiled on a route's first use, not at start-up (issue 38: start-up to ready
 * and the idle process). Fastify compiles a validator (Ajv) for each request part and a serializer
 * (fast-json-stringify) for each response status of every route when the app becomes ready: with
 * the public, admin and console APIs that was about a quarter of the CPU of a start-up, plus the
 * garbage it left, for routes most processes never serve (a ROLE=worker process serves none).
 * Here each compiler returns a stand-in that compiles the real function when the route is first
 * called and then only forwards to it; the answers are exactly those of the eager functions.
 *
 * A schema that cannot be compiled would now fail on its route's first request rather than at
 * start-up, so `compilePendingRouteSchemas()` compiles every stand-in not yet used: the test
 * suite calls it after building the app (test/http/route-schemas.test.ts).
 */
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';

const pending = new Set<() => unknown>();

/** Compiles every route schema whose route has not been called yet; returns how many. */
export function compilePendingRouteSchemas(): number {
  const all = [...pending];
  for (const compile of all) compile();
  return all.length;
}

type Validate = ((data: unknown) => boolean) & { errors?: unknown };

/** A validator compiler whose validators compile on their first call; `errors` is the real one's. */
export function lazyValidatorCompiler(compiler: FastifySchemaCompiler<unknown>): FastifySchemaCompiler<unknown> {
  return (route) => {
    let real: Validate | undefined;
    const compile = () => {
      pending.delete(compile);
      return (real ??= compiler(route) as Validate);
    };
    pending.add(compile);
    const validate: Validate = (data) => {
      const v = real ?? compile();
      const valid = v(data);
      validate.errors = v.errors;
      return valid;
    };
    return validate as ReturnType<FastifySchemaCompiler<unknown>>;
  };
}

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

/** Fastify's own serializer factory (fast-json-stringify), each serializer compiled on its first call. */
export const lazySerializerFactory: SerializerFactory = (externalSchemas, options) => {
  const build = SerializerSelector()(externalSchemas, options as Parameters<ReturnType<typeof SerializerSelector>>[1]);
  return (route) => {
    let real: ((doc: unknown) => string) | undefined;
    const compile = () => {
      pending.delete(compile);
      return (real ??= build(route as Parameters<typeof build>[0]));
    };
    pending.add(compile);
    return (doc: unknown) => (real ?? compile())(doc);
  };
};
