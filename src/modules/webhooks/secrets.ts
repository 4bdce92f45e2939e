/**
 * Webhook signing secrets (spec Authentication 8, decisions.md "the HMAC key is the secret string
 * exactly as returned, as UTF-8 bytes"): `whsec_` + 32 random bytes in base64url. Shown once at
 * creation and rotation; at rest only sealed with AES-256-GCM under SECRET_KEY and bound to the
 * webhook's id, so a sealed value copied onto another webhook's row does not open.
 */
import { randomBytes } from 'node:crypto';
import type { Deps } from '../../deps.js';

export const SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

function aad(webhookId: string): string {
  return `webhook-secret:${webhookId}`;
}

export function sealWebhookSecret(deps: Pick<Deps, 'keyring'>, webhookId: string, secret: string): string {
  return deps.keyring.encrypt(secret, aad(webhookId));
}

/**
 * The plaintext signing secret of a webhook row, for the delivery worker only (it reads it at
 * every send, so a rotation takes effect at once). Never log or return it.
 */
export function readWebhookSecret(deps: Pick<Deps, 'keyring'>, row: { id: string; secret_enc: string }): string {
  return deps.keyring.decrypt(row.secret_enc, aad(row.id));
}
