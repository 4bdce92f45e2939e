/** Histogram buckets, in seconds, of the metrics module's duration series. */

export const DURATION_BUCKETS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10] as const;
/** Jobs and provider calls: from a fast synchronous run to an hour-long video. */
export const JOB_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600] as const;
/** From an event's creation to its delivery: retries back off for hours (webhook backoff cap). */
export const DELIVERY_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14_400, 86_400] as const;
