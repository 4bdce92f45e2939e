/** Command-line parsing and configuration of was-client: positionals, `--flag value`, `--flag=value`, booleans. */

export class UsageError extends Error {
  override name = 'UsageError';
}

/** Flags that take no value. */
const BOOLEAN_FLAGS = new Set(['json', 'wait', 'stream', 'verify', 'follow', 'help', 'all', 'from-start']);

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string[]>;
}

export function parseArgs(argv: string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string[]>();
  const add = (name: string, value: string) => flags.set(name, [...(flags.get(name) ?? []), value]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h') {
      add('help', 'true');
      continue;
    }
    if (!arg.startsWith('--') || arg === '--') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    if (eq >= 0) add(name, arg.slice(eq + 1));
    else if (BOOLEAN_FLAGS.has(name)) add(name, 'true');
    else {
      const value = argv[i + 1];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      add(name, value);
      i++;
    }
  }
  return { positionals, flags };
}

export class Args {
  constructor(private readonly parsed: ParsedArgs) {}

  get positionals(): string[] {
    return this.parsed.positionals;
  }

  flag(name: string): string | undefined {
    const values = this.parsed.flags.get(name);
    return values?.[values.length - 1];
  }

  bool(name: string): boolean {
    const v = this.flag(name);
    return v !== undefined && v !== 'false' && v !== '0';
  }

  int(name: string, min: number, max: number): number | undefined {
    const v = this.flag(name);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
    return n;
  }

  /** A comma-separated list flag (also repeatable). */
  list(name: string): string[] | undefined {
    const values = this.parsed.flags.get(name);
    if (!values) return undefined;
    return values.flatMap((v) => v.split(',')).map((s) => s.trim()).filter(Boolean);
  }

  /** Flags given that `allowed` does not name. */
  unknown(allowed: readonly string[]): string[] {
    return [...this.parsed.flags.keys()].filter((f) => !allowed.includes(f));
  }
}

export interface Config {
  url: string;
  apiKey: string;
  workspaceId: string;
}

/** --url/--api-key/--workspace, else SERVICE_URL, SERVICE_API_KEY, SERVICE_WORKSPACE. */
export function readConfig(args: Args, env: NodeJS.ProcessEnv): Config {
  const url = args.flag('url') ?? env.SERVICE_URL;
  const apiKey = args.flag('api-key') ?? env.SERVICE_API_KEY;
  const workspaceId = args.flag('workspace') ?? env.SERVICE_WORKSPACE;
  const missing = [!url && 'SERVICE_URL (--url)', !apiKey && 'SERVICE_API_KEY (--api-key)', !workspaceId && 'SERVICE_WORKSPACE (--workspace)'].filter(Boolean);
  if (missing.length) throw new UsageError(`missing configuration: ${missing.join(', ')}`);
  try {
    const parsed = new URL(url!);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new UsageError(`SERVICE_URL is not an http(s) URL: ${url}`);
  }
  return { url: url!, apiKey: apiKey!, workspaceId: workspaceId! };
}
