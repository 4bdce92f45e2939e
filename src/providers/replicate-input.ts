/**
 * The model input of a Replicate prediction: the route's template filled from the job's input,
 * media fields as signed URLs or data URIs of the media items (the providers file's mediaInputs),
 * and "{{voiceId}}" as the reference audio of the workspace voice the input names (issue 37).
 */
import type { ProviderRun } from './types.js';
import { ProviderError } from './types.js';
import { readVoiceReference } from './voices.js';
import { parseTemplate } from './input-template.js';


/** The reference audio of the job's voice as the model is sent media: a signed URL, or a data URI of the checked bytes. */
async function voiceAudio(job: ProviderRun, mediaInputs: 'url' | 'dataUri'): Promise<string> {
  if (mediaInputs === 'dataUri') {
    const { bytes, mimeType } = await readVoiceReference(job);
    return `data:${mimeType};base64,${bytes.toString('base64')}`;
  }
  return job.media.signedUrl(job.voice!.referenceMediaId);
}

/**
 * The model input: the route's template with every "{{field}}" string replaced by that input
 * field and every "{{field.N}}" by element N of a list field (an absent one drops the key), other values as written; without a template the
 * operation's input. Media fields become signed URLs (or data URIs) of the media items.
 */
export async function modelInput(job: ProviderRun, mediaInputs: 'url' | 'dataUri'): Promise<Record<string, unknown>> {
  const media = new Map(job.operation.mediaFields.map((f) => [f.field, f]));
  const resolved = new Map<string, unknown>();
  const value = async (field: string): Promise<unknown> => {
    if (resolved.has(field)) return resolved.get(field);
    if (field === job.operation.voiceField) {
      // The workspace voice becomes its reference audio (a speaker-audio model's input).
      const v = job.voice ? await voiceAudio(job, mediaInputs) : undefined;
      resolved.set(field, v);
      return v;
    }
    let v = job.input[field];
    if (v !== undefined && media.has(field)) {
      const one = async (id: unknown) => {
        if (typeof id !== 'string') throw new ProviderError('PROVIDER_REJECTED', `The input field ${field} does not name media items.`);
        if (mediaInputs === 'dataUri') {
          const { bytes, mimeType } = await job.media.read(id);
          return `data:${mimeType};base64,${bytes.toString('base64')}`;
        }
        return job.media.signedUrl(id);
      };
      v = Array.isArray(v) ? await Promise.all(v.map(one)) : await one(v);
    }
    resolved.set(field, v);
    return v;
  };
  const OMIT = Symbol('omit');
  const fill = async (t: unknown): Promise<unknown> => {
    if (typeof t === 'string') {
      const parsed = parseTemplate(t);
      if (!parsed) return t;
      const v = await value(parsed.field);
      // "{{field.N}}": element N of a list field; absent (a shorter list) drops the key, as an absent field does.
      const picked = parsed.index === undefined ? v : Array.isArray(v) ? v[parsed.index] : undefined;
      return picked === undefined ? OMIT : picked;
    }
    if (Array.isArray(t)) return (await Promise.all(t.map(fill))).filter((v) => v !== OMIT);
    if (typeof t === 'object' && t !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(t)) {
        const filled = await fill(v);
        if (filled !== OMIT) out[k] = filled;
      }
      return out;
    }
    return t;
  };
  const template = job.route.spec?.input;
  if (template) return (await fill(template)) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(job.input)) {
    const v = await value(k);
    if (v !== undefined) out[k] = v;
  }
  return out;
}
