/**
 * Webhook endpoint rules (spec Rules 9-10, decisions.md section 1): create, list, update, revoke,
 * rotate.
 *
 * - The destination is checked before any transaction (it may resolve DNS); the delivery worker
 *   checks authorization again at every send, so a domain that loses verification after the check
 *   stops deliveries there.
 * - At most MAX_ACTIVE_WEBHOOKS unrevoked webhooks per workspace (409 WEBHOOK_LIMIT_REACHED),
 *   counted under the workspace row lock so concurrent creations cannot pass it together.
 * - The secret is shown once (create, rotate) and stored only sealed; list, update and revoke
 *   never return it.
 * - Revocation is permanent and idempotent; it abandons unfinished deliveries in the same
 *   transaction. A revoked webhook cannot be updated or rotated (409 WEBHOOK_REVOKED).
 * - Another workspace's webhook id is 404, never 403.
 */
import type { Deps } from '../../deps.js';
import { lockWorkspace } from '../../db/locking.js';
import { AppError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import type { EventType } from '../events/store.js';
import { requireDestination } from './destination.js';
import { presentWebhook, type PublicWebhook } from './present.js';
import { generateWebhookSecret, sealWebhookSecret } from './secrets.js';
import * as store from './store.js';

export const MAX_ACTIVE_WEBHOOKS = 20;

export interface CreateWebhookInput {
  url: string;
  eventTypes: EventType[];
  /** Default true. */
  enabled?: boolean | undefined;
}

export interface UpdateWebhookInput {
  url?: string | undefined;
  eventTypes?: EventType[] | undefined;
  enabled?: boolean | undefined;
}

export interface WebhookWithSecret {
  webhook: PublicWebhook;
  /** The signing secret; shown this once. */
  secret: string;
}

function notFound(): AppError {
  return new AppError('NOT_FOUND', { message: 'No such webhook in this workspace.' });
}

function revoked(): AppError {
  return new AppError('WEBHOOK_REVOKED', { message: 'The webhook is revoked; revocation is permanent. Create a new webhook instead.' });
}

export async function createWebhook(deps: Deps, workspaceId: string, input: CreateWebhookInput): Promise<WebhookWithSecret> {
  const destination = await requireDestination(deps, workspaceId, input.url);
  const id = newId();
  const secret = generateWebhookSecret();
  const now = deps.clock.now();
  const record: store.WebhookRecord = {
    id,
    workspaceId,
    url: destination.url,
    hostname: destination.hostname,
    eventTypes: [...new Set(input.eventTypes)],
    enabled: input.enabled ?? true,
    secretEnc: sealWebhookSecret(deps, id, secret),
    createdAt: now,
    updatedAt: now,
    revokedAt: null,
  };
  await deps.db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, deps.caps, workspaceId);
    if ((await store.countActiveWebhooks(trx, workspaceId)) >= MAX_ACTIVE_WEBHOOKS) {
      throw new AppError('WEBHOOK_LIMIT_REACHED', {
        message: `A workspace can have at most ${MAX_ACTIVE_WEBHOOKS} active webhooks; revoke one first.`,
        details: { limit: MAX_ACTIVE_WEBHOOKS },
      });
    }
    await store.insertWebhook(trx, record);
  });
  deps.log.info({ workspaceId, webhookId: id, hostname: record.hostname }, 'webhook created');
  return { webhook: presentWebhook(record), secret };
}

export async function listWebhooks(deps: Deps, workspaceId: string): Promise<PublicWebhook[]> {
  return (await store.listWebhooks(deps.db, workspaceId)).map(presentWebhook);
}

export async function updateWebhook(deps: Deps, workspaceId: string, webhookId: string, input: UpdateWebhookInput): Promise<PublicWebhook> {
  const current = await store.findWebhook(deps.db, workspaceId, webhookId);
  if (!current) throw notFound();
  if (current.revokedAt !== null) throw revoked();
  const destination = input.url !== undefined ? await requireDestination(deps, workspaceId, input.url) : undefined;
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const locked = await store.lockWebhook(trx, deps.caps, workspaceId, webhookId);
    if (!locked) throw notFound();
    if (locked.revokedAt !== null) throw revoked();
    await store.updateWebhook(
      trx,
      workspaceId,
      webhookId,
      {
        ...(destination ? { url: destination.url, hostname: destination.hostname } : {}),
        ...(input.eventTypes !== undefined ? { eventTypes: [...new Set(input.eventTypes)] } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      },
      now,
    );
    return presentWebhook((await store.findWebhook(trx, workspaceId, webhookId))!);
  });
}

/** Revokes the webhook (once; again returns it as it is) and abandons its unfinished deliveries. */
export async function revokeWebhook(deps: Deps, workspaceId: string, webhookId: string): Promise<PublicWebhook> {
  const now = deps.clock.now();
  const result = await deps.db.transaction().execute(async (trx) => {
    const locked = await store.lockWebhook(trx, deps.caps, workspaceId, webhookId);
    if (!locked) throw notFound();
    if (locked.revokedAt !== null) return { webhook: locked, abandoned: 0, changed: false };
    await store.updateWebhook(trx, workspaceId, webhookId, { enabled: false, revokedAt: now }, now);
    const abandoned = await store.abandonDeliveries(trx, workspaceId, webhookId, now);
    return { webhook: (await store.findWebhook(trx, workspaceId, webhookId))!, abandoned, changed: true };
  });
  if (result.changed) deps.log.info({ workspaceId, webhookId, abandonedDeliveries: result.abandoned }, 'webhook revoked');
  return presentWebhook(result.webhook);
}

/** Replaces the signing secret; the old one stops signing at once (the worker reads it at each send). */
export async function rotateWebhookSecret(deps: Deps, workspaceId: string, webhookId: string): Promise<WebhookWithSecret> {
  const secret = generateWebhookSecret();
  const now = deps.clock.now();
  const webhook = await deps.db.transaction().execute(async (trx) => {
    const locked = await store.lockWebhook(trx, deps.caps, workspaceId, webhookId);
    if (!locked) throw notFound();
    if (locked.revokedAt !== null) throw revoked();
    await store.updateWebhook(trx, workspaceId, webhookId, { secretEnc: sealWebhookSecret(deps, webhookId, secret) }, now);
    return (await store.findWebhook(trx, workspaceId, webhookId))!;
  });
  deps.log.info({ workspaceId, webhookId }, 'webhook secret rotated');
  return { webhook: presentWebhook(webhook), secret };
}
