/**
 * The young generation during start-up (issue 38: a smaller idle process).
 *
 * Loading a thousand modules and compiling the route schemas keeps most of what it allocates, so
 * V8 sees a high survival rate and doubles the young generation again and again: the process
 * left start-up holding 32 MB of semi-spaces it had touched, which it never gave back, because an
 * idle service never allocates enough for V8 to shrink them. Holding the growth factor at 1 while
 * the service starts keeps the semi-spaces at their initial 1 MB (what survives goes to the old
 * generation, where it would have ended anyway); once the service is up the default factor (2)
 * is restored, so under load the young generation grows as it always did.
 *
 * `--semi-space-growth-factor` is read by V8 each time it grows the young generation, so setting it
 * at run time takes effect (unlike `--max-semi-space-size`, which only counts when the heap is
 * made). An operator's own NODE_OPTIONS value of the flag is kept: nothing is changed then.
 */
import { setFlagsFromString } from 'node:v8';

const FLAG = '--semi-space-growth-factor';
const V8_DEFAULT_GROWTH_FACTOR = 2;

/** Whether the process was started with its own growth factor (node flags or NODE_OPTIONS). */
export function operatorSetsGrowthFactor(execArgv: readonly string[], nodeOptions: string): boolean {
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((arg) => arg.startsWith(FLAG) || arg.startsWith('--semi_space_growth_factor'));
}

/** Holds the young generation at its initial size until the returned function is called. */
export function holdYoungGenerationDuringStartUp(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): () => void {
  if (operatorSetsGrowthFactor(execArgv, nodeOptions)) return () => {};
  setFlagsFromString(`${FLAG}=1`);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    setFlagsFromString(`${FLAG}=${V8_DEFAULT_GROWTH_FACTOR}`);
  };
}
