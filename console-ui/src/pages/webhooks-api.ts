/** The console's domain and webhook endpoints (src/console/routes-webhooks.ts) and what they answer. */
import { request } from '../api.js';

export interface Domain {
  workspaceId: string;
  hostname: string;
  status: 'pending' | 'verified' | string;
  verificationToken: string;
  verifiedMethod: string | null;
  verifiedAt: string | null;
  createdAt: string;
  dnsRecordName: string;
  httpFileUrl: string;
}

export interface Webhook {
  id: string;
  workspaceId: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  revokedAt: string | null;
}

export interface Delivery {
  id: string;
  webhookId: string;
  eventId: string;
  status: 'pending' | 'delivering' | 'succeeded' | 'failed';
  attempts: number;
  replayCount: number;
  lastStatusCode: number | null;
  lastErrorCode: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

export interface WebhookWithSecret {
  webhook: Webhook;
  secret: string;
}

const ws = (workspaceId: string) => `/workspaces/${encodeURIComponent(workspaceId)}`;
const hook = (workspaceId: string, webhookId: string) => `${ws(workspaceId)}/webhooks/${encodeURIComponent(webhookId)}`;

export const webhooksApi = {
  listDomains: (workspaceId: string) => request<{ items: Domain[]; canManage: boolean }>('GET', `${ws(workspaceId)}/domains`),
  addDomain: (workspaceId: string, hostname: string) => request<{ domain: Domain }>('POST', `${ws(workspaceId)}/domains`, { hostname }),
  checkDomain: (workspaceId: string, hostname: string, method: 'dns' | 'http') =>
    request<{ domain: Domain }>('POST', `${ws(workspaceId)}/domains/${encodeURIComponent(hostname)}/check`, { method }),
  list: (workspaceId: string) => request<{ items: Webhook[]; eventTypes: string[]; canManage: boolean }>('GET', `${ws(workspaceId)}/webhooks`),
  create: (workspaceId: string, body: { url: string; eventTypes: string[]; enabled?: boolean }) => request<WebhookWithSecret>('POST', `${ws(workspaceId)}/webhooks`, body),
  rotate: (workspaceId: string, webhookId: string) => request<WebhookWithSecret>('POST', `${hook(workspaceId, webhookId)}/rotate`),
  revoke: (workspaceId: string, webhookId: string) => request<{ webhook: Webhook }>('POST', `${hook(workspaceId, webhookId)}/revoke`),
  deliveries: (workspaceId: string, webhookId: string, cursor?: string) =>
    request<{ items: Delivery[]; nextCursor: string | null; hasMore: boolean }>('GET', `${hook(workspaceId, webhookId)}/deliveries${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`),
  replay: (workspaceId: string, webhookId: string, deliveryId: string) =>
    request<{ delivery: Delivery }>('POST', `${hook(workspaceId, webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/replay`),
};
