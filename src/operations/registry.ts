/**
 * The one list of Tool operations, grouped into the tools GET /v1/tools returns, and what is
 * derived from their contracts: points, typical inputs, prices at a providers file's parameters.
 */
import type { OperationContract, TypicalInput } from './contract.js';
import type { OperationId } from './ids.js';
import { priceOf, type Price, type PriceParams, type Quantities } from './pricing.js';
import { linkPreview } from './link-preview.js';
import { chatGenerate } from './chat-generate.js';
import { speechGenerate } from './speech-generate.js';
import { imageGenerate } from './image-generate.js';
import { headshotGenerate } from './headshot-generate.js';
import { backgroundRemove } from './background-remove.js';
import { videoGenerate } from './video-generate.js';
import { videoEdit } from './video-edit.js';
import { musicGenerate } from './music-generate.js';
import { threeDGenerate } from './three-d-generate.js';
import { threeDRig } from './three-d-rig.js';
import { spriteGenerate } from './sprite-generate.js';
import { voiceClone } from './voice-clone.js';
import { securityScan } from './security-scan.js';

export const OPERATIONS: readonly OperationContract[] = [
  linkPreview,
  chatGenerate,
  speechGenerate,
  imageGenerate,
  headshotGenerate,
  backgroundRemove,
  videoGenerate,
  videoEdit,
  musicGenerate,
  threeDGenerate,
  threeDRig,
  spriteGenerate,
  voiceClone,
  securityScan,
];

const BY_ID = new Map<string, OperationContract>(OPERATIONS.map((op) => [op.id, op]));

export function findOperation(id: string): OperationContract | undefined {
  return BY_ID.get(id);
}

export function operationPoints(id: OperationId): number {
  return BY_ID.get(id)!.points;
}

/** An input that stands for the usual case of an operation (tool descriptions quote its price). */
export function typicalInputOf(id: OperationId): TypicalInput {
  return BY_ID.get(id)!.typicalInput;
}

/**
 * Estimated and maximum cost of a run of `opId` at a providers file's prices: the operation's
 * quantities for `input` (prediction time bounded by the route's deadline), priced at `params`.
 * `adapterBound`: quantities an adapter bounds itself.
 */
export function priceFromParams(params: PriceParams, opId: OperationId, input: Record<string, unknown>, predictDeadlineSeconds: number, adapterBound?: Quantities): Price {
  return priceOf(params, BY_ID.get(opId)!.quantities(input), predictDeadlineSeconds, adapterBound);
}

export interface ToolDescriptor {
  slug: string;
  name: string;
  description: string;
  operations: OperationContract[];
}

const TOOL_TEXT: Record<string, { name: string; description: string }> = {
  link: { name: 'Link preview', description: 'Title, description, image, site name and icon of a web page.' },
  chat: { name: 'Chat', description: 'Text generation from a conversation.' },
  speech: { name: 'Speech', description: 'Spoken audio from text.' },
  image: { name: 'Images', description: 'Image generation, headshots and background removal.' },
  video: { name: 'Video', description: 'Video generation and editing.' },
  music: { name: 'Music', description: 'Music tracks from a prompt.' },
  'three-d': { name: '3D', description: '3D models (GLB) and rigging.' },
  sprite: { name: 'Sprites', description: 'Animated sprites with engine exports, atlas, strips and frames.' },
  voice: { name: 'Voice', description: 'Voice cloning from audio samples.' },
  security: { name: 'Security scan', description: 'Passive security checks of an HTTPS site.' },
};

export const TOOLS: readonly ToolDescriptor[] = Object.entries(TOOL_TEXT).map(([slug, text]) => ({
  slug,
  ...text,
  operations: OPERATIONS.filter((op) => op.toolSlug === slug),
}));
