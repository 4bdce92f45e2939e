/**
 * The JSON body parser of the REST and MCP endpoints. Fastify's default parser refuses a body
 * holding a "__proto__" key, or a "constructor" key with "prototype" (keys that could reach an
 * object's prototype), with the same error as malformed JSON. Here such a body, well-formed
 * otherwise, goes to `onPrototypeKeys` with its value read without those keys: REST refuses it
 * whole with an error that says why (prototypeKeyRefusal), MCP answers its tool calls with that
 * refusal and the rest of the message as usual. An empty body is no body.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppError } from './errors.js';

export type PrototypeKeys = (request: FastifyRequest, cleaned: unknown) => { refuse: AppError } | { value: unknown };

type Done = (err: Error | null, body?: unknown) => void;

export function jsonBodyParser(app: FastifyInstance, onPrototypeKeys: PrototypeKeys): (request: FastifyRequest, body: string, done: Done) => void {
  const strict = app.getDefaultJsonParser('error', 'error');
  const lenient = app.getDefaultJsonParser('remove', 'remove');
  // Registered with parseAs: 'string', so the body arrives as text.
  return (request, text, done) => {
    if (text.trim() === '') return done(null, undefined);
    strict(request, text, (err, value) => {
      if (!err) return done(null, value);
      lenient(request, text, (again, cleaned) => {
        if (again) return done(err, undefined);
        const outcome = onPrototypeKeys(request, cleaned);
        if ('refuse' in outcome) done(outcome.refuse, undefined);
        else done(null, outcome.value);
      });
    });
  };
}
