const MiB = 1024 * 1024;
/** Largest answer an `openai` provider's call may return, per endpoint (base64 images and audio included). */
export const OPENAI_MAX_BYTES = { chat: 4 * MiB, images: 128 * MiB, speech: 64 * MiB } as const;
