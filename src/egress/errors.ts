/**
 * Maps whatever node or undici throws while talking to the network onto the EgressError
 * vocabulary (shared by the HTTP client and the TLS probe): no raw error escapes the egress layer.
 */
import { EgressError } from './types.js';

export const DNS_ERROR_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NODATA', 'EAI_NONAME', 'EAI_FAIL', 'ENODATA', 'ESERVFAIL']);
const TIMEOUT_ERROR_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

/** The first string `code` along an error's cause chain. */
export function errorCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function findEgressError(err: unknown): EgressError | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    if (current instanceof EgressError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Maps anything thrown while talking to the network onto the EgressError vocabulary. */
export function toEgressError(err: unknown): EgressError {
  const own = findEgressError(err);
  if (own) return own;
  const code = errorCode(err);
  if (code && TIMEOUT_ERROR_CODES.has(code)) return new EgressError('EGRESS_TIMEOUT', `timed out (${code})`);
  if (code && DNS_ERROR_CODES.has(code)) return new EgressError('EGRESS_DNS', `name resolution failed (${code})`);
  return new EgressError('EGRESS_NETWORK', `request failed (${code ?? 'unknown error'})`);
}
