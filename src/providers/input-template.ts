/** The strings of a model input template (docs/providers.md "Input templates") that stand for input fields. */
const TEMPLATE = /^\{\{([A-Za-z][A-Za-z0-9]*)(?:\.(\d{1,2}))?\}\}$/;

/**
 * A model input template string: "{{field}}" (the input field) or "{{field.N}}" (element N, from
 * 0, of a list field: a model that takes one image gets the first of referenceMediaIds as
 * "{{referenceMediaIds.0}}"); undefined for any other string.
 */
export function parseTemplate(text: string): { field: string; index?: number } | undefined {
  const m = TEMPLATE.exec(text);
  if (!m) return undefined;
  return m[2] === undefined ? { field: m[1]! } : { field: m[1]!, index: Number(m[2]) };
}
