/**
 * The job snapshot's inline `output`: a bounded projection of the public result. Ordinary fields
 * are kept while they fit in 48 KB together; fields holding file links also count toward the
 * 60 KB bound of the whole projection. Whatever does not fit is named in `omittedFields`, and the
 * complete-output endpoint serves everything.
 */
export const ORDINARY_BUDGET_BYTES = 48 * 1024;
export const PROJECTION_BUDGET_BYTES = 60 * 1024;

function holdsFileLink(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsFileLink);
  if (value !== null && typeof value === 'object') {
    if (typeof (value as { mediaId?: unknown }).mediaId === 'string') return true;
    return Object.values(value).some(holdsFileLink);
  }
  return false;
}

export function projectOutput(result: Record<string, unknown> | null): Record<string, unknown> {
  if (!result) return {};
  const entries = Object.entries(result).map(([name, value]) => ({
    name,
    value,
    size: Buffer.byteLength(JSON.stringify(value) ?? 'null') + Buffer.byteLength(JSON.stringify(name)) + 2,
    file: holdsFileLink(value),
  }));
  // Decide smallest first, so one huge field does not push out many small ones.
  const byName = new Set<string>();
  let ordinary = 0;
  let whole = 0;
  const reserve = 512; // room for omittedFields itself
  for (const e of [...entries].sort((a, b) => a.size - b.size)) {
    if (whole + e.size > PROJECTION_BUDGET_BYTES - reserve) continue;
    if (!e.file && ordinary + e.size > ORDINARY_BUDGET_BYTES) continue;
    if (!e.file) ordinary += e.size;
    whole += e.size;
    byName.add(e.name);
  }
  const projection: Record<string, unknown> = {};
  const omitted: string[] = [];
  for (const e of entries) {
    if (byName.has(e.name)) projection[e.name] = e.value;
    else omitted.push(e.name);
  }
  if (omitted.length > 0) projection.omittedFields = omitted;
  return projection;
}
