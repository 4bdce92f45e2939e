/**
 * The job snapshot as the contract shapes it (spec "Job snapshot", decisions.md 1 "Job version"),
 * and what it must never hold: private provider settings, worker checkpoints and storage keys
 * (spec "Job output fragment": excluded from the output).
 */
import assert from 'node:assert/strict';

/**
 * The spec's table, plus `version` (decisions.md 1), `operationId` (the operation the job runs, as
 * queue items and the jobs list name it) and `livemode` (docs/decisions.md "Test mode").
 */
export const SNAPSHOT_FIELDS = [
  'id',
  'workspaceId',
  'livemode',
  'toolSlug',
  'operationId',
  'status',
  'executionOrigin',
  'progress',
  'output',
  'costMillicents',
  'maximumCostMillicents',
  'errorCode',
  'createdAt',
  'startedAt',
  'completedAt',
  'version',
].sort();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** Exactly the snapshot's fields, each of its type. */
export function assertSnapshotShape(s: any, what: string): void {
  assert.deepEqual(Object.keys(s).sort(), SNAPSHOT_FIELDS, `${what}: exactly the snapshot fields`);
  assert.match(s.id, UUID, what);
  assert.match(s.workspaceId, UUID, what);
  assert.equal(typeof s.livemode, 'boolean', what);
  assert.equal(typeof s.toolSlug, 'string', what);
  assert.ok(['pending', 'processing', 'completed', 'failed', 'cancelled'].includes(s.status), what);
  assert.ok(s.executionOrigin === null || ['web', 'api', 'mcp', 'system'].includes(s.executionOrigin), what);
  assert.deepEqual(Object.keys(s.progress), ['percentage'], what);
  assert.equal(typeof s.progress.percentage, 'number', what);
  assert.ok(s.output !== null && typeof s.output === 'object' && !Array.isArray(s.output), what);
  assert.ok(Number.isSafeInteger(s.costMillicents) && Number.isSafeInteger(s.maximumCostMillicents) && s.costMillicents <= s.maximumCostMillicents, what);
  assert.ok(s.errorCode === null || typeof s.errorCode === 'string', what);
  assert.match(s.createdAt, ISO, what);
  for (const k of ['startedAt', 'completedAt']) assert.ok(s[k] === null || ISO.test(s[k]), `${what}: ${k}`);
  assert.ok(Number.isSafeInteger(s.version) && s.version >= 1, what);
}

/** None of `secrets` occurs in `text` (a serialized response), nor any of `keys` as a JSON property name. */
export function assertNothingPrivate(text: string, what: string, o: { secrets?: string[]; keys?: string[] }): void {
  for (const secret of o.secrets ?? []) assert.equal(text.includes(secret), false, `${what} holds ${JSON.stringify(secret.slice(0, 80))}`);
  for (const key of o.keys ?? []) assert.equal(text.includes(JSON.stringify(key) + ':'), false, `${what} holds a property ${key}`);
}

/** Property names of worker and storage state that never belong in a public response. */
export const PRIVATE_KEYS = [
  'checkpoint',
  'checkpoint_json',
  'checkpointJson',
  'stepsDone',
  'steps_done',
  'attemptCost',
  'state',
  'leaseToken',
  'lease_token',
  'leaseOwner',
  'lease_owner',
  'storageKey',
  'storage_key',
  'input',
  'input_json',
  'apiKey',
  'apiKeyEnv',
  'baseUrl',
  'privateNetwork',
  'secret',
];
