/** The fourteen stable Tool operation identifiers of the spec, with their usage-point weights. */
export const OPERATION_POINTS = {
  'link.preview': 4,
  'chat.generate': 10,
  'speech.generate': 15,
  'image.generate': 25,
  'headshot.generate': 35,
  'background.remove': 15,
  'video.generate': 100,
  'video.edit': 120,
  'music.generate': 50,
  'three-d.generate': 100,
  'three-d.rig': 50,
  'sprite.generate': 200,
  'voice.clone': 75,
  'security.scan': 80,
} as const;

export type OperationId = keyof typeof OPERATION_POINTS;

export const OPERATION_IDS = Object.keys(OPERATION_POINTS) as OperationId[];

export function isOperationId(value: string): value is OperationId {
  return Object.hasOwn(OPERATION_POINTS, value);
}
