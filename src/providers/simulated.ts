/**
 * The simulated provider (decisions.md "Simulated provider"): does no paid work, returns small
 * valid files of the right type, reports progress and costs, and obeys `[sim:…]` directives in
 * the operation's main text so every job path can be exercised end to end.
 *
 * A chat reply whose caller streams it (ProviderRun.onText) is handed over word by word, spread
 * over the last step's share of the delay; a caller that goes away mid-reply stops it, and the
 * step is charged for the share of its words already sent.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { OperationContract } from '../operations/contract.js';
import { SPRITE_ENGINES } from '../operations/sprite-generate.js';
import { SECURITY_CHECKS } from '../operations/security-scan.js';
import { makeGlb, makeMp4, makePng, makeWav } from './sim-files.js';
import { simulatedEditPlan } from './sim-edit-plan.js';
import { readVoiceReference } from './voices.js';
import { ProviderError, ProviderInterrupted, type ProducedFile, type Provider, type ProviderResult, type ProviderRun } from './types.js';

export interface SimDirectives {
  delay?: number;
  steps?: number;
  fail?: string;
  failAt?: number;
  outputBytes?: number;
  cost?: number;
}

const MAX_DELAY_MS = 600_000;
const MAX_OUTPUT_BYTES = 20 * 1024 * 1024;
/** Seconds of the clip a simulated video.edit returns. */
const SIMULATED_EDIT_SECONDS = 5;

export function parseDirectives(text: string | undefined): SimDirectives {
  const d: SimDirectives = {};
  if (!text) return d;
  for (const m of text.matchAll(/\[sim:([a-zA-Z]+)=([^\]\s]{1,64})\]/g)) {
    const [, name, value] = m as unknown as [string, string, string];
    const n = Number(value);
    const whole = Number.isSafeInteger(n) && n >= 0 ? n : undefined;
    switch (name) {
      case 'delay':
        if (whole !== undefined) d.delay = Math.min(whole, MAX_DELAY_MS);
        break;
      case 'steps':
        if (whole !== undefined && whole >= 1) d.steps = Math.min(whole, 1000);
        break;
      case 'fail':
        if (/^[A-Z0-9_]{1,64}$/.test(value)) d.fail = value;
        break;
      case 'failAt':
        if (whole !== undefined) d.failAt = whole;
        break;
      case 'outputBytes':
        if (whole !== undefined) d.outputBytes = Math.min(whole, MAX_OUTPUT_BYTES);
        break;
      case 'cost':
        if (whole !== undefined) d.cost = whole;
        break;
    }
  }
  return d;
}

/** Steps a job runs in on the simulated provider (the directive wins over the operation's own count). */
function simulatedSteps(op: OperationContract, input: Record<string, unknown>): number {
  return parseDirectives(op.mainText(input)).steps ?? op.steps(input);
}

/** Cost of step `step` (1-based) when `total` is spread over `steps` steps; the remainder goes to the last. */
export function stepCost(total: number, steps: number, step: number): number {
  const base = Math.floor(total / steps);
  return step === steps ? total - base * (steps - 1) : base;
}

function stepFiles(job: ProviderRun, step: number): ProducedFile[] {
  const i = step - 1;
  switch (job.operation.id) {
    case 'sprite.generate': {
      const w = Number(job.input.frameWidth ?? 64);
      const h = Number(job.input.frameHeight ?? 64);
      return [{ field: 'frames', index: i, name: `frame-${String(step).padStart(3, '0')}.png`, mimeType: 'image/png', bytes: makePng(w, h, step) }];
    }
    case 'image.generate':
    case 'headshot.generate': {
      const w = Math.min(Number(job.input.width ?? 64), 64);
      const h = Math.min(Number(job.input.height ?? 64), 64);
      return [{ field: 'images', index: i, name: `image-${step}.png`, mimeType: 'image/png', bytes: makePng(w, h, step) }];
    }
    default:
      return [];
  }
}

