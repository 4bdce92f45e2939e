/**
 * The abort of one guarded request (its deadline or the caller's abort), in the form undici takes
 * for `signal`: an EventEmitter with `aborted` and `reason`. A new AbortController per request,
 * with the listener undici adds to it and removes when the body closes, cost more CPU than the
 * rest of the guard on the webhook path; the body decoders' pipeline, which needs a real
 * AbortSignal, gets one made from this on demand.
 */
import { EventEmitter } from 'node:events';

export class RequestAbort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  constructor(private readonly caller: AbortSignal | undefined) {
    super();
  }

  /** The caller's signal aborted (this object is its listener: no closure per request). */
  handleEvent(): void {
    this.abort(this.caller?.reason);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }

  toAbortSignal(): AbortSignal {
    const controller = new AbortController();
    if (this.aborted) controller.abort(this.reason);
    else this.once('abort', () => controller.abort(this.reason));
    return controller.signal;
  }
}
