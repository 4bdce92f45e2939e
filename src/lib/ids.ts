/**
 * Identifiers: UUIDv7 everywhere (RFC 9562), so ids sort by creation time and serve as keyset
 * cursors. One generator for entity ids and request ids: the 48-bit millisecond timestamp, then a
 * 32-bit counter (in rand_a and the top of rand_b) and 42 random bits fixed per process. Unique
 * within a process (the counter does not wrap within a millisecond) and across processes (the
 * random tail), monotonic within a process, and several times cheaper than a fully random v7.
 * Ids are names, not secrets: every read checks the caller's workspace, never the id's secrecy.
 */
import { randomBytes } from 'node:crypto';
import { validate, version } from 'uuid';

const processTail = randomBytes(6).readUIntBE(0, 6) % 2 ** 42;
/** The 64 possible last groups: 6 counter bits above the per-process random 42 bits. */
const tails = Array.from({ length: 64 }, (_, i) => (i * 2 ** 42 + processTail).toString(16).padStart(12, '0'));
let counter = randomBytes(4).readUInt32BE(0);
let lastMs = -1;
let timeGroups = '';

export function newId(): string {
  counter = (counter + 1) >>> 0;
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    const time = ms.toString(16).padStart(12, '0');
    timeGroups = `${time.slice(0, 8)}-${time.slice(8)}`;
  }
  const randA = (0x7000 | (counter >>> 20)).toString(16);
  const randB = (0x8000 | ((counter >>> 6) & 0x3fff)).toString(16);
  return `${timeGroups}-${randA}-${randB}-${tails[counter & 0x3f]}`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for any syntactically valid UUID (of any version), as the spec's "UUID" fields. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value) && validate(value);
}

export function isUuidV7(value: string): boolean {
  return isUuid(value) && version(value) === 7;
}