function finalResult(job: ProviderRun, d: SimDirectives): { data: Record<string, unknown>; files: ProducedFile[] } {
  const input = job.input;
  const files: ProducedFile[] = [];
  const data: Record<string, unknown> = { provider: job.route.providerName, model: job.route.model ?? 'simulated' };
  switch (job.operation.id) {
    case 'chat.generate': {
      data.message = { role: 'assistant', content: simulatedReply(job) };
      data.finishReason = 'stop';
      break;
    }
    case 'speech.generate':
    case 'music.generate': {
      const seconds = job.operation.id === 'music.generate' ? Math.min(job.operation.quantities(input).maximum.seconds ?? 1, 2) : 1;
      files.push({ field: 'audio', name: `${job.operation.toolSlug}.wav`, mimeType: 'audio/wav', bytes: makeWav(seconds) });
      data.durationSeconds = seconds;
      break;
    }
    case 'background.remove':
      files.push({ field: 'image', name: 'cutout.png', mimeType: 'image/png', bytes: makePng(64, 64, 7) });
      break;
    case 'video.generate':
    case 'video.edit': {
      // The length asked for (video.generate), or a fixed clip for an edit (its input names no length).
      const seconds = job.operation.quantities(input).maximum.seconds ?? SIMULATED_EDIT_SECONDS;
      files.push({ field: 'video', name: 'video.mp4', mimeType: 'video/mp4', bytes: makeMp4(seconds) });
      data.durationSeconds = seconds;
      // The steps that "ran": the given edits, or the simulated chat model's plan of the prompt.
      if (job.operation.id === 'video.edit') data.steps = simulatedEditPlan(input);
      break;
    }
    case 'three-d.generate':
    case 'three-d.rig':
      files.push({ field: 'glb', name: 'model.glb', mimeType: 'model/gltf-binary', bytes: makeGlb(job.operation.id) });
      break;
    case 'voice.clone':
      data.voice = { id: `sim-voice-${job.jobId.slice(-12)}`, name: String(input.name ?? 'voice') };
      files.push({ field: 'sample', name: 'sample.wav', mimeType: 'audio/wav', bytes: makeWav(1) });
      break;
    case 'sprite.generate': {
      const frames = job.stepsTotal;
      const w = Number(input.frameWidth ?? 64);
      const h = Number(input.frameHeight ?? 64);
      files.push({ field: 'atlas', name: 'atlas.png', mimeType: 'image/png', bytes: makePng(Math.min(w * frames, 4096), h, 99) });
      files.push({ field: 'strips', index: 0, name: 'strip-0.png', mimeType: 'image/png', bytes: makePng(Math.min(w * frames, 4096), h, 98) });
      const engines = (input.engines as string[] | undefined) ?? [...SPRITE_ENGINES];
      data.exports = Object.fromEntries(
        engines.map((engine) => [
          engine,
          {
            format: engine,
            frameWidth: w,
            frameHeight: h,
            frames: Array.from({ length: frames }, (_, i) => ({ index: i, x: i * w, y: 0, durationMs: 100 })),
          },
        ]),
      );
      break;
    }
    case 'link.preview': {
      // Test mode's link.preview (lib/livemode.ts): nothing is fetched.
      const url = String(input.url);
      let host: string | null = null;
      try {
        host = new URL(url).hostname;
      } catch {
        host = null;
      }
      data.metadata = { title: `Simulated preview of ${host ?? url}`, description: 'A simulated link preview: test mode fetches nothing.', image: null, url, siteName: host, favicon: null };
      break;
    }
    case 'security.scan':
      data.url = input.url;
      data.checks = SECURITY_CHECKS.map((id) => ({ id, status: 'pass', summary: `Simulated ${id} check passed.` }));
      break;
    default:
      break;
  }
  if (d.outputBytes !== undefined) data.text = filler(d.outputBytes);
  return { data, files };
}

