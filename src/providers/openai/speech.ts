/** speech.generate on an `openai` provider: POST /audio/speech, priced by the characters spoken. */
import { characterCount } from '../../operations/pricing.js';
import { AnswerTooLarge } from '../http.js';
import { checkProviderFile } from '../provider-files.js';
import type { ProviderResult, ProviderRun } from '../types.js';
import { isConnectionError, type OpenAiCalls } from './calls.js';
import { OPENAI_MAX_BYTES } from './limits.js';

export async function runSpeech({ clientFor, guarded }: OpenAiCalls, job: ProviderRun): Promise<ProviderResult> {
  const text = String(job.input.text ?? '');
  const format = job.input.format === 'wav' ? 'wav' : 'mp3';
  const voice = typeof job.input.voice === 'string' ? job.input.voice : (job.route.spec?.voice ?? 'alloy');
  const model = job.route.model!;
  const characters = characterCount(text);
  const api = await clientFor(job, OPENAI_MAX_BYTES.speech);
  let answered = false;
  return guarded(
    job,
    async () => {
      let res: Response;
      try {
        res = await api.audio.speech.create({ model, input: text, voice, response_format: format }, { signal: job.signal });
      } catch (err) {
        // Audio over the bound is an unusable answer to work the provider did: its characters are charged.
        if (err instanceof AnswerTooLarge || (isConnectionError(err) && err.cause instanceof AnswerTooLarge)) answered = true;
        throw err;
      }
      const bytes = Buffer.from(await res.arrayBuffer());
      answered = true;
      const file = await checkProviderFile(bytes, 'audio', 'audio', 'speech');
      const durationSeconds = file.mimeType === 'audio/wav' ? wavSeconds(bytes) : undefined;
      return {
        data: {
          provider: job.route.providerName,
          model,
          format: file.mimeType === 'audio/wav' ? 'wav' : file.mimeType === 'audio/mpeg' ? 'mp3' : file.name.split('.').pop(),
          characters,
          ...(durationSeconds !== undefined ? { durationSeconds } : {}),
        },
        files: [file],
        costMillicents: job.charge({ characters }),
      };
    },
    () => (answered ? job.charge({ characters }) : 0),
  );
}


/** Seconds of a PCM WAV from its fmt and data chunks; undefined when the header does not say. */
export function wavSeconds(bytes: Buffer): number | undefined {
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  let byteRate: number | undefined;
  for (let o = 12; o + 8 <= bytes.length; ) {
    const id = bytes.toString('latin1', o, o + 4);
    const size = bytes.readUInt32LE(o + 4);
    if (id === 'fmt ' && o + 20 <= bytes.length) byteRate = bytes.readUInt32LE(o + 16);
    if (id === 'data') {
      if (!byteRate) return undefined;
      const dataBytes = Math.min(size, bytes.length - o - 8);
      return Math.round((dataBytes / byteRate) * 1000) / 1000;
    }
    o += 8 + size + (size % 2);
  }
  return undefined;
}

