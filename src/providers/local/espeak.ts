/**
 * The `espeak-ng` local engine: speech.generate on the service's own machine. The text goes to
 * espeak-ng on stdin (never as an argument, so a text such as "--help" is spoken, not parsed),
 * which writes a WAV to stdout; mp3 is that WAV piped through ffmpeg. Voices are the ones the
 * installed espeak-ng lists at start-up, served as the `voice` enum of the input schema, with
 * `rate` (words per minute) and `pitch` beside the operation's fields.
 *
 * Invariant: a run either returns one checked audio file (sniffed and inspected like an upload)
 * whose duration is that of the speech espeak-ng produced, charged per character of the text, or
 * fails with PROVIDER_TIMEOUT (the route's `timeoutSeconds` passed), PROVIDER_REJECTED (the speech
 * would pass MAX_WAV_BYTES, or the job asks for a voice or mp3 this deployment no longer has) or
 * PROVIDER_ERROR (a program failed or wrote no valid audio) and charges nothing: the work is the
 * service's own, and a failed run produced nothing to keep. A cancel or a stopping worker aborts
 * the program and passes the abort on unchanged (the executor decides what it means).
 * Every program runs through runProgram in a work directory, so none outlives the run.
 */
import type { TSchema } from 'typebox';
import { integer, oneOf, type OperationContract } from '../../operations/contract.js';
import { characterCount } from '../../operations/pricing.js';
import { checkProviderFile } from '../provider-files.js';
import type { LocalContext } from '../types.js';
import { ProviderError, type Provider, type ProviderResult, type ProviderRun } from '../types.js';
import { ProgramFailure, runProgram, withWorkDir } from './process.js';

/**
 * Largest WAV accepted from espeak-ng: 96 MiB, about 38 minutes of its 22,050 Hz 16-bit mono
 * output. 5,000 characters of ordinary text at the slowest rate take about 12 minutes; only a
 * text built to be slow (thousands of spelled-out numbers) comes near, and it is refused rather
 * than held in memory without bound.
 */
export const MAX_WAV_BYTES = 96 * 1024 * 1024;
/** Bitrate of the mp3 encoding: ample for espeak-ng's 22 kHz mono speech. */
const MP3_BITRATE = '64k';
export const RATE = { min: 80, max: 450, default: 175 } as const;
export const PITCH = { min: 0, max: 99, default: 50 } as const;
/** Voices preferred as the default, in order, when installed. */
const DEFAULT_VOICES = ['en-us', 'en', 'en-gb'];

export function espeakEngine(ctx: LocalContext): Provider {
  const voices = ctx.engines.espeak?.voices ?? [];
  const defaultVoice = DEFAULT_VOICES.find((v) => voices.some((x) => x.name === v)) ?? voices[0]?.name;
  // mp3 is encoded by ffmpeg: without it only wav can be honoured.
  const mp3 = ctx.engines.ffmpeg !== undefined;

  const inputSchema = (op: OperationContract) => espeakInputSchema(op, voices, defaultVoice, mp3);

  async function run(job: ProviderRun): Promise<ProviderResult> {
    const espeak = ctx.engines.espeak;
    if (!espeak) throw new ProviderError('PROVIDER_ERROR', 'espeak-ng is not installed on this deployment.');
    const text = typeof job.input.text === 'string' ? job.input.text : '';
    const voice = typeof job.input.voice === 'string' ? job.input.voice : defaultVoice;
    const rate = wholeIn(job.input.rate, RATE);
    const pitch = wholeIn(job.input.pitch, PITCH);
    // Admission checked the input against this deployment's schema; a job admitted before a
    // restart on other programs may still ask for what is no longer there.
    if (voice !== undefined && voices.length > 0 && !voices.some((v) => v.name === voice)) {
      throw new ProviderError('PROVIDER_REJECTED', `The espeak-ng voice "${voice}" is not installed on this deployment.`);
    }
    if (job.input.format === 'mp3' && !mp3) throw new ProviderError('PROVIDER_REJECTED', 'mp3 needs ffmpeg, which is not installed on this deployment.');
    const format = job.input.format === 'wav' || !mp3 ? 'wav' : 'mp3';
    // One deadline for the whole run, espeak-ng and ffmpeg together.
    const deadline = Date.now() + (job.route.spec?.timeoutSeconds ?? 600) * 1000;
    const remaining = () => Math.max(1, deadline - Date.now());

    const bytes = await speak(ctx, job, { path: espeak.path, args: espeakArgs(voice, rate, pitch), text, format }, remaining);

    const file = await checkProviderFile(bytes.bytes, 'audio', 'audio', 'speech');
    const characters = characterCount(text);
    return {
      data: { provider: job.route.providerName, model: job.route.model, format, characters, durationSeconds: bytes.seconds },
      files: [file],
      costMillicents: job.charge({ characters }),
    };
  }

  return { name: 'local', steps: () => 1, inputSchema, run };
}

