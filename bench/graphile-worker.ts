/**
 * The baseline worker of the end-to-end job bench: graphile-worker's own pipeline, one worker
 * process running up to GRAPHILE_CONCURRENCY (8) jobs at once, a no-op task, with batching on as
 * the issue asks: a local queue that fetches and locks jobs in batches (concurrency + 1, the
 * documented starting point) and batched completions (completeJobBatchDelay 0: completions of the
 * same tick share one statement). DATABASE_URL names the database; the bench's producers add the jobs.
 */
import { run } from 'graphile-worker';

const concurrency = Number(process.env.GRAPHILE_CONCURRENCY ?? 8);
const runner = await run({
  connectionString: process.env.DATABASE_URL!,
  concurrency,
  noHandleSignals: true,
  pollInterval: 1000,
  taskList: { noop: async () => {} },
  preset: {
    worker: {
      localQueue: { size: concurrency + 1 },
      completeJobBatchDelay: 0,
      failJobBatchDelay: 0,
    },
  },
});
process.stdout.write('ready\n');
const stop = () => void runner.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
