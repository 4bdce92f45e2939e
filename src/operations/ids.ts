/**
 * The fourteen stable Tool operation identifiers of the spec: a list with no other import, for
 * schemas and the command line. Everything else about an operation is in its contract
 * (operations/<name>.ts; registry.ts is the one list of contracts).
 */
const IDS_IN_ORDER = [
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

export type OperationId = (typeof IDS_IN_ORDER)[number];

export const OPERATION_IDS: OperationId[] = [...IDS_IN_ORDER];

const IDS: ReadonlySet<string> = new Set(IDS_IN_ORDER);

export function isOperationId(value: string): value is OperationId {
  return IDS.has(value);
}
