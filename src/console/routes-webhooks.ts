/**
 * The console's domains and webhooks (issue 35, item 8), on the services of the admin API's
 * domain endpoints (modules/domains: addDomain, verifyDomain) and of the public webhook endpoints
 * (modules/webhooks: createWebhook, listWebhooks, rotateWebhookSecret, revokeWebhook,
 * listWebhookDeliveries, replayDelivery), with the same rules and error codes. Every member of the
 * workspace reads; only owners and admins change (service-webhooks.ts).
 *
 * - GET  …/domains                                  CONSOLE_DOMAINS_LIST
 * - POST …/domains {hostname}                       CONSOLE_DOMAINS_ADD
 * - POST …/domains/{hostname}/check {method: dns|http}  CONSOLE_DOMAINS_CHECK
 * - GET  …/webhooks                                 CONSOLE_WEBHOOKS_LIST
 * - POST …/webhooks {url, eventTypes, enabled?}     CONSOLE_WEBHOOKS_CREATE (the secret shown once)
 * - POST …/webhooks/{webhookId}/rotate              CONSOLE_WEBHOOKS_ROTATE (the new secret shown once)
 * - POST …/webhooks/{webhookId}/revoke              CONSOLE_WEBHOOKS_REVOKE
 * - GET  …/webhooks/{webhookId}/deliveries?limit&cursor   CONSOLE_WEBHOOKS_DELIVERIES
 * - POST …/webhooks/{webhookId}/deliveries/{deliveryId}/replay  CONSOLE_WEBHOOKS_REPLAY
 * (… = /console/api/workspaces/{workspaceId})
 *
 * The webhook routes take `mode` (query; `test`: the workspace's test webhooks, which receive test
 * events only; decisions.md "Test mode"). Domains have no mode: verified domains are the live
 * workspace's and hold for both modes.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { presentDomain } from '../admin/present.js';
import { addDomain, verifyDomain } from '../modules/domains/service.js';
import { listDomains, type Domain } from '../modules/domains/store.js';
import { EVENT_TYPES } from '../modules/events/store.js';
import { presentDelivery } from '../modules/webhooks/delivery-routes.js';
import { listWebhookDeliveries, replayDelivery } from '../modules/webhooks/delivery-service.js';
import { createWebhook, listWebhooks, revokeWebhook, rotateWebhookSecret } from '../modules/webhooks/service.js';
import { consoleRoute, sessionOf } from './routes-define.js';
import * as M from './schemas-media-webhooks.js';
import { inMode, readableWorkspace, webhookManagedWorkspace } from './service-webhooks.js';

const ws = '/console/api/workspaces/:workspaceId';

/** A domain with where its proof goes (decisions.md section 4: the TXT record and the HTTPS file). */
const present = (d: Domain) => ({
  ...presentDomain(d),
  dnsRecordName: `_service-verify.${d.hostname}`,
  httpFileUrl: `https://${d.hostname}/.well-known/service-verify.txt`,
});

