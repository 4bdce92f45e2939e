/** Every public endpoint implemented so far, for the shared route tests. Add new ones here. */
import type { Scope } from '../../src/modules/auth/scopes.js';

export interface EndpointCase {
  method: 'GET' | 'POST';
  url: string;
  scope: Scope;
  code: string;
  points: number;
  body?: unknown;
}

export const PUBLIC_ENDPOINTS: EndpointCase[] = [
  { method: 'GET', url: '/v1/workspaces', scope: 'workspaces:read', code: 'PUBLIC_WORKSPACES_LIST', points: 2 },
  { method: 'GET', url: '/v1/usage', scope: 'usage:read', code: 'PUBLIC_USAGE_GET', points: 1 },
  { method: 'GET', url: '/v1/balance', scope: 'billing:read', code: 'PUBLIC_BALANCE_GET', points: 2 },
  { method: 'GET', url: '/v1/transactions', scope: 'billing:read', code: 'PUBLIC_TRANSACTIONS_LIST', points: 2 },
  { method: 'GET', url: '/v1/media', scope: 'media:read', code: 'PUBLIC_MEDIA_LIST', points: 2 },
  { method: 'POST', url: '/v1/media/upload', scope: 'media:write', code: 'PUBLIC_MEDIA_UPLOAD', points: 10, body: onePixelPngForm() },
];

/** A multipart body holding a valid 1×1 PNG as the `file` part (light-my-request encodes FormData). */
function onePixelPngForm(): FormData {
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
  const form = new FormData();
  form.append('file', new Blob([png], { type: 'image/png' }), 'pixel.png');
  return form;
}
