/**
 * A typical input of each operation, to quote a price before the caller has one of its own (the
 * MCP per-operation tools state the estimated and maximum cost of this input in their
 * description). Defaults are written out so every price function sees the usual case; a media id
 * is one fixed example UUID (prices count media inputs, never read them). The quote is what this deployment's
 * price (the providers file, else the price book) makes of the input; the real figures of a
 * call come from POST /v1/estimates.
 */
import type { OperationId } from '../../operations/ids.js';

const MEDIA = '00000000-0000-4000-8000-000000000000';

export interface TypicalInput {
  /** What the input is, in words, for the description. */
  summary: string;
  input: Record<string, unknown>;
}

export const TYPICAL_INPUTS: Record<OperationId, TypicalInput> = {
  'link.preview': { summary: 'one web page', input: { url: 'https://example.com/' } },
  'chat.generate': {
    summary: 'a 500-character question, up to 512 tokens of answer',
    input: { messages: [{ role: 'user', content: 'x'.repeat(500) }], maxTokens: 512 },
  },
  'speech.generate': { summary: '1,000 characters of text', input: { text: 'x'.repeat(1000), format: 'mp3' } },
  'image.generate': { summary: 'one 1024×1024 image', input: { prompt: 'a lighthouse at dawn', width: 1024, height: 1024, count: 1 } },
  'headshot.generate': { summary: 'one headshot from 3 photos', input: { referenceMediaIds: [MEDIA, MEDIA, MEDIA], count: 1 } },
  'background.remove': { summary: 'one image', input: { mediaId: MEDIA } },
  'video.generate': { summary: 'a 5-second 16:9 clip', input: { prompt: 'waves on a beach', durationSeconds: 5, aspectRatio: '16:9' } },
  'video.edit': { summary: 'two edit steps (trim, resize)', input: { mediaId: MEDIA, edits: [{ type: 'trim', startSeconds: 0, endSeconds: 5 }, { type: 'resize', width: 640, height: 360 }] } },
  'music.generate': { summary: '30 seconds of music', input: { prompt: 'a calm piano tune', durationSeconds: 30, format: 'mp3' } },
  'three-d.generate': { summary: 'one model from a prompt', input: { prompt: 'a wooden chair' } },
  'three-d.rig': { summary: 'one model', input: { mediaId: MEDIA } },
  'sprite.generate': { summary: '8 frames of 64×64', input: { prompt: 'a walking knight', frames: 8, frameWidth: 64, frameHeight: 64 } },
  'voice.clone': { summary: 'one voice from 2 recordings', input: { referenceMediaIds: [MEDIA, MEDIA], name: 'Narrator' } },
  'security.scan': { summary: 'one site', input: { url: 'https://example.com/' } },
};
