/**
 * The console's calls to /console/api: same origin, the session cookie (sent by the browser,
 * never readable here), and the CSRF token on every change. Every refusal becomes an ApiError
 * carrying the API's code and message, which the page shows as they are.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
    /** The refusal's `details` (INVALID_INPUT lists JSON pointers and messages). */
    readonly details?: unknown,
  ) {
    super(message);
  }
}

let csrfToken: string | undefined;

export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

interface Envelope<T> {
  success: boolean;
  code: string;
  message: string;
  data?: T;
  requestId?: string;
  details?: unknown;
}

/** A call to /console/api; a FormData body is sent as multipart/form-data (uploads), anything else as JSON. */
export async function request<T>(method: 'GET' | 'POST', path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<T> {
  const headers: Record<string, string> = { ...extraHeaders, accept: 'application/json' };
  const form = body instanceof FormData;
  if (body !== undefined && !form) headers['content-type'] = 'application/json';
  if (method === 'POST' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(`/console/api${path}`, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: form ? body : JSON.stringify(body) } : {}) });
  } catch {
    throw new ApiError(0, 'NETWORK_ERROR', 'The service could not be reached; check your connection and try again.');
  }
  let parsed: Envelope<T> | undefined;
  try {
    parsed = (await res.json()) as Envelope<T>;
  } catch {
    throw new ApiError(res.status, 'INVALID_RESPONSE', `The service answered ${res.status} without a readable body.`);
  }
  if (!res.ok || !parsed.success) throw new ApiError(res.status, parsed.code, parsed.message, parsed.requestId, parsed.details);
  return parsed.data as T;
}

export interface User {
  id: string;
  email: string;
  name: string;
}

export interface Workspace {
  id: string;
  name: string;
  plan: string;
  organizationId: string | null;
  organizationName: string | null;
  role: 'owner' | 'admin' | 'member';
  canManageKeys: boolean;
}

export interface KeyOptions {
  scopes: string[];
  transports: string[];
  operations: string[];
}

export interface Me {
  user: User;
  csrfToken: string;
  workspaces: Workspace[];
  keyOptions: KeyOptions;
}

export interface Ceilings {
  dailyMillicents: number | null;
  weeklyMillicents: number | null;
  monthlyMillicents: number | null;
}

export interface ApiKey {
  id: string;
  userId: string;
  prefix: string;
  workspaceIds: string[];
  scopes: string[];
  operations: string[];
  transports: string[];
  ipRanges: string[];
  expiresAt: string | null;
  budgets: Ceilings;
  createdAt: string;
  revokedAt: string | null;
  suspendedUntil: string | null;
  /** `test`: a wask_test_ key, simulated and paid from the test balance (decisions.md "Test mode"). */
  mode: KeyMode;
}

export type KeyMode = 'live' | 'test';

export interface CreateKeyBody {
  scopes: string[];
  operations: string[];
  transports: string[];
  expiresAt?: string | null;
  ipRanges?: string[];
  budgets?: Partial<Ceilings>;
  /** `live` when absent. */
  mode?: KeyMode;
}

const ws = (workspaceId: string) => `/workspaces/${encodeURIComponent(workspaceId)}/keys`;

export const api = {
  signIn: (token: string) => request<{ user: User; csrfToken: string }>('POST', '/sign-in', { token }),
  signOut: () => request<{ signedOut: boolean }>('POST', '/sign-out'),
  me: () => request<Me>('GET', '/me'),
  listKeys: (workspaceId: string) => request<{ items: ApiKey[] }>('GET', ws(workspaceId)),
  createKey: (workspaceId: string, body: CreateKeyBody) => request<{ key: ApiKey; secret: string }>('POST', ws(workspaceId), body),
  revokeKey: (workspaceId: string, keyId: string) => request<{ key: ApiKey }>('POST', `${ws(workspaceId)}/${encodeURIComponent(keyId)}/revoke`),
};
