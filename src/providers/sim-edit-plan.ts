/**
 * The simulated chat model's plan of a video.edit prompt (test mode, and live keys on the
 * simulated provider with SIMULATE_LIVE): deterministic, from words of the prompt, so a test key
 * sees the shape of a prompt edit without a chat provider. The given `edits` come first, in
 * order; then one step per phrase it knows, in this order: "mute", "no sound" or "silent" → mute;
 * "twice as fast" or "faster" → speed 2; "slow" → speed 0.5; "square" → resize 512×512 cover;
 * "vertical" or "portrait" → resize 720×1280 cover; "gif", "webm" or "mp4" → format (unless a
 * given step already picks it). A prompt it understands none of keeps the first five seconds (a
 * trim), so the plan is never empty. Every plan is one the contract accepts as `edits`.
 */
import { VIDEO_CONTAINERS, type VideoEdit } from '../operations/video-edit.js';

/** Seconds a prompt the simulated model does not understand keeps (the simulated clip's length). */
const UNDERSTOOD_NOTHING_SECONDS = 5;
const MAX_STEPS = 20;

export function simulatedEditPlan(input: Record<string, unknown>): VideoEdit[] {
  const given = Array.isArray(input.edits) ? (input.edits as VideoEdit[]) : [];
  const prompt = typeof input.prompt === 'string' ? input.prompt.toLowerCase() : undefined;
  if (prompt === undefined) return given;
  const added: VideoEdit[] = [];
  if (/\b(mute|no sound|silent)\b/.test(prompt)) added.push({ type: 'mute' });
  if (/\b(twice as fast|faster)\b/.test(prompt)) added.push({ type: 'speed', factor: 2 });
  else if (/\bslow/.test(prompt)) added.push({ type: 'speed', factor: 0.5 });
  if (/\bsquare\b/.test(prompt)) added.push({ type: 'resize', width: 512, height: 512, fit: 'cover' });
  else if (/\b(vertical|portrait)\b/.test(prompt)) added.push({ type: 'resize', width: 720, height: 1280, fit: 'cover' });
  const container = VIDEO_CONTAINERS.find((c) => new RegExp(`\\b${c}\\b`).test(prompt));
  if (container && !given.some((e) => e.type === 'format')) added.push({ type: 'format', container });
  if (added.length === 0 && given.length === 0) added.push({ type: 'trim', startSeconds: 0, endSeconds: UNDERSTOOD_NOTHING_SECONDS });
  return [...given, ...added].slice(0, MAX_STEPS);
}
