/**
 * The loop every background worker of a process runs on (the job worker, the webhook delivery
 * worker, housekeeping; started together by worker/runner.ts): one round at a time, then a wait
 * of `pollMs` that a `notify()` cuts short.
 *
 * A notify that arrives while a round runs is kept, and the next round starts as soon as this one
 * ends: work announced mid-round (a job admitted while the worker was claiming) never waits a
 * whole poll interval. A round may ask for a shorter wait instead (`{ pauseMs }`), which a notify
 * made during the round does not skip but one made during the wait ends (the delivery worker
 * looks again 25 ms after a notify that found nothing due yet).
 *
 * A failed round is logged at error; while rounds keep failing (a database that is down fails
 * every round, several times a second), one more line at most every `failureLogMs` (30 s) says
 * how many have failed since, and the first round that succeeds again says so at info.
 *
 * Timers are unref'd: a loop never holds a process open by itself (the server's listener, or its
 * keep-alive in a ROLE=worker process, does). `stop()` ends the wait at once and resolves when
 * the round in progress has finished; what a worker does with work still running is its own stop.
 */
import type { Logger } from 'pino';

export interface RoundResult {
  /** Wait this long before the next round, even if notified during the round (a notify during the wait ends it). */
  pauseMs?: number;
}

export interface PollLoopOptions {
  /** Named in the log line of a failed round. */
  name: string;
  pollMs: number;
  log: Logger;
  /** One round; a thrown error is logged and the loop goes on after the usual wait. */
  round(): Promise<RoundResult | void>;
  /** While rounds keep failing, at most one log line per this many milliseconds (default 30 000). */
  failureLogMs?: number;
}

/** Default spacing of the log lines of rounds that keep failing. */
export const FAILURE_LOG_MS = 30_000;

export class PollLoop {
  private stopped = true;
  private notified = false;
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private done: Promise<void> = Promise.resolve();
  /** Rounds failed in a row, and those not logged yet; when the last failure line was written. */
  private failures = 0;
  private unlogged = 0;
  private loggedAt = 0;

  constructor(private readonly options: PollLoopOptions) {}

  get running(): boolean {
    return !this.stopped;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.done = this.run();
  }

  /** Asks for a round now (or right after the one in progress). */
  notify(): void {
    this.notified = true;
    this.wake?.();
  }

  /** Ends the wait, lets the round in progress finish, and starts no other. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.done;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.notified = false;
      let result: RoundResult | void = undefined;
      try {
        result = await this.options.round();
        this.succeeded();
      } catch (err) {
        this.failed(err);
      }
      if (this.stopped) break;
      const pauseMs = result?.pauseMs;
      if (pauseMs === undefined && this.notified) continue;
      await this.sleep(pauseMs ?? this.options.pollMs);
    }
  }

  private failed(err: unknown): void {
    const now = Date.now();
    this.failures++;
    if (this.failures > 1 && now - this.loggedAt < (this.options.failureLogMs ?? FAILURE_LOG_MS)) {
      this.unlogged++;
      return;
    }
    const repeated = this.failures > 1 ? { failedRounds: this.failures, notLoggedSince: this.unlogged } : {};
    this.options.log.error({ err, ...repeated }, `${this.options.name} round failed${this.failures > 1 ? ' (still failing)' : ''}`);
    this.loggedAt = now;
    this.unlogged = 0;
  }

  private succeeded(): void {
    if (this.failures === 0) return;
    this.options.log.info({ failedRounds: this.failures }, `${this.options.name} rounds succeed again`);
    this.failures = 0;
    this.unlogged = 0;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const end = () => {
        if (this.timer) clearTimeout(this.timer);
        this.timer = undefined;
        this.wake = undefined;
        resolve();
      };
      this.timer = setTimeout(end, ms);
      this.timer.unref();
      this.wake = end;
    });
  }
}
