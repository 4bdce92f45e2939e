/**
 * The signing secret of a claimed delivery's webhook, decrypted once per sealed value and kept in
 * memory (bounded). The cache key is the sealed text itself: rotation stores a new sealed value,
 * so the next attempt after a rotation signs with the new secret and never with the old one.
 */
import type { Deps } from '../../deps.js';
import type { ClaimedDelivery } from './delivery-claim.js';
import { readWebhookSecret } from './secrets.js';

const MAX_CACHED = 1000;
const cache = new Map<string, string>();

export function readDeliverySecret(deps: Deps, d: ClaimedDelivery): string {
  const key = `${d.webhookId}\n${d.webhook.secretEnc}`;
  let secret = cache.get(key);
  if (secret === undefined) {
    secret = readWebhookSecret(deps, { id: d.webhookId, secret_enc: d.webhook.secretEnc });
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(key, secret);
  }
  return secret;
}
