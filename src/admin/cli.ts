/**
 * The operator's command line tool: the admin API's verbs over the same services, plus
 * `quickstart`. The command line is checked completely (command, options, values against the
 * admin API's schemas) before the database is opened; output is JSON on stdout (quickstart and
 * migrate print a short text).
 *
 * Help, an unknown command and an unknown option are answered from cli-usage.ts and
 * cli-options.ts alone; a command's code (schemas, services, the database) is loaded only when
 * that command runs, so `was --help` answers at once.
 *
 * Exit codes: 0 done; 1 the command was understood but refused (not found, conflict, …);
 * 2 the command line is wrong (unknown command or option, a missing or invalid value).
 */
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import type { Command } from './cli-input.js';
import { OPTIONS, UsageError, type OptionName } from './cli-options.js';
import { CLI_USAGE, COMMAND_NAMES, commandUsage } from './cli-usage.js';

export { CLI_USAGE } from './cli-usage.js';

/** The command the positionals name (one word or two), if any. */
function lookup(positionals: string[]): string | undefined {
  const [first = '', second] = positionals;
  const name = COMMAND_NAMES.includes(first) ? first : [first, second].filter(Boolean).join(' ');
  return COMMAND_NAMES.includes(name) ? name : undefined;
}

function findCommand(positionals: string[]): string {
  const [first = '', second] = positionals;
  const name = lookup(positionals) ?? [first, second].filter(Boolean).join(' ');
  if (!COMMAND_NAMES.includes(name)) {
    if (first === 'serve' || first === 'worker') throw new UsageError(`"${first}" runs the service: start it with \`node dist/main.js ${first}\`.`);
    throw new UsageError(`Unknown command "${name}".`);
  }
  const extra = positionals.slice(name.split(' ').length);
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}" after "${name}".`);
  return name;
}

/**
 * Runs one command; returns the process exit code. `config` may be a function, called only when
 * a command runs (help needs no configuration).
 */
export async function runCli(config: Config | (() => Config | Promise<Config>), argv: string[]): Promise<number> {
  let name = '';
  let cmd: Command<unknown>;
  let input: unknown;
  try {
    const parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    if (parsed.positionals.length === 0 || parsed.positionals[0] === 'help') {
      process.stdout.write(CLI_USAGE);
      return 0;
    }
    if (parsed.values.help) {
      // `was <command> --help`: that command's usage; anything else: the whole usage.
      const known = lookup(parsed.positionals);
      process.stdout.write(known ? commandUsage(known) : CLI_USAGE);
      return 0;
    }
    name = findCommand(parsed.positionals);
    const { COMMANDS } = await import('./cli-commands.js');
    cmd = COMMANDS[name]!;
    const stray = (Object.keys(parsed.values) as OptionName[]).filter((o) => !cmd.options.includes(o));
    if (stray.length > 0) throw new UsageError(`--${stray[0]} is not an option of "${name}".`);
    input = cmd.parse(parsed.values);
  } catch (err) {
    if (!(err instanceof UsageError) && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') !== true) throw err;
    process.stderr.write(`${name ? `${name}: ` : ''}${(err as Error).message}\n\n${name ? commandUsage(name) : CLI_USAGE}`);
    return 2;
  }

  const [{ default: pino }, { resolveSecretKey }, { createDeps }, { AppError }, { Text }] = await Promise.all([
    import('pino'),
    import('../config.js'),
    import('../deps.js'),
    import('../http/errors.js'),
    import('./cli-commands.js'),
  ]);
  const settings = typeof config === 'function' ? await config() : config;
  // Logs go to stderr so that stdout stays the command's result alone.
  const log = pino({ level: settings.logLevel, redact: ['*.secret', '*.apiKey'] }, pino.destination({ fd: 2, sync: true }));
  const deps = await createDeps({ config: settings, secretKey: resolveSecretKey(settings), epochPollMs: 0, log });
  try {
    const result = await cmd.run(deps, input);
    process.stdout.write(result instanceof Text ? `${result.text}\n` : `${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof AppError) {
      process.stderr.write(`error ${err.code}: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await deps.close();
  }
}
