/** Timings of job streams (GET /v1/jobs/{jobId}/stream); deps.streamSettings holds the ones in use. */

/** Timings of streams; tests shorten them (deps.streamSettings), operators need not. */
export interface StreamSettings {
  /** Interval of `: keep-alive` comment lines. */
  keepAliveMs: number;
  /** Safety poll of the job when no notification came. */
  pollMs: number;
  /** Lifetime of a slot row without heartbeat, and the heartbeat interval. */
  slotTtlMs: number;
  heartbeatMs: number;
  /** How often the auth cache is checked for a clear (revocations), and the full re-check interval. */
  authCheckMs: number;
  reauthorizeMs: number;
  /** Unsent bytes after which a slow client's stream is ended. */
  maxBufferedBytes: number;
}

export const DEFAULT_STREAM_SETTINGS: StreamSettings = {
  keepAliveMs: 15_000,
  pollMs: 3_000,
  slotTtlMs: 30_000,
  heartbeatMs: 10_000,
  authCheckMs: 1_000,
  reauthorizeMs: 60_000,
  maxBufferedBytes: 1024 * 1024,
};
