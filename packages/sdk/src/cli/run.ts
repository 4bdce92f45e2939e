/**
 * was-client's command line (main.ts is the binary): the service's public API from a shell, with
 * an API key only (the operator CLI is `was` in the server package). Configuration: --url,
 * --api-key, --workspace, else SERVICE_URL, SERVICE_API_KEY, SERVICE_WORKSPACE. --json prints
 * machine-readable output everywhere. Exit codes: output.ts (EXIT), documented in docs/sdk.md.
 */
import { createClient } from '../node.js';
import { Args, parseArgs, readConfig, UsageError } from './args.js';
import * as commands from './commands.js';
import { listen } from './listen.js';
import { createPrinter, EXIT, exitCodeOf } from './output.js';

export const USAGE = `Usage: was-client <command> [options]

Commands:
  tools                                       Tool operations this key may run
  estimate OP --input JSON|@file              cost of an operation, nothing reserved
  usage                                       usage points, budgets, streams
  balance                                     credits: total, reserved, spendable
  transactions [--limit N|--all]              the credit ledger, newest first
  costs [--by hour|day|month] [--group operationId,keyId,executionOrigin] [--from T] [--to T]
                                              spending per UTC bucket, grouped (a table; --json for the report)
  run OP --input JSON|@file [--wait] [--out FILE] [--idempotency-key K]
                                              run an operation; --wait follows the job and prints the result;
                                              --out writes the verified output and downloads produced files
  run chat.generate --input JSON|@file --stream
                                              print the reply as it is generated (outcome on stderr)
  jobs list [--limit N] [--cursor C]
  jobs get|cancel|wait ID
  jobs retry ID [--wait]
  jobs output ID [--verify] [--out FILE]      the complete output, offsets and sha256 verified
  media upload PATH [--name N] [--type MIME]  upload and check the stored sha256
  media download ID [--out FILE]              download through a signed URL, sha256 checked
  media list [--limit N] [--cursor C]
  events tail [--types a,b] [--follow] [--cursor C]
  trigger TYPE                                sample event of TYPE to the test webhooks (test keys only)
  listen --forward-to URL [--types a,b] [--state FILE] [--secret S] [--from-start] [--poll-interval MS]
                                              forward events to a local URL, signed like real webhooks

Options: --url URL (SERVICE_URL), --api-key KEY (SERVICE_API_KEY), --workspace ID (SERVICE_WORKSPACE), --json,
  --retries N (retries of reads and keyed writes, default 5)
Exit codes: 0 ok, 1 unexpected error, 2 usage, 3 request refused (4xx), 4 authentication or permission (401, 403),
  5 not found, 6 limited (429), 7 job failed or cancelled, 8 verification failed, 9 service unavailable (network, 5xx)
`;

export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

/** Runs one command line and returns its exit code (the binary is main.ts). */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, io: Io = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  let args: Args;
  try {
    args = new Args(parseArgs(argv));
  } catch (err) {
    createPrinter(false, io.stdout, io.stderr).error(err);
    return EXIT.USAGE;
  }
  const print = createPrinter(args.bool('json'), io.stdout, io.stderr);
  const command = args.positionals[0];
  if (!command || command === 'help' || args.bool('help')) {
    io.stdout.write(USAGE);
    return command || args.bool('help') ? EXIT.OK : EXIT.USAGE;
  }
  const controller = new AbortController();
  const stop = () => controller.abort(new Error('stopped'));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const config = readConfig(args, env);
    const client = createClient({ baseUrl: config.url, apiKey: config.apiKey, workspaceId: config.workspaceId, maxRetries: args.int('retries', 0, 20) });
    const c: commands.Context = { args, client, print, stderr: io.stderr, signal: controller.signal };
    switch (command) {
      case 'tools':
        return await commands.tools(c);
      case 'estimate':
        return await commands.estimate(c);
      case 'usage':
        return await commands.usage(c);
      case 'balance':
        return await commands.balance(c);
      case 'transactions':
        return await commands.transactions(c);
      case 'costs':
        return await commands.costs(c);
      case 'run':
        return await commands.run(c);
      case 'jobs':
        return await commands.jobs(c);
      case 'media':
        return await commands.media(c);
      case 'events':
        return await commands.events(c);
      case 'trigger':
        return await commands.trigger(c);
      case 'listen':
        return await listen(c, config, env);
      default:
        throw new UsageError(`unknown command ${command} (was-client help)`);
    }
  } catch (err) {
    if (controller.signal.aborted) return 130;
    print.error(err);
    return exitCodeOf(err);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
