/**
 * The baseline worker of the end-to-end job bench: graphile-worker's own pipeline, one worker
 * process running up to GRAPHILE_CONCURRENCY (8) jobs at once, a no-op task. graphile-worker
 * 0.16.6 has no local-queue/batched-completion options (those came with 0.17), so its fastest
 * configuration is this one. DATABASE_URL names the database; the bench's producers add the jobs.
 */
import { run } from 'graphile-worker';

const runner = await run({
  connectionString: process.env.DATABASE_URL!,
  concurrency: Number(process.env.GRAPHILE_CONCURRENCY ?? 8),
  noHandleSignals: true,
  pollInterval: 1000,
  taskList: { noop: async () => {} },
});
process.stdout.write('ready\n');
const stop = () => void runner.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
