/**
 * The operator's command line tool: the admin API's verbs over the same services, plus
 * `quickstart`. The command line is checked completely (command, options, values against the
 * admin API's schemas) before the database is opened; output is JSON on stdout (quickstart and
 * migrate print a short text).
 *
 * Exit codes: 0 done; 1 the command was understood but refused (not found, conflict, …);
 * 2 the command line is wrong (unknown command or option, a missing or invalid value).
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import { resolveSecretKey, type Config } from '../config.js';
import { createDeps } from '../deps.js';
import { AppError } from '../http/errors.js';
import { COMMANDS, Text } from './cli-commands.js';
import type { Command } from './cli-input.js';
import { OPTIONS, UsageError, type OptionName } from './cli-input.js';

export const CLI_USAGE = `Usage: was <command> [options]   (npm run cli -- <command> [options])

  serve | worker                       run the service (ROLE decides api, worker or all)
  migrate                              apply database migrations and exit
  quickstart [--email E] [--plan P] [--credits MILLICENTS] [--json]
                                       local owner, personal workspace, all-scope key, credits
  users create --email E --name N
  users sign-in-link --email E         one-time console sign-in link (15 minutes)
  orgs create --name N --owner USER_ID
  orgs set-member --org ORG_ID --user USER_ID --role owner|admin|member
  orgs remove-member --org ORG_ID --user USER_ID
  workspaces create --name N --plan free|starter|pro (--owner USER_ID | --org ORG_ID) [--low-credits MILLICENTS]
  workspaces settings --workspace ID [--plan P] [--limit NAME=N|NAME=default]... [--budget daily|weekly|monthly=MILLICENTS|none]...
              [--low-credits MILLICENTS|none]
  credits grant --workspace ID --amount MILLICENTS [--expires ISO] [--provenance P]
  domains add|remove --workspace ID --hostname H
  domains verify --workspace ID --hostname H --method dns|http|operator
  provider-keys set --workspace ID --provider NAME --api-key KEY
  notifications list --workspace ID    capped account notifications (failing webhooks, alerts), newest first
  keys create --user USER_ID --workspace ID... [--scopes all|a,b] [--operations all|a,b] [--transports rest,mcp]
              [--expires ISO] [--ip-range CIDR]... [--budget daily|weekly|monthly=MILLICENTS]...
  keys revoke --key KEY_ID
  keys update --key KEY_ID [--scopes all|a,b] [--operations all|none|a,b] [--transports rest,mcp] [--expires ISO|none]
              [--ip-range CIDR|none]... [--budget daily|weekly|monthly=MILLICENTS|none]...
  keys roll --key KEY_ID --overlap SECONDS  new secret (shown once); the old one works SECONDS more
  credits adjust --workspace ID --amount=[-]MILLICENTS --reason TEXT [--provenance P] [--expires ISO]
  users get --user ID | orgs get --org ID | workspaces get --workspace ID | keys get --key ID | jobs get --job ID
  users list | orgs list | workspaces list | keys list (--workspace ID | --user ID) | jobs list --workspace ID
  transactions list --workspace ID | webhooks deliveries --workspace ID --webhook ID
                                       lists: newest first, [--limit N] [--cursor C], print {items, nextCursor}
  webhooks list --workspace ID | provider-keys list --workspace ID
  help                                 this text

Exit codes: 0 done, 1 refused (error CODE: message on stderr), 2 wrong command line.
`;

function findCommand(positionals: string[]): { name: string; command: Command<unknown> } {
  const lookup = (n: string) => (Object.hasOwn(COMMANDS, n) ? COMMANDS[n] : undefined); // never Object.prototype's
  const [first = '', second] = positionals;
  const name = lookup(first) ? first : [first, second].filter(Boolean).join(' ');
  const found = lookup(name);
  if (!found) {
    if (first === 'serve' || first === 'worker') throw new UsageError(`"${first}" runs the service: start it with \`node dist/main.js ${first}\`.`);
    throw new UsageError(`Unknown command "${name}".`);
  }
  const extra = positionals.slice(name.split(' ').length);
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}" after "${name}".`);
  return { name, command: found };
}

/** Runs one command; returns the process exit code. */
export async function runCli(config: Config, argv: string[]): Promise<number> {
  let name = '';
  let cmd: Command<unknown>;
  let input: unknown;
  try {
    const parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    if (parsed.values.help || parsed.positionals.length === 0 || parsed.positionals[0] === 'help') {
      process.stdout.write(CLI_USAGE);
      return 0;
    }
    ({ name, command: cmd } = findCommand(parsed.positionals));
    const stray = (Object.keys(parsed.values) as OptionName[]).filter((o) => !cmd.options.includes(o));
    if (stray.length > 0) throw new UsageError(`--${stray[0]} is not an option of "${name}".`);
    input = cmd.parse(parsed.values);
  } catch (err) {
    if (!(err instanceof UsageError) && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') !== true) throw err;
    process.stderr.write(`${name ? `${name}: ` : ''}${(err as Error).message}\n\n${CLI_USAGE}`);
    return 2;
  }

  // Logs go to stderr so that stdout stays the command's result alone.
  const log = pino({ level: config.logLevel, redact: ['*.secret', '*.apiKey'] }, pino.destination({ fd: 2, sync: true }));
  const deps = await createDeps({ config, secretKey: resolveSecretKey(config), epochPollMs: 0, log });
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
