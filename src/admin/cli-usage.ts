/**
 * The operator tool's usage text and the names of its commands: everything `was --help`,
 * `was <command> --help` and an unknown command need, with no import at all, so that they answer
 * without loading the services (cli.ts loads a command's code only when it runs). A test holds
 * COMMAND_NAMES to the command tables (cli-commands.ts, cli-reads.ts) and to this text.
 */

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
  credits grant --workspace ID --amount MILLICENTS [--expires ISO] [--provenance P] [--mode live|test]
  domains add --workspace ID --hostname H
  domains remove --workspace ID --hostname H
  domains verify --workspace ID --hostname H --method dns|http|operator
  provider-keys set --workspace ID --provider NAME --api-key KEY
  notifications list --workspace ID    capped account notifications (failing webhooks, alerts), newest first
  keys create --user USER_ID --workspace ID... [--scopes all|a,b] [--operations all|a,b] [--transports rest,mcp]
              [--expires ISO] [--ip-range CIDR]... [--budget daily|weekly|monthly=MILLICENTS]... [--mode live|test]
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
  costs get --workspace ID [--bucket hour|day|month] [--from T] [--to T] [--group operationId|keyId|executionOrigin]...
                                       spending per UTC bucket, by type and the groups asked
  costs top-spenders [--bucket B] [--from T] [--to T] [--limit N]
                                       workspaces by spending over the range, the largest first
  usage history --workspace ID [--bucket minute|hour|day] [--from T] [--to T] [--group keyId|operation]...
                                       usage points and 429s per UTC bucket
  help                                 this text

Exit codes: 0 done, 1 refused (error CODE: message on stderr), 2 wrong command line.
`;

/** Every command, as typed: one word or two. */
export const COMMAND_NAMES: readonly string[] = [
  'migrate',
  'quickstart',
  'users create',
  'users sign-in-link',
  'orgs create',
  'orgs set-member',
  'orgs remove-member',
  'workspaces create',
  'workspaces settings',
  'credits grant',
  'domains add',
  'domains verify',
  'domains remove',
  'provider-keys set',
  'notifications list',
  'keys create',
  'keys revoke',
  'users list',
  'users get',
  'orgs list',
  'orgs get',
  'workspaces list',
  'workspaces get',
  'keys list',
  'keys get',
  'keys update',
  'keys roll',
  'jobs list',
  'jobs get',
  'transactions list',
  'webhooks list',
  'webhooks deliveries',
  'provider-keys list',
  'credits adjust',
  'costs get',
  'costs top-spenders',
  'usage history',
];

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The usage of one command: the lines of CLI_USAGE that name it (with their continuation lines
 * and the explanation lines that follow), then where the rest is.
 */
export function commandUsage(name: string): string {
  const lines = CLI_USAGE.split('\n');
  const names = new RegExp(`(?:^  |\\| )${escape(name)}(?: |$)`);
  const picked: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!names.test(lines[i]!)) continue;
    picked.push(lines[i]!);
    // Continuation lines are indented deeper than a command line's two spaces.
    while (i + 1 < lines.length && /^ {3,}\S/.test(lines[i + 1]!)) picked.push(lines[++i]!);
  }
  return `Usage: was ${name} [options]\n\n${picked.join('\n')}\n\nEvery command: was help\n`;
}
