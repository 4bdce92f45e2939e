/** Identifiers: UUIDv7 everywhere, so ids sort by creation time and serve as keyset cursors. */
import { v7, validate, version } from 'uuid';

export function newId(): string {
  return v7();
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for any syntactically valid UUID (of any version), as the spec's "UUID" fields. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value) && validate(value);
}

export function isUuidV7(value: string): boolean {
  return isUuid(value) && version(value) === 7;
}
