/**
 * Webhook signatures, the service's `Service-Signature` scheme: `t=<unix seconds>,v1=<hex>` where
 * v1 is HMAC-SHA256 over the exact bytes `<t>.<raw body>` keyed with the webhook secret as UTF-8
 * (the same scheme as Stripe's `Stripe-Signature`). A header may carry several v1 values (for
 * example while a secret rotates); one valid value is enough.
 *
 * verifyWebhook compares with WebCrypto's HMAC verify (constant time) before anything reads the
 * body, then checks the timestamp against the tolerance, and only then parses the event.
 */
import { WebhookVerificationError } from './errors.js';
import { toHex } from './hash.js';
import type { ServiceEvent } from './types.js';

export interface VerifyWebhookOptions {
  /** Largest allowed distance between `t` and the receiver's clock, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The receiver's clock in unix seconds (default: now). */
  nowSeconds?: number;
}

const encoder = new TextEncoder();
type HmacKey = Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>;
const keys = new Map<string, Promise<HmacKey>>();

function hmacKey(secret: string): Promise<HmacKey> {
  let key = keys.get(secret);
  if (!key) {
    key = globalThis.crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    if (keys.size > 100) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

function signedPayload(timestamp: string, body: string | Uint8Array): Uint8Array {
  const prefix = encoder.encode(`${timestamp}.`);
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  const out = new Uint8Array(prefix.byteLength + bytes.byteLength);
  out.set(prefix, 0);
  out.set(bytes, prefix.byteLength);
  return out;
}

function hexToBytes(hex: string): Uint8Array | undefined {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return undefined;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Parses `t=…,v1=…[,v1=…]` (other schemes ignored). */
export function parseSignatureHeader(header: string): { timestamp: string; signatures: string[] } | undefined {
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') timestamp = value;
    else if (key === 'v1') signatures.push(value);
  }
  if (timestamp === undefined || !/^\d{1,15}$/.test(timestamp) || signatures.length === 0) return undefined;
  return { timestamp, signatures };
}

/**
 * Verifies a webhook request and returns its event. `rawBody` must be the request body exactly
 * as received (a string or bytes, before any JSON parsing); `signatureHeader` the value of
 * `Service-Signature`. Throws WebhookVerificationError (reason: MISSING_SIGNATURE,
 * MALFORMED_SIGNATURE, SIGNATURE_MISMATCH, TIMESTAMP_OUT_OF_TOLERANCE, INVALID_BODY).
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  signatureHeader: string | string[] | null | undefined,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<ServiceEvent> {
  const header = Array.isArray(signatureHeader) ? signatureHeader.join(',') : signatureHeader;
  if (!header) throw new WebhookVerificationError('MISSING_SIGNATURE', 'No Service-Signature header.');
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new TypeError('verifyWebhook needs the raw body (string or bytes) exactly as received, not a parsed object');
  }
  const parsed = parseSignatureHeader(header);
  if (!parsed) throw new WebhookVerificationError('MALFORMED_SIGNATURE', 'The Service-Signature header is not `t=<unix seconds>,v1=<hex>`.');
  const key = await hmacKey(secret);
  const payload = signedPayload(parsed.timestamp, rawBody);
  let valid = false;
  for (const candidate of parsed.signatures) {
    const bytes = hexToBytes(candidate);
    // Every candidate is checked, so the time taken does not depend on which one matched.
    if (bytes && (await globalThis.crypto.subtle.verify('HMAC', key, bytes, payload))) valid = true;
  }
  if (!valid) throw new WebhookVerificationError('SIGNATURE_MISMATCH', 'No v1 signature matches the body and the secret.');
  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(parsed.timestamp)) > tolerance) {
    throw new WebhookVerificationError('TIMESTAMP_OUT_OF_TOLERANCE', `The signature timestamp is more than ${tolerance} s away from this clock.`);
  }
  try {
    return JSON.parse(typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody)) as ServiceEvent;
  } catch {
    throw new WebhookVerificationError('INVALID_BODY', 'The signed body is not JSON.');
  }
}

/** The `Service-Signature` value for `body` signed with `secret` at `timestampSeconds` (what the service sends). */
export async function signWebhook(body: string | Uint8Array, secret: string, timestampSeconds: number = Math.floor(Date.now() / 1000)): Promise<string> {
  const t = String(Math.floor(timestampSeconds));
  const mac = await globalThis.crypto.subtle.sign('HMAC', await hmacKey(secret), signedPayload(t, body));
  return `t=${t},v1=${toHex(new Uint8Array(mac))}`;
}
