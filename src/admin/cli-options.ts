/**
 * The operator tool's options (node:util parseArgs) and its usage error: what `was --help`, an
 * unknown option or an unknown command needs, kept free of heavy imports so that those answer at
 * once (cli.ts loads a command's code only when it runs).
 */
import type { parseArgs } from 'node:util';

/** Every option of every command; each command lists the ones it takes. */
export const OPTIONS = {
  email: { type: 'string' },
  name: { type: 'string' },
  plan: { type: 'string' },
  credits: { type: 'string' },
  owner: { type: 'string' },
  org: { type: 'string' },
  user: { type: 'string' },
  role: { type: 'string' },
  workspace: { type: 'string', multiple: true },
  limit: { type: 'string', multiple: true },
  budget: { type: 'string', multiple: true },
  'low-credits': { type: 'string' },
  amount: { type: 'string' },
  expires: { type: 'string' },
  provenance: { type: 'string' },
  hostname: { type: 'string' },
  method: { type: 'string' },
  provider: { type: 'string' },
  'api-key': { type: 'string' },
  scopes: { type: 'string' },
  operations: { type: 'string' },
  transports: { type: 'string' },
  'ip-range': { type: 'string', multiple: true },
  key: { type: 'string' },
  job: { type: 'string' },
  webhook: { type: 'string' },
  overlap: { type: 'string' },
  reason: { type: 'string' },
  cursor: { type: 'string' },
  bucket: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  group: { type: 'string', multiple: true },
  mode: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type OptionName = keyof typeof OPTIONS;
export type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

/** The command line is wrong: exit code 2. */
export class UsageError extends Error {}

