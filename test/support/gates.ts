/**
 * Gates: a test holds a job's provider work at a point it names and opens it when it has looked,
 * instead of a delay it hopes to beat (a loaded machine can run a 400 ms job to its end before the
 * test looks, or let a real timer fire first). The route's adapter is wrapped in place and put back
 * by `restore()`.
 */
import type { Mode } from '../../src/lib/livemode.js';
import type { Deps } from '../../src/deps.js';
import type { ProviderRun } from '../../src/providers/types.js';

export interface AdapterGate {
  /** Resolves with the job id once a run reached the gate. */
  reached: Promise<string>;
  /** Lets every held run go on (idempotent). */
  open(): void;
  /** Puts the original adapter back (and opens the gate). */
  restore(): void;
}

export type GatePoint =
  /** Before the provider starts; `honourAbort`: a held run ends as aborted when its signal fires (a deadline), like a provider call would. */
  | { before: 'run'; honourAbort: boolean }
  /** Right after the checkpoint of step `step` is recorded. */
  | { after: 'checkpoint'; step: number };

export function gateAdapter(deps: Deps, operationId: string, point: GatePoint, mode: Mode = 'live'): AdapterGate {
  const route = deps.providers.route(operationId, mode);
  if (!route) throw new Error(`${operationId} is not offered`);
  const original = route.adapter;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let signalReached!: (jobId: string) => void;
  const reached = new Promise<string>((resolve) => (signalReached = resolve));
  const held = async (job: ProviderRun) => {
    signalReached(job.jobId);
    // A held run keeps the test process alive (the run's deadline timer does not: it is unref'd).
    const keepAlive = setInterval(() => {}, 60_000);
    try {
      await hold(job);
    } finally {
      clearInterval(keepAlive);
    }
  };
  const hold = async (job: ProviderRun) => {
    if ('before' in point && point.honourAbort) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(job.signal.reason);
        if (job.signal.aborted) return onAbort();
        job.signal.addEventListener('abort', onAbort, { once: true });
        void gate.then(() => {
          job.signal.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    } else {
      await gate;
    }
  };
  route.adapter = {
    ...original,
    async run(job) {
      if ('before' in point) {
        await held(job);
        return original.run(job);
      }
      return original.run({
        ...job,
        checkpoint: async (step) => {
          await job.checkpoint(step);
          if (step.stepsDone === point.step) await held(job);
        },
      });
    },
  };
  return {
    reached,
    open,
    restore() {
      open();
      route.adapter = original;
    },
  };
}