/** The speech.generate schema this engine honours: the installed voices, mp3 only with ffmpeg, rate and pitch. */
function espeakInputSchema(op: OperationContract, voices: readonly { name: string; description: string }[], defaultVoice: string | undefined, mp3: boolean): TSchema {
  const base = op.inputSchema as unknown as { properties: Record<string, unknown>; required: string[] };
  const properties: Record<string, unknown> = { ...base.properties };
  if (voices.length > 0) {
    const examples = voices
      .filter((v) => ['en-us', 'en-gb', 'fr-fr', 'de', 'es', 'it', 'ja', 'cmn'].includes(v.name))
      .map((v) => `${v.name} (${v.description.replace(/ \([^()]*\)$/, '')})`);
    properties.voice = {
      type: 'string',
      enum: voices.map((v) => v.name),
      default: defaultVoice,
      description: `An espeak-ng voice, named by its language: ${voices.length} are installed${examples.length ? `, e.g. ${examples.join(', ')}` : ''}.`,
    };
  }
  properties.format = mp3
    ? oneOf(['mp3', 'wav'], 'mp3')
    : { ...(oneOf(['wav'], 'wav') as object), description: 'wav only: mp3 needs ffmpeg, which is not installed on this deployment.' };
  properties.rate = { ...(integer(RATE.min, RATE.max, RATE.default) as object), description: 'Speaking rate in words per minute.' };
  properties.pitch = { ...(integer(PITCH.min, PITCH.max, PITCH.default) as object), description: 'Pitch adjustment, 0 (lowest) to 99 (highest).' };
  return { ...base, properties } as unknown as TSchema;
}

/** Runs espeak-ng on the text (and ffmpeg for mp3) in a work directory of its own; the audio and its length. */
async function speak(
  ctx: LocalContext,
  job: ProviderRun,
  o: { path: string; args: string[]; text: string; format: 'wav' | 'mp3' },
  remaining: () => number,
): Promise<{ bytes: Buffer; seconds: number | undefined }> {
  return withWorkDir(async (dir) => {
    const spoken = await guard(runProgram({ path: o.path, args: o.args, stdin: o.text, timeoutMs: remaining(), maxStdoutBytes: MAX_WAV_BYTES, signal: job.signal }, dir), 'espeak-ng');
    const wav = fixWavHeader(spoken.stdout);
    if (o.format === 'wav') return wav;
    await job.progress(50);
    const encoded = await guard(
      runProgram({ path: ctx.engines.ffmpeg!.path, args: MP3_ARGS, stdin: wav.bytes, timeoutMs: remaining(), maxStdoutBytes: MAX_WAV_BYTES, signal: job.signal }, dir),
      'ffmpeg',
    );
    return { ...wav, bytes: encoded.stdout };
  });
}

