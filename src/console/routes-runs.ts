/**
 * The console's Run page endpoints under /console/api/workspaces/{workspaceId}: the operations a
 * key may run (GET /v1/tools), the estimate (POST
 * /v1/estimates) and the run itself (POST /v1/runs, executionOrigin `web`, the form's
 * Idempotency-Key header). Services in runs-service.ts; the session, origin and CSRF checks are
 * the console's hook (http.ts). A test key runs in test mode (simulated, the test balance, a test
 * job); `mode` (query of …/tools, field of the bodies) asks that the key be of that mode.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { WorkspaceParams } from './schemas.js';
import * as R from './schemas-runs.js';
import { consoleRoute, sessionOf } from './routes-define.js';
import { consoleCatalog, consoleEstimate, consoleRun, type ConsoleActor } from './runs-service.js';

export function actorOf(request: FastifyRequest): ConsoleActor {
  return { userId: sessionOf(request).user.id, ip: request.ip };
}

export function registerRunRoutes(app: FastifyInstance, deps: Deps): void {
  const base = '/console/api/workspaces/:workspaceId';

  consoleRoute(app, 'GET', `${base}/tools`, { code: 'CONSOLE_TOOLS_LIST', message: 'Operations the key may run.' }, { params: WorkspaceParams, querystring: R.ToolsQuery, response: R.ToolListSchema }, async (r) => ({
    items: await consoleCatalog(deps, actorOf(r), r.params.workspaceId, r.query.keyId, r.query.mode),
  }));

  consoleRoute(app, 'POST', `${base}/estimates`, { code: 'CONSOLE_ESTIMATE', message: 'Estimate computed.' }, { params: WorkspaceParams, body: R.OperationBody, response: R.EstimateSchema }, async (r) =>
    consoleEstimate(deps, actorOf(r), r.params.workspaceId, { ...r.body, input: r.body.input as Record<string, unknown> }),
  );

  consoleRoute(app, 'POST', `${base}/runs`, { code: 'CONSOLE_RUNS_CREATE', message: 'Run accepted.' }, { params: WorkspaceParams, body: R.OperationBody, response: R.RunSchema }, async (r, reply) => {
    const run = await consoleRun(deps, actorOf(r), r.params.workspaceId, { ...r.body, input: r.body.input as Record<string, unknown> }, r.headers['idempotency-key']);
    if (run.replayed) reply.header('Idempotent-Replayed', 'true');
    return { run: run.body, replayed: run.replayed };
  });
}
