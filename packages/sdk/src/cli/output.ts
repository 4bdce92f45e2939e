/** How was-client prints: results on stdout (JSON with --json), progress and errors on stderr, and its exit codes. */
import { ConnectionError, IntegrityError, ServiceError, WebhookVerificationError } from '../errors.js';
import { UsageError } from './args.js';

/** Documented in docs/sdk.md ("Exit codes"). */
export const EXIT = {
  OK: 0,
  UNEXPECTED: 1,
  USAGE: 2,
  REFUSED: 3,
  AUTH: 4,
  NOT_FOUND: 5,
  LIMITED: 6,
  JOB_UNSUCCESSFUL: 7,
  VERIFICATION: 8,
  UNAVAILABLE: 9,
} as const;

export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT.USAGE;
  if (err instanceof IntegrityError || err instanceof WebhookVerificationError) return EXIT.VERIFICATION;
  if (err instanceof ConnectionError) return EXIT.UNAVAILABLE;
  if (err instanceof ServiceError) {
    if (err.status === 401 || err.status === 403) return EXIT.AUTH;
    if (err.status === 404) return EXIT.NOT_FOUND;
    if (err.status === 429) return EXIT.LIMITED;
    if (err.status >= 500) return EXIT.UNAVAILABLE;
    return EXIT.REFUSED;
  }
  return EXIT.UNEXPECTED;
}

export interface Printer {
  json: boolean;
  /** The command's result: JSON with --json, else `human(value)`. */
  result(value: unknown, human?: (value: any) => string): void;
  /** One line of a stream of results (events, deliveries): a JSON line with --json. */
  line(value: unknown, human: string): void;
  /** Text on stdout exactly as given, no line added (a reply as it streams). */
  text(chunk: string): void;
  /** A note for the user on stderr (never part of the result). */
  note(text: string): void;
  error(err: unknown): void;
}

export function createPrinter(json: boolean, stdout: NodeJS.WritableStream = process.stdout, stderr: NodeJS.WritableStream = process.stderr): Printer {
  return {
    json,
    result(value, human) {
      stdout.write(json || !human ? `${JSON.stringify(value, null, json ? 0 : 2)}\n` : `${human(value)}\n`);
    },
    line(value, human) {
      stdout.write(`${json ? JSON.stringify(value) : human}\n`);
    },
    text(chunk) {
      stdout.write(chunk);
    },
    note(text) {
      stderr.write(`${text}\n`);
    },
    error(err) {
      const e = err as Error;
      const body =
        err instanceof ServiceError
          ? { code: err.code, status: err.status, message: err.message, requestId: err.requestId, details: err.details, retryAfter: err.retryAfter }
          : { code: err instanceof UsageError ? 'USAGE' : (e?.name ?? 'Error'), message: e?.message ?? String(err) };
      stderr.write(json ? `${JSON.stringify({ error: body })}\n` : `was-client: ${body.message}${err instanceof ServiceError && err.requestId ? ` (request ${err.requestId})` : ''}\n`);
    },
  };
}
