#!/usr/bin/env node
/**
 * Process entry: `serve` / `worker` run the service; every other verb is the operator CLI. Each
 * side is imported only when chosen, so the CLI's help never loads the server (and the CLI
 * itself loads a command's code only when that command runs: admin/cli.ts).
 */

async function main(): Promise<void> {
  const [verb = 'serve', ...rest] = process.argv.slice(2);
  if (verb === 'serve' || verb === 'worker') {
    const releaseYoungGeneration = (await import('./lib/start-up-heap.js')).holdYoungGenerationDuringStartUp();
    const [{ loadConfig }, { runServer }] = await Promise.all([import('./config.js'), import('./server.js')]);
    await runServer(loadConfig(verb === 'worker' ? { ...process.env, ROLE: 'worker' } : process.env));
    // Started (runServer returns once the service is up): the young generation grows again under load.
    releaseYoungGeneration();
    return;
  }
  const { runCli } = await import('./admin/cli.js');
  const config = async () => ({ ...(await import('./config.js')).loadConfig(process.env), logLevel: 'warn' as const });
  process.exitCode = await runCli(config, [verb, ...rest]);
}

main().catch(async (err: unknown) => {
  const [{ ConfigError }, { LOCK_HELD_EXIT_CODE, LockFileError, LockHeldError }] = await Promise.all([import('./config.js'), import('./process-lock.js')]);
  // 78 (EX_CONFIG): fix the configuration before restarting. 75 (EX_TEMPFAIL): another live
  // process holds the embedded database's lock; a later start may succeed.
  if (err instanceof ConfigError || err instanceof LockHeldError || err instanceof LockFileError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(err instanceof LockHeldError ? LOCK_HELD_EXIT_CODE : 78);
  }
  process.stderr.write(`fatal: ${(err as Error)?.stack ?? String(err)}\n`);
  // Every log line written so far reaches stdout before the exit (lib/logging.ts).
  const { flushAllLogs } = await import('./lib/logging.js');
  void flushAllLogs().finally(() => process.exit(1));
});
