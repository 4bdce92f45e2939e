/**
 * Test mode's data partition (decisions.md "Test mode"). Everything a test key does lives in the
 * workspace's test twin: a second row of `workspaces` whose id is the live workspace's id with the
 * UUID variant bits cleared (`10xx` → `00xx`). Every query already scoped by workspace id is then
 * scoped by mode too, so a live key never reads a test object and the reverse: the tenant
 * isolation holds for modes by construction. The mapping is pure, both ways, with no lookup:
 * responses show the public (live) workspace id and `livemode`.
 *
 * Live ids are RFC 9562 UUIDs (variant `10`, first hex digit of the fourth group 8–b); a twin's
 * digit is 0–3, which no id a client sends can have (`isUuid` refuses it).
 */

export type Mode = 'live' | 'test';

const VARIANT_AT = 19;
const TO_TEST: Readonly<Record<string, string>> = { '8': '0', '9': '1', a: '2', b: '3', A: '2', B: '3' };
const TO_LIVE: Readonly<Record<string, string>> = { '0': '8', '1': '9', '2': 'a', '3': 'b' };

/** The id of a live workspace's test twin. */
export function testScopeOf(liveWorkspaceId: string): string {
  const digit = TO_TEST[liveWorkspaceId[VARIANT_AT]!];
  if (digit === undefined) throw new Error(`not a live workspace id: ${liveWorkspaceId}`);
  return liveWorkspaceId.slice(0, VARIANT_AT) + digit + liveWorkspaceId.slice(VARIANT_AT + 1);
}

/** True unless the id is a test twin's. */
export function isLiveScope(workspaceId: string): boolean {
  return TO_LIVE[workspaceId[VARIANT_AT]!] === undefined;
}

/** The mode of a workspace scope. */
export function modeOfScope(workspaceId: string): Mode {
  return isLiveScope(workspaceId) ? 'live' : 'test';
}

/** The workspace id a client knows: the live id for a test twin, the id itself otherwise. */
export function publicWorkspaceId(workspaceId: string): string {
  const digit = TO_LIVE[workspaceId[VARIANT_AT]!];
  return digit === undefined ? workspaceId : workspaceId.slice(0, VARIANT_AT) + digit + workspaceId.slice(VARIANT_AT + 1);
}

/** The scope a key of `mode` works in within the live workspace `liveWorkspaceId`. */
export function scopeFor(liveWorkspaceId: string, mode: Mode): string {
  return mode === 'test' ? testScopeOf(liveWorkspaceId) : liveWorkspaceId;
}

/**
 * A workspace scope as a URL path segment that never shows a twin's id: a live id as it is, a
 * test twin as `test-` and its live id (signed media URLs; scopeOfUrlSegment reads it back).
 */
export function urlSegmentOfScope(workspaceId: string): string {
  return isLiveScope(workspaceId) ? workspaceId : `test-${publicWorkspaceId(workspaceId)}`;
}

/** The workspace scope a URL path segment of urlSegmentOfScope names; undefined when it names none. */
export function scopeOfUrlSegment(segment: string, isId: (id: string) => boolean): string | undefined {
  const test = segment.startsWith('test-');
  const id = test ? segment.slice(5) : segment;
  if (!isId(id)) return undefined;
  return test ? testScopeOf(id) : id;
}
