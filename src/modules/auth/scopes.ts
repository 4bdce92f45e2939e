/** The scopes of the spec (Authentication 3) and the transports a key may enable. */
export const SCOPES = [
  'workspaces:read',
  'tools:read',
  'tools:run',
  'jobs:read',
  'jobs:write',
  'billing:read',
  'media:read',
  'media:write',
  'usage:read',
  'webhooks:read',
  'webhooks:write',
] as const;

export type Scope = (typeof SCOPES)[number];

export const TRANSPORTS = ['rest', 'mcp'] as const;
export type Transport = (typeof TRANSPORTS)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
