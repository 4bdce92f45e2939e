/**
 * What a webhook request carries: the event body (the feed's event shape, byte-identical at every
 * attempt and replay) and the `Service-Signature` header, `t=<unix seconds>,v1=<hex HMAC-SHA256>`
 * over `t + "." + body` with the webhook secret (the `whsec_…` string as UTF-8) as the key. Each
 * attempt is signed at its own send time, so a retry hours later passes a receiver's 5-minute
 * check; the scheme is Stripe's, so its libraries verify it
 * (test/webhooks/webhook-delivery.test.ts).
 */
import { isLiveScope, publicWorkspaceId } from '../../lib/livemode.js';
import { createHmac } from 'node:crypto';
import { toIso } from '../../lib/clock.js';

export const WEBHOOK_USER_AGENT = 'WorkspaceAutomationService-Webhooks/1.0';

/** The stored event a delivery sends. */
export interface EventRecord {
  id: string;
  type: string;
  workspaceId: string;
  createdAtMs: number;
  /** The event's `data` exactly as stored (JSON text). */
  dataJson: string;
}

/**
 * The body: `{id, type, workspaceId, createdAt, data}`, the same object GET /v1/events returns.
 * Built by concatenation around the stored `data` text, which JSON.stringify produced, so the
 * bytes equal JSON.stringify of the parsed event and are the same at every attempt.
 */
export function eventBody(e: EventRecord): string {
  const live = isLiveScope(e.workspaceId);
  return `{"id":${JSON.stringify(e.id)},"type":${JSON.stringify(e.type)},"workspaceId":${JSON.stringify(live ? e.workspaceId : publicWorkspaceId(e.workspaceId))},"livemode":${live},"createdAt":"${createdIso(e.createdAtMs)}","data":${e.dataJson}}`;
}

/** The last whole second formatted, as `YYYY-MM-DDTHH:MM:SS.` (a worker sends events in creation order). */
let isoSecond = Number.NaN;
let isoPrefix = '';

/** toIso(ms), formatting the date only when the second changes (same string as toISOString). */
function createdIso(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) return toIso(ms);
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    isoPrefix = toIso(second * 1000).slice(0, -4);
    isoSecond = second;
  }
  const milli = ms - second * 1000;
  return `${isoPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const t = Math.floor(unixSeconds);
  const v1 = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.${body}`).digest('hex');
  return `t=${t},v1=${v1}`;
}

/** The request headers of one attempt (signed at `nowMs`). */
export function deliveryHeaders(secret: string, eventId: string, body: string, nowMs: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'service-event-id': eventId,
    'service-signature': signatureHeader(secret, body, Math.floor(nowMs / 1000)),
  };
}
