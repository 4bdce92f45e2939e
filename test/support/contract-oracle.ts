/**
 * The contract's own tables, written by hand from public-api-v1.md and decisions.md (never
 * imported from src/): the fourteen operation names, which are synchronous, the core input fields
 * of each operation with their bounds and defaults (decisions.md section 2), the plan defaults
 * (spec "Limits") and the Idempotency-Key window (decisions.md section 1).
 * test/runs/contract.test.ts checks the service against them: what GET /v1/tools serves, and what
 * estimates and runs accept at each bound and one past it.
 */

/** Spec "What the service does": the stable Tool operation identifiers, in the spec's order. */
export const SPEC_OPERATION_IDS = [
  'link.preview',
  'chat.generate',
  'speech.generate',
  'image.generate',
  'headshot.generate',
  'background.remove',
  'video.generate',
  'video.edit',
  'music.generate',
  'three-d.generate',
  'three-d.rig',
  'sprite.generate',
  'voice.clone',
  'security.scan',
] as const;

export type SpecOperationId = (typeof SPEC_OPERATION_IDS)[number];

/** decisions.md section 2: "link.preview and chat.generate are synchronous; the other twelve are queued." */
export const SPEC_SYNCHRONOUS: ReadonlySet<SpecOperationId> = new Set(['link.preview', 'chat.generate']);

/** The kinds of workspace media a media field names ("an image", "a video", "a GLB", "audio items"). */
export type SpecMediaKind = 'image' | 'audio' | 'video' | 'model';

/**
 * One core input field. Bounds are inclusive, in the unit the contract names: characters of a
 * string, items of a list, the value of a number. `past` values are one step outside a bound.
 */
export type SpecField =
  | { kind: 'text'; min: number; max?: number }
  | { kind: 'integer'; min: number; max: number; default?: number }
  | { kind: 'number'; min: number; max: number }
  | { kind: 'enum'; values: string[]; default?: string }
  | { kind: 'url'; schemes: ('http' | 'https')[] }
  | { kind: 'media'; media: SpecMediaKind }
  | { kind: 'mediaList'; media: SpecMediaKind; min?: number; max?: number }
  | { kind: 'messages'; min: number; max: number; roles: string[] }
  | { kind: 'edits'; steps: string[] }
  | { kind: 'any' };

export interface SpecOperationInput {
  /** Fields every input must hold. */
  required: string[];
  /** At least one of each group must be present ("`prompt` or `edits` or both"). */
  oneOf?: string[][];
  fields: Record<string, SpecField>;
}

/** decisions.md section 2, "Core input fields", table row by table row. */
export const SPEC_INPUTS: Record<SpecOperationId, SpecOperationInput> = {
  'link.preview': { required: ['url'], fields: { url: { kind: 'url', schemes: ['http', 'https'] } } },
  'chat.generate': {
    required: ['messages'],
    fields: {
      messages: { kind: 'messages', min: 1, max: 100, roles: ['system', 'user', 'assistant'] },
      maxTokens: { kind: 'integer', min: 1, max: 4096, default: 512 },
      temperature: { kind: 'number', min: 0, max: 2 },
    },
  },
  'speech.generate': {
    required: ['text'],
    fields: {
      text: { kind: 'text', min: 1, max: 5000 },
      voice: { kind: 'any' },
      format: { kind: 'enum', values: ['mp3', 'wav'], default: 'mp3' },
    },
  },
  'image.generate': {
    required: ['prompt'],
    fields: {
      prompt: { kind: 'text', min: 1, max: 4000 },
      width: { kind: 'integer', min: 256, max: 2048, default: 1024 },
      height: { kind: 'integer', min: 256, max: 2048, default: 1024 },
      count: { kind: 'integer', min: 1, max: 4, default: 1 },
      referenceMediaIds: { kind: 'mediaList', media: 'image', max: 4 },
    },
  },
  'headshot.generate': {
    required: ['referenceMediaIds'],
    fields: {
      referenceMediaIds: { kind: 'mediaList', media: 'image', min: 1, max: 10 },
      prompt: { kind: 'text', min: 1 },
      count: { kind: 'integer', min: 1, max: 4 },
    },
  },
  'background.remove': { required: ['mediaId'], fields: { mediaId: { kind: 'media', media: 'image' } } },
  'video.generate': {
    required: ['prompt'],
    fields: {
      prompt: { kind: 'text', min: 1 },
      durationSeconds: { kind: 'integer', min: 1, max: 20, default: 5 },
      aspectRatio: { kind: 'enum', values: ['16:9', '9:16', '1:1'] },
      referenceMediaIds: { kind: 'mediaList', media: 'image' },
    },
  },
  'video.edit': {
    required: ['mediaId'],
    oneOf: [['prompt', 'edits']],
    fields: {
      mediaId: { kind: 'media', media: 'video' },
      prompt: { kind: 'text', min: 1 },
      edits: { kind: 'edits', steps: ['trim', 'resize', 'mute', 'format'] },
    },
  },
  'music.generate': {
    required: ['prompt'],
    fields: {
      prompt: { kind: 'text', min: 1 },
      durationSeconds: { kind: 'integer', min: 5, max: 180, default: 30 },
      format: { kind: 'enum', values: ['mp3', 'wav'] },
    },
  },
  'three-d.generate': {
    required: [],
    oneOf: [['prompt', 'referenceMediaIds']],
    fields: { prompt: { kind: 'text', min: 1 }, referenceMediaIds: { kind: 'mediaList', media: 'image' } },
  },
  'three-d.rig': { required: ['mediaId'], fields: { mediaId: { kind: 'media', media: 'model' }, prompt: { kind: 'text', min: 1 } } },
  'sprite.generate': {
    required: ['prompt'],
    fields: {
      prompt: { kind: 'text', min: 1 },
      frames: { kind: 'integer', min: 1, max: 64, default: 8 },
      frameWidth: { kind: 'integer', min: 16, max: 512, default: 64 },
      frameHeight: { kind: 'integer', min: 16, max: 512, default: 64 },
      engines: { kind: 'any' },
    },
  },
  'voice.clone': {
    required: ['referenceMediaIds', 'name'],
    fields: {
      referenceMediaIds: { kind: 'mediaList', media: 'audio', min: 1, max: 5 },
      name: { kind: 'text', min: 1 },
      sampleText: { kind: 'text', min: 1 },
    },
  },
  'security.scan': { required: ['url'], fields: { url: { kind: 'url', schemes: ['https'] } } },
};

/** Spec "Limits", "Plan defaults": every cell of the table. */
export const SPEC_PLAN_DEFAULTS = {
  free: { pointsPerMinute: 240, pointsPerMonth: 10_000, activeKeys: 5, runningJobs: 1, waitingJobs: 3, streams: 0 },
  starter: { pointsPerMinute: 1_200, pointsPerMonth: 200_000, activeKeys: 20, runningJobs: 3, waitingJobs: 50, streams: 0 },
  pro: { pointsPerMinute: 3_600, pointsPerMonth: 1_000_000, activeKeys: 50, runningJobs: 6, waitingJobs: 100, streams: 3 },
} as const;

export type SpecPlan = keyof typeof SPEC_PLAN_DEFAULTS;

/** decisions.md section 1: an Idempotency-Key is kept 24 h. */
export const SPEC_IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** decisions.md section 1: the Idempotency-Key header is 1 to 128 characters (spec "Size and paging bounds"). */
export const SPEC_IDEMPOTENCY_KEY_LENGTH = { min: 1, max: 128 } as const;
