/**
 * Media limits (the spec leaves maximum upload size and storage quota open; these are ours).
 *
 * | plan    | largest upload | storage quota (all media of the workspace) |
 * |---------|----------------|--------------------------------------------|
 * | free    | 25 MiB         | 500 MiB                                    |
 * | starter | 100 MiB        | 10 GiB                                     |
 * | pro     | 250 MiB        | 100 GiB                                    |
 *
 * An upload over the largest size is refused with 413 PAYLOAD_TOO_LARGE (as soon as the
 * Content-Length says so, or while streaming); one that would take the workspace over its quota
 * with 413 STORAGE_QUOTA_EXCEEDED. Job results count toward the quota but are never refused by
 * it: the work is already paid for.
 *
 * Images are probed (header only, no pixel decoding) and refused above IMAGE_MAX_PIXELS per frame
 * or IMAGE_MAX_TOTAL_PIXELS over all frames of an animation: a small file that would decode to
 * gigabytes (a decompression bomb) never reaches an operation.
 */
import type { Plan } from '../accounts/types.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

export interface MediaPlanLimits {
  maxUploadBytes: number;
  storageQuotaBytes: number;
}

export const MEDIA_PLAN_LIMITS: Readonly<Record<Plan, MediaPlanLimits>> = {
  free: { maxUploadBytes: 25 * MiB, storageQuotaBytes: 500 * MiB },
  starter: { maxUploadBytes: 100 * MiB, storageQuotaBytes: 10 * GiB },
  pro: { maxUploadBytes: 250 * MiB, storageQuotaBytes: 100 * GiB },
};

/** Largest frame (width × height) an image may declare: 50 megapixels. */
export const IMAGE_MAX_PIXELS = 50_000_000;
/** Largest width × height × frames of an animated image: 250 megapixels. */
export const IMAGE_MAX_TOTAL_PIXELS = 250_000_000;

/** Room for multipart boundaries and part headers when judging a Content-Length up front. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

export function mediaLimitsFor(plan: Plan): MediaPlanLimits {
  return MEDIA_PLAN_LIMITS[plan] ?? MEDIA_PLAN_LIMITS.free;
}
