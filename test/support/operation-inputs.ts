/**
 * A valid input of every operation, for suites that run all fourteen (results against their
 * contracts, test mode, the providers of a file): the media they read are uploaded into the
 * tenant's workspace first (an image, a recording, a video, a model). security.scan targets
 * `scanHost`, which the suite verifies in the workspace itself.
 */
import type { OperationId } from '../../src/operations/ids.js';
import { assertOk } from './assertions.js';
import type { TestContext } from './harness.js';
import { glb, mp4, png, upload, wav } from './media.js';
import type { Tenant } from './seed.js';

export interface InputMedia {
  image: string;
  audio: string;
  video: string;
  model: string;
}

export async function operationInputs(ctx: TestContext, t: Tenant, scanHost = 'scan.example.com'): Promise<{ inputs: Record<OperationId, Record<string, unknown>>; media: InputMedia }> {
  const id = async (bytes: Buffer, type: string, filename: string) => assertOk(await upload(ctx, t, bytes, { type, filename })).data.id as string;
  const media: InputMedia = {
    image: await id(await png(64, 64), 'image/png', 'in.png'),
    audio: await id(wav(), 'audio/wav', 'in.wav'),
    video: await id(mp4(), 'video/mp4', 'in.mp4'),
    model: await id(glb(), 'model/gltf-binary', 'in.glb'),
  };
  const inputs: Record<OperationId, Record<string, unknown>> = {
    'link.preview': { url: 'https://example.com/' },
    'chat.generate': { messages: [{ role: 'user', content: 'Hello' }], maxTokens: 16 },
    'speech.generate': { text: 'Hello there', format: 'wav' },
    'image.generate': { prompt: 'a cat', width: 256, height: 256, count: 1 },
    'headshot.generate': { referenceMediaIds: [media.image], count: 1 },
    'background.remove': { mediaId: media.image },
    'video.generate': { prompt: 'waves', durationSeconds: 2 },
    'video.edit': { mediaId: media.video, edits: [{ type: 'mute' }] },
    'music.generate': { prompt: 'calm piano', durationSeconds: 5 },
    'three-d.generate': { prompt: 'a chair' },
    'three-d.rig': { mediaId: media.model },
    'sprite.generate': { prompt: 'a walking knight', frames: 2, frameWidth: 16, frameHeight: 16 },
    'voice.clone': { referenceMediaIds: [media.audio], name: 'Narrator' },
    'security.scan': { url: `https://${scanHost}/` },
  };
  return { inputs, media };
}