/** About `bytes` UTF-8 bytes of text mixing 1-, 2-, 3- and 4-byte characters (exercises fragment boundaries). */
export function filler(bytes: number): string {
  const unit = 'Déjà vu € 😀 ';
  const unitBytes = Buffer.byteLength(unit);
  const text = unit.repeat(Math.floor(bytes / unitBytes));
  return text + 'x'.repeat(bytes - Buffer.byteLength(text));
}

/** How long simulated work takes when its text gives no `[sim:delay=…]` (decisions.md: 50 ms). */
export const SIMULATED_DEFAULT_DELAY_MS = 50;

/**
 * The simulated provider. `defaultDelayMs` is the work time of a job whose text names no delay:
 * decisions.md's 50 ms unless the operator sets SIMULATED_DELAY_MS (the test suite sets 0, so
 * thousands of simulated jobs do not each sleep 50 ms; tests that need time name a delay).
 */
export function createSimulatedProvider(options: { defaultDelayMs: number } = { defaultDelayMs: SIMULATED_DEFAULT_DELAY_MS }): Provider {
  // Speaks with any workspace voice: it reads the voice's reference audio and checks its sha256.
  return { name: 'simulated', steps: simulatedSteps, takesVoices: () => true, run: (job) => runSimulated(job, options.defaultDelayMs) };
}

async function runSimulated(job: ProviderRun, defaultDelayMs: number): Promise<ProviderResult> {
  const d = parseDirectives(job.operation.mainText(job.input));
  const steps = job.stepsTotal;
  const fullMaximum = job.route.price(job.input).maximumMillicents;
  const total = Math.min(d.cost ?? fullMaximum, fullMaximum);
  const perStepDelay = (d.delay ?? defaultDelayMs) / steps;
  // The voice's reference audio is read as a real speaker-audio model would be sent it.
  if (job.voice) await readVoiceReference(job);
  for (let step = job.stepsDone + 1; step <= steps; step++) {
    if (d.failAt !== undefined && job.attempt === 1 && step === d.failAt + 1) {
      throw new ProviderError(d.fail ?? 'SIMULATED_FAILURE', `Simulated failure after ${d.failAt} steps.`);
    }
    if (job.onText && job.operation.id === 'chat.generate' && step === steps) await streamReply(job, perStepDelay, stepCost(total, steps, step));
    else await sleep(perStepDelay, undefined, { signal: job.signal });
    await job.checkpoint({ stepsDone: step, costMillicents: stepCost(total, steps, step), files: stepFiles(job, step) });
    await job.progress((step / steps) * 100);
  }
  if (d.fail !== undefined && d.failAt === undefined) throw new ProviderError(d.fail, `Simulated failure ${d.fail}.`);
  const { data, files } = finalResult(job, d);
  if (job.voice) data.voiceId = job.voice.id;
  return { data, files, costMillicents: 0 };
}

/** The simulated chat reply: it quotes the last message. */
function simulatedReply(job: ProviderRun): string {
  return `Simulated reply to: ${(job.operation.mainText(job.input) ?? '').slice(0, 200)}`;
}

/**
 * The reply handed to onText word by word (each word with the spaces after it, so the pieces join
 * into the reply), over `delayMs`. Stopped by the caller, it is charged the share of `stepMillicents`
 * its words already sent make.
 */
async function streamReply(job: ProviderRun, delayMs: number, stepMillicents: number): Promise<void> {
  const reply = simulatedReply(job);
  const words = reply.match(/\S+\s*/g) ?? [reply];
  const pause = delayMs / words.length;
  for (let i = 0; i < words.length; i++) {
    try {
      if (pause > 0) await sleep(pause, undefined, { signal: job.signal });
      else job.signal.throwIfAborted();
    } catch (err) {
      if (job.signal.aborted) throw new ProviderInterrupted(Math.floor((stepMillicents * i) / words.length));
      throw err;
    }
    job.onText!(words[i]!);
  }
}
