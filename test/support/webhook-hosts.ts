/**
 * Webhook test setup: hostnames verified in a workspace by the operator, with fake address records
 * (the harness's `hostAddresses`), and webhooks created on them.
 */
import { randomBytes } from 'node:crypto';
import type { TestContext } from './harness.js';
import { addDomain, verifyDomain } from '../../src/modules/domains/service.js';
import { createWebhook, type WebhookWithSecret } from '../../src/modules/webhooks/service.js';
import type { EventType } from '../../src/modules/events/store.js';
import { publicWorkspaceId } from '../../src/lib/livemode.js';

/** A public unicast address (never contacted by these tests). */
export const PUBLIC_ADDRESS = '93.184.215.14';

export function uniqueHost(prefix = 'hooks'): string {
  return `${prefix}.t${randomBytes(5).toString('hex')}.example`;
}

/** Adds and verifies (operator's word) `hostname` in the workspace; it resolves to `addresses`. */
export async function verifyHost(ctx: TestContext, workspaceId: string, hostname = uniqueHost(), addresses: string[] = [PUBLIC_ADDRESS]): Promise<string> {
  await addDomain(ctx.deps, workspaceId, hostname);
  await verifyDomain(ctx.deps, workspaceId, hostname, 'operator');
  ctx.hostAddresses.set(hostname, addresses);
  return hostname;
}

/** A webhook on a freshly verified host of the workspace, created through the service. */
export async function seedWebhook(ctx: TestContext, workspaceId: string, eventTypes: EventType[] = ['job.completed']): Promise<WebhookWithSecret> {
  // `workspaceId` may be a test twin's (seed.ts scopeOf): the webhook is stored there, while the
  // hostname is verified in the live workspace, whose domains both modes share.
  const hostname = await verifyHost(ctx, publicWorkspaceId(workspaceId));
  return createWebhook(ctx.deps, workspaceId, { url: `https://${hostname}/hooks`, eventTypes });
}
