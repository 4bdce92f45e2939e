#!/usr/bin/env node
/** Process entry: `serve` / `worker` run the service; every other verb is the operator CLI. */
import { ConfigError, loadConfig } from './config.js';
import { LOCK_HELD_EXIT_CODE, LockFileError, LockHeldError } from './process-lock.js';
import { runCli } from './admin/cli.js';
import { runServer } from './server.js';
import { flushAllLogs } from './lib/logging.js';

async function main(): Promise<void> {
  const [verb = 'serve', ...rest] = process.argv.slice(2);
  const env = verb === 'worker' ? { ...process.env, ROLE: 'worker' } : process.env;
  const config = loadConfig(env);
  if (verb === 'serve' || verb === 'worker') {
    await runServer(config);
    return;
  }
  process.exitCode = await runCli({ ...config, logLevel: 'warn' }, [verb, ...rest]);
}

main().catch((err: unknown) => {
  // 78 (EX_CONFIG): fix the configuration before restarting. 75 (EX_TEMPFAIL): another live
  // process holds the embedded database's lock; a later start may succeed.
  if (err instanceof ConfigError || err instanceof LockHeldError || err instanceof LockFileError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(err instanceof LockHeldError ? LOCK_HELD_EXIT_CODE : 78);
  }
  process.stderr.write(`fatal: ${(err as Error)?.stack ?? String(err)}\n`);
  // Every log line written so far reaches stdout before the exit (lib/logging.ts).
  void flushAllLogs().finally(() => process.exit(1));
});
