/**
 * The console's Jobs page endpoints under /console/api/workspaces/{workspaceId}/jobs: the list
 * (GET /v1/jobs' metadata, filtered by status and operation), a snapshot, the complete output in
 * fragments (the verified output path of GET /v1/jobs/{id}/output: same document, digest and
 * cursors), cancel and retry (the public API's services, rules and error codes). Every endpoint
 * takes `mode` (query, `live` by default; `test`: the workspace's test jobs, decisions.md "Test
 * mode"); a job of the other mode is 404, as on the public API.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { WorkspaceParams } from './schemas.js';
import * as R from './schemas-runs.js';
import { consoleRoute } from './routes-define.js';
import { actorOf } from './routes-runs.js';
import { consoleCancel, consoleJob, consoleJobOutput, consoleJobs, consoleRetry } from './runs-service.js';

export function registerJobRoutes(app: FastifyInstance, deps: Deps): void {
  const base = '/console/api/workspaces/:workspaceId/jobs';

  consoleRoute(app, 'GET', base, { code: 'CONSOLE_JOBS_LIST', message: 'Jobs of the workspace, newest first (metadata only).' }, { params: WorkspaceParams, querystring: R.JobsQuery, response: R.JobListSchema }, async (r) => {
    const { status, operationId, limit, cursor, mode } = r.query;
    return consoleJobs(deps, actorOf(r), r.params.workspaceId, { status, operationId }, { limit: limit ?? 25, cursor }, mode);
  });

  consoleRoute(app, 'GET', `${base}/:jobId`, { code: 'CONSOLE_JOBS_GET', message: 'Job read.' }, { params: R.JobParams, querystring: R.ModeQuery, response: R.JobSchema }, async (r) =>
    consoleJob(deps, actorOf(r), r.params.workspaceId, r.params.jobId, r.query.mode),
  );

  consoleRoute(app, 'GET', `${base}/:jobId/output`, { code: 'CONSOLE_JOBS_OUTPUT', message: 'Output fragment read.' }, { params: R.JobParams, querystring: R.OutputQuery, response: R.OutputPageSchema }, async (r) => {
    const page = await consoleJobOutput(deps, actorOf(r), r.params.workspaceId, r.params.jobId, r.query.cursor, r.query.mode);
    const { fragment, ...fields } = page;
    return { jobId: fields.jobId, encoding: 'json' as const, fragment: fragment.toString('utf8'), offsetBytes: fields.offsetBytes, totalBytes: fields.totalBytes, sha256: fields.sha256, snapshotExpiresAt: fields.snapshotExpiresAt, nextCursor: fields.nextCursor };
  });

  consoleRoute(app, 'POST', `${base}/:jobId/cancel`, { code: 'CONSOLE_JOBS_CANCEL', message: 'Job cancelled.' }, { params: R.JobParams, querystring: R.ModeQuery, response: R.JobSchema }, async (r) =>
    consoleCancel(deps, actorOf(r), r.params.workspaceId, r.params.jobId, r.query.mode),
  );

  consoleRoute(app, 'POST', `${base}/:jobId/retry`, { code: 'CONSOLE_JOBS_RETRY', message: 'Job queued again.' }, { params: R.JobParams, querystring: R.ModeQuery, body: R.RetryBody, response: R.RetrySchema }, async (r, reply) => {
    const result = await consoleRetry(deps, actorOf(r), r.params.workspaceId, r.params.jobId, r.body.keyId, r.headers['idempotency-key'], r.query.mode);
    if (result.replayed) reply.header('Idempotent-Replayed', 'true');
    return { run: result.body, replayed: result.replayed };
  });
}
