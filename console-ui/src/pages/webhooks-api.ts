/** The console's domain and webhook endpoints (src/console/routes-webhooks.ts) and what they answer. */
import { request, type KeyMode } from '../api.js';

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
/** `?mode=test` for the test webhooks (the shell's test-mode switch); domains have no mode. */
const q = (mode: KeyMode, query: Record<string, string> = {}) => {
  const params = new URLSearchParams(query);
  if (mode === 'test') params.set('mode', 'test');
  const qs = params.toString();
  return qs ? `?${qs}` : '';
};
const hook = (workspaceId: string, webhookId: string) => `${ws(workspaceId)}/webhooks/${encodeURIComponent(webhookId)}`;

export const webhooksApi = {
  listDomains: (workspaceId: string) => request<{ items: Domain[]; canManage: boolean }>('GET', `${ws(workspaceId)}/domains`),
  addDomain: (workspaceId: string, hostname: string) => request<{ domain: Domain }>('POST', `${ws(workspaceId)}/domains`, { hostname }),
  checkDomain: (workspaceId: string, hostname: string, method: 'dns' | 'http') =>
    request<{ domain: Domain }>('POST', `${ws(workspaceId)}/domains/${encodeURIComponent(hostname)}/check`, { method }),
  list: (workspaceId: string, mode: KeyMode) => request<{ items: Webhook[]; eventTypes: string[]; canManage: boolean }>('GET', `${ws(workspaceId)}/webhooks${q(mode)}`),
  create: (workspaceId: string, mode: KeyMode, body: { url: string; eventTypes: string[]; enabled?: boolean }) => request<WebhookWithSecret>('POST', `${ws(workspaceId)}/webhooks${q(mode)}`, body),
  rotate: (workspaceId: string, mode: KeyMode, webhookId: string) => request<WebhookWithSecret>('POST', `${hook(workspaceId, webhookId)}/rotate${q(mode)}`),
  revoke: (workspaceId: string, mode: KeyMode, webhookId: string) => request<{ webhook: Webhook }>('POST', `${hook(workspaceId, webhookId)}/revoke${q(mode)}`),
  deliveries: (workspaceId: string, mode: KeyMode, webhookId: string, cursor?: string) =>
    request<{ items: Delivery[]; nextCursor: string | null; hasMore: boolean }>('GET', `${hook(workspaceId, webhookId)}/deliveries${q(mode, cursor ? { cursor } : {})}`),
  replay: (workspaceId: string, mode: KeyMode, webhookId: string, deliveryId: string) =>
    request<{ delivery: Delivery }>('POST', `${hook(workspaceId, webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/replay${q(mode)}`),
};