export async function consoleWebhookRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  const userOf = (r: Parameters<typeof sessionOf>[0]) => sessionOf(r).user.id;

  consoleRoute(app, 'GET', `${ws}/domains`, { code: 'CONSOLE_DOMAINS_LIST', message: 'Domains of the workspace.' }, { params: M.WorkspaceParams, response: M.DomainListSchema }, async (r) => {
    const { workspace, canManage } = await readableWorkspace(deps, userOf(r), r.params.workspaceId);
    return { items: (await listDomains(deps.db, workspace.id)).map(present), canManage };
  });

  consoleRoute(app, 'POST', `${ws}/domains`, { code: 'CONSOLE_DOMAINS_ADD', message: 'Domain added; publish its verification token, then check it.' }, { params: M.WorkspaceParams, body: M.AddDomainBody, response: M.DomainOnlySchema }, async (r) => {
    const workspace = await webhookManagedWorkspace(deps, userOf(r), r.params.workspaceId);
    return { domain: present(await addDomain(deps, workspace.id, r.body.hostname)) };
  });

  consoleRoute(app, 'POST', `${ws}/domains/:hostname/check`, { code: 'CONSOLE_DOMAINS_CHECK', message: 'Domain verified.' }, { params: M.HostnameParams, body: M.CheckDomainBody, response: M.DomainOnlySchema }, async (r) => {
    const workspace = await webhookManagedWorkspace(deps, userOf(r), r.params.workspaceId);
    return { domain: present(await verifyDomain(deps, workspace.id, r.params.hostname, r.body.method)) };
  });

  consoleRoute(app, 'GET', `${ws}/webhooks`, { code: 'CONSOLE_WEBHOOKS_LIST', message: 'Webhooks of the workspace (never a secret).' }, { params: M.WorkspaceParams, querystring: M.ModeQuery, response: M.WebhookListSchema }, async (r) => {
    const { workspace, canManage } = await readableWorkspace(deps, userOf(r), r.params.workspaceId);
    return { items: await listWebhooks(deps, (await inMode(deps, workspace, r.query.mode)).id), eventTypes: [...EVENT_TYPES], canManage };
  });

  consoleRoute(app, 'POST', `${ws}/webhooks`, { code: 'CONSOLE_WEBHOOKS_CREATE', message: 'Webhook created; the secret is shown once.' }, { params: M.WorkspaceParams, querystring: M.ModeQuery, body: M.CreateWebhookBody, response: M.WebhookWithSecretSchema }, async (r) => {
    const workspace = await inMode(deps, await webhookManagedWorkspace(deps, userOf(r), r.params.workspaceId), r.query.mode, true);
    return createWebhook(deps, workspace.id, r.body);
  });

  consoleRoute(app, 'POST', `${ws}/webhooks/:webhookId/rotate`, { code: 'CONSOLE_WEBHOOKS_ROTATE', message: 'Webhook secret rotated; the new secret is shown once.' }, { params: M.WebhookParams, querystring: M.ModeQuery, body: M.NoBody, response: M.WebhookWithSecretSchema }, async (r) => {
    const workspace = await inMode(deps, await webhookManagedWorkspace(deps, userOf(r), r.params.workspaceId), r.query.mode);
    return rotateWebhookSecret(deps, workspace.id, r.params.webhookId);
  });

  consoleRoute(app, 'POST', `${ws}/webhooks/:webhookId/revoke`, { code: 'CONSOLE_WEBHOOKS_REVOKE', message: 'Webhook revoked.' }, { params: M.WebhookParams, querystring: M.ModeQuery, body: M.NoBody, response: M.WebhookOnlySchema }, async (r) => {
    const workspace = await inMode(deps, await webhookManagedWorkspace(deps, userOf(r), r.params.workspaceId), r.query.mode);
    return { webhook: await revokeWebhook(deps, workspace.id, r.params.webhookId) };
  });

  consoleRoute(app, 'GET', `${ws}/webhooks/:webhookId/deliveries`, { code: 'CONSOLE_WEBHOOKS_DELIVERIES', message: 'Deliveries, newest first.' }, { params: M.WebhookParams, querystring: M.ModePageQuery, response: M.DeliveryListSchema }, async (r) => {
    const workspace = await inMode(deps, (await readableWorkspace(deps, userOf(r), r.params.workspaceId)).workspace, r.query.mode);
    const page = await listWebhookDeliveries(deps, workspace.id, r.params.webhookId, { limit: r.query.limit ?? 25, cursor: r.query.cursor });
    return { items: page.items.map(presentDelivery), nextCursor: page.nextCursor, hasMore: page.hasMore };
  });

  consoleRoute(app, 'POST', `${ws}/webhooks/:webhookId/deliveries/:deliveryId/replay`, { code: 'CONSOLE_WEBHOOKS_REPLAY', message: 'Delivery queued again.' }, { params: M.DeliveryParams, querystring: M.ModeQuery, body: M.NoBody, response: M.DeliveryOnlySchema }, async (r) => {
    const workspace = await inMode(deps, await webhookManagedWorkspace(deps, userOf(r), r.params.workspaceId), r.query.mode);
    return { delivery: presentDelivery(await replayDelivery(deps, workspace.id, r.params.webhookId, r.params.deliveryId)) };
  });
}
