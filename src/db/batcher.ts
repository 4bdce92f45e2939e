/**
 * Collects requests that arrive in the same tick under one name (a workspace id) and hands them
 * to `run` together, one batch per name at a time: requests arriving while a batch runs form the
 * next one. `run` returns one outcome per request, in order; if it throws, every request of the
 * batch fails with that error.
 *
 * The group commit (group-commit.ts) shares a transaction between independent units that still
 * run their statements one by one; a batcher lets one piece of code see all the requests at once
 * and write them with a handful of statements, whatever their number.
 */

interface Waiting<T, R> {
  item: T;
  resolve: (value: R) => void;
  reject: (err: unknown) => void;
}

/** Requests per batch at most (bounds the statement size and how long a batch holds its locks). */
const MAX_BATCH = 64;

class Lane<T, R> {
  queue: Waiting<T, R>[] = [];
  scheduled = false;
  running = false;
}

export class Batcher<T, R> {
  private readonly lanes = new Map<string, Lane<T, R>>();

  constructor(private readonly run: (name: string, items: T[]) => Promise<R[]>) {}

  submit(name: string, item: T): Promise<R> {
    let lane = this.lanes.get(name);
    if (!lane) this.lanes.set(name, (lane = new Lane()));
    const target = lane;
    return new Promise<R>((resolve, reject) => {
      target.queue.push({ item, resolve, reject });
      this.schedule(name, target);
    });
  }

  private schedule(name: string, lane: Lane<T, R>): void {
    if (lane.scheduled || lane.running) return;
    lane.scheduled = true;
    setImmediate(() => void this.flush(name, lane));
  }

  private async flush(name: string, lane: Lane<T, R>): Promise<void> {
    lane.scheduled = false;
    lane.running = true;
    const batch = lane.queue.splice(0, MAX_BATCH);
    try {
      const outcomes = await this.run(
        name,
        batch.map((w) => w.item),
      );
      batch.forEach((w, i) => w.resolve(outcomes[i]!));
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      lane.running = false;
      if (lane.queue.length > 0) this.schedule(name, lane);
      else this.lanes.delete(name);
    }
  }
}
