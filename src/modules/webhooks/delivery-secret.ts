/**
 * The signing secret of a claimed delivery's webhook, decrypted once per sealed value and kept in
 * memory (bounded, one entry per webhook). An entry serves only the exact sealed text it was
 * opened from: rotation stores a new sealed value, so the next attempt after a rotation signs with
 * the new secret and never with the old one.
 */
import type { Deps } from '../../deps.js';
import type { ClaimedDelivery } from './delivery-claim.js';
import { readWebhookSecret } from './secrets.js';

const MAX_CACHED = 1000;
/** By webhook id: the sealed value last opened and its plaintext. */
const cache = new Map<string, { secretEnc: string; secret: string }>();

export function readDeliverySecret(deps: Deps, d: ClaimedDelivery): string {
  const cached = cache.get(d.webhookId);
  if (cached !== undefined && cached.secretEnc === d.webhook.secretEnc) return cached.secret;
  const secret = readWebhookSecret(deps, { id: d.webhookId, secret_enc: d.webhook.secretEnc });
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(d.webhookId, { secretEnc: d.webhook.secretEnc, secret });
  return secret;
}
