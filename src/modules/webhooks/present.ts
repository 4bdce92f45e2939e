/** The public Webhook shape (spec "Webhook" plus revokedAt). Built field by field: the sealed secret never leaves. */
import { isLiveScope, publicWorkspaceId } from '../../lib/livemode.js';
import { toIso } from '../../lib/clock.js';
import type { EventType } from '../events/store.js';
import type { WebhookRecord } from './store.js';

export interface PublicWebhook {
  id: string;
  workspaceId: string;
  livemode: boolean;
  url: string;
  eventTypes: EventType[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  revokedAt: string | null;
}

export function presentWebhook(w: WebhookRecord): PublicWebhook {
  return {
    id: w.id,
    workspaceId: publicWorkspaceId(w.workspaceId),
    livemode: isLiveScope(w.workspaceId),
    url: w.url,
    eventTypes: w.eventTypes,
    enabled: w.enabled,
    createdAt: toIso(w.createdAt),
    updatedAt: toIso(w.updatedAt),
    revokedAt: toIso(w.revokedAt),
  };
}