/** espeak-ng's arguments: UTF-8 text read whole from stdin, WAV to stdout. */
export function espeakArgs(voice: string | undefined, rate: number, pitch: number): string[] {
  return ['-b', '1', ...(voice ? ['-v', voice] : []), '-s', String(rate), '-p', String(pitch), '--stdin', '--stdout'];
}

/** ffmpeg reading a WAV on stdin and writing mp3 to stdout; no file or network protocol. */
const MP3_ARGS = [
  '-nostdin',
  '-hide_banner',
  '-loglevel',
  'error',
  '-protocol_whitelist',
  'pipe',
  '-f',
  'wav',
  '-i',
  'pipe:0',
  '-vn',
  '-map_metadata',
  '-1',
  '-c:a',
  'libmp3lame',
  '-b:a',
  MP3_BITRATE,
  '-f',
  'mp3',
  'pipe:1',
];

function wholeIn(v: unknown, range: { min: number; max: number; default: number }): number {
  return typeof v === 'number' && Number.isInteger(v) && v >= range.min && v <= range.max ? v : range.default;
}

/** A program's failure as the job's errorCode; an abort (cancel, shutdown) passes through as is. */
async function guard<T>(work: Promise<T>, program: string): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (!(err instanceof ProgramFailure)) throw err;
    const tail = err.stderr.trim().split('\n').pop()?.slice(0, 200);
    switch (err.kind) {
      case 'timeout':
        throw new ProviderError('PROVIDER_TIMEOUT', `${program} did not finish within the route's timeoutSeconds.`);
      case 'too-large':
        throw new ProviderError('PROVIDER_REJECTED', `The speech would be longer than the engine's bound of ${MAX_WAV_BYTES / 1024 / 1024} MiB of audio.`);
      default:
        throw new ProviderError('PROVIDER_ERROR', `${program} failed: ${err.message}${tail ? ` (${tail})` : ''}`);
    }
  }
}

/**
 * Checks espeak-ng's streamed WAV (PCM, one `data` chunk) and writes the true sizes into its
 * header: written to a pipe, espeak-ng cannot seek back and leaves placeholders near 2 GiB, which
 * players and inspectors would read as a broken file. Returns the fixed bytes and the duration.
 */
export function fixWavHeader(raw: Buffer): { bytes: Buffer; seconds: number } {
  const bad = (why: string) => new ProviderError('PROVIDER_ERROR', `espeak-ng wrote no valid WAV audio (${why}).`);
  if (raw.length < 12 || raw.toString('latin1', 0, 4) !== 'RIFF' || raw.toString('latin1', 8, 12) !== 'WAVE') throw bad('no RIFF/WAVE header');
  let byteRate = 0;
  let blockAlign = 0;
  for (let o = 12; o + 8 <= raw.length; ) {
    const id = raw.toString('latin1', o, o + 4);
    const size = raw.readUInt32LE(o + 4);
    if (id === 'fmt ') {
      if (size < 16 || o + 24 > raw.length) throw bad('short fmt chunk');
      if (raw.readUInt16LE(o + 8) !== 1) throw bad('not PCM');
      byteRate = raw.readUInt32LE(o + 16);
      blockAlign = raw.readUInt16LE(o + 20);
    } else if (id === 'data') {
      if (byteRate === 0 || blockAlign === 0) throw bad('data before a valid fmt chunk');
      // Whole sample frames only: a cut-off last frame is dropped.
      const dataBytes = raw.length - o - 8 - ((raw.length - o - 8) % blockAlign);
      if (dataBytes <= 0) throw bad('no audio samples');
      const bytes = raw.subarray(0, o + 8 + dataBytes);
      bytes.writeUInt32LE(bytes.length - 8, 4);
      bytes.writeUInt32LE(dataBytes, o + 4);
      return { bytes, seconds: Math.round((dataBytes / byteRate) * 1000) / 1000 };
    }
    if (size > raw.length) break;
    o += 8 + size + (size % 2);
  }
  throw bad('no data chunk');
}
