/** GET /v1/usage: points windows, budgets and stream availability of the selected workspace. */
import { isLiveScope, publicWorkspaceId } from '../../lib/livemode.js';
import { usageHistoryRoutes } from './history-routes.js';
import { Type } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { envelopeSchema, ok } from '../../http/envelope.js';
import { Livemode, Millicents, Timestamp, Uuid, WorkspaceHeaders } from '../../http/schemas.js';
import { windowIso } from '../../lib/clock.js';
import { usageReport, type UsageReport } from './service.js';

const UsageSchema = Type.Object({
  workspaceId: Uuid,
  livemode: Livemode,
  plan: Type.String(),
  points: Type.Object({
    minuteLimit: Type.Integer(),
    minuteUsed: Type.Integer(),
    minuteResetsAt: Timestamp,
    monthlyLimit: Type.Integer(),
    monthlyUsed: Type.Integer(),
    monthlyResetsAt: Timestamp,
  }),
  budgets: Type.Array(
    Type.Object({
      scope: Type.Union([Type.Literal('key'), Type.Literal('workspace')]),
      period: Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month')]),
      limitMillicents: Millicents,
      spentMillicents: Millicents,
      reservedMillicents: Millicents,
      resetsAt: Timestamp,
    }),
  ),
  streams: Type.Object({ enabled: Type.Boolean(), maximum: Type.Integer() }),
});

/** The report as the API shows it: instants as ISO strings (the same few per window, memoised). */
function present(request: FastifyRequest, r: UsageReport) {
  const p = r.points;
  return ok(request, {
    workspaceId: publicWorkspaceId(r.workspaceId),
    livemode: isLiveScope(r.workspaceId),
    plan: r.plan,
    points: {
      minuteLimit: p.minuteLimit,
      minuteUsed: p.minuteUsed,
      minuteResetsAt: windowIso(p.minuteResetsAt),
      monthlyLimit: p.monthlyLimit,
      monthlyUsed: p.monthlyUsed,
      monthlyResetsAt: windowIso(p.monthlyResetsAt),
    },
    budgets: r.budgets.map((b) => ({ ...b, resetsAt: windowIso(b.resetsAt) })),
    streams: r.streams,
  });
}

export async function usageRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  app.get(
    '/v1/usage',
    {
      schema: { tags: ['usage'], summary: 'Usage points, budgets and streams', headers: WorkspaceHeaders, response: { 200: envelopeSchema(UsageSchema) } },
      config: { meta: { code: 'PUBLIC_USAGE_GET', message: 'Usage read.', auth: 'key', scope: 'usage:read', points: 1 } },
    },
    (request) => {
      const auth = requireAuth(request);
      const report = usageReport(deps, auth.workspace, auth.key);
      return report instanceof Promise ? report.then((r) => present(request, r)) : present(request, report);
    },
  );
  await usageHistoryRoutes(app, deps);
}
