/**
 * fast-check for the property tests: fc.assert with the failing assertion's message in the error
 * (node:test prints only the message). FC_SEED (and FC_PATH) replay a reported failure: the
 * message of a failed property names both (node scripts/run-tests.mjs <file> with both set,
 * TEST_DATABASES narrowed).
 */
import fc from 'fast-check';

/** Asserts `property` over `runs` runs (a number of runs, or fast-check's parameters). */
export async function check<T>(property: fc.IAsyncProperty<T>, runs: number | fc.Parameters<T>): Promise<void> {
  const params: fc.Parameters<T> = typeof runs === 'number' ? { numRuns: runs } : runs;
  const replay = process.env.FC_SEED ? { seed: Number(process.env.FC_SEED), ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}) } : {};
  try {
    await fc.assert(property, { ...params, ...replay });
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    if (err instanceof Error && cause instanceof Error) err.message += `\nCause: ${cause.message}`;
    throw err;
  }
}
