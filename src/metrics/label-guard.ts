/**
 * Label values are bounded: ids, workspaces and URLs are never labels, and a label that could
 * take values from outside the code (an errorCode a provider adapter invents, a provider's name
 * in the providers file) is limited to MAX_LABEL_VALUES distinct values per label, later ones
 * being counted as `other`. One guard per label, shared by every series that carries it.
 */

/** Distinct values a label fed from outside the code may take; later ones are counted as `other`. */
export const MAX_LABEL_VALUES = 64;

const LABEL_VALUE = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * Keeps a label's values few: a value must look like a code or name, and only the first
 * MAX_LABEL_VALUES distinct values of the label are kept as they are.
 */
export class LabelGuard {
  private readonly seen = new Set<string>();
  value(v: string | null | undefined, absent = 'none'): string {
    if (v === null || v === undefined || v === '') return absent;
    if (this.seen.has(v)) return v;
    if (!LABEL_VALUE.test(v) || this.seen.size >= MAX_LABEL_VALUES) return 'other';
    this.seen.add(v);
    return v;
  }
}

/** The guards of one registry: one per label fed from outside the code. */
export interface LabelGuards {
  operation: LabelGuard;
  provider: LabelGuard;
  errorCode: LabelGuard;
  limit: LabelGuard;
}

export function createLabelGuards(): LabelGuards {
  return { operation: new LabelGuard(), provider: new LabelGuard(), errorCode: new LabelGuard(), limit: new LabelGuard() };
}
