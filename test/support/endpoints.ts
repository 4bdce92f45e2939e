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
];
