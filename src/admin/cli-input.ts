/**
 * Command line options of the operator tool, and how they become admin API inputs: parsed with
 * node:util parseArgs, then checked with the admin API's own schemas. A problem is a UsageError
 * naming the option the operator typed (exit code 2).
 */
import type { Deps } from '../deps.js';
import type { ErrorObject } from 'ajv';
import type { Static, TSchema } from 'typebox';
import { compileStrict } from '../http/validation.js';
import { canonicalIds } from './schemas.js';
import { UsageError, type OptionName, type Values } from './cli-options.js';

export { OPTIONS, UsageError, type OptionName, type Values } from './cli-options.js';

/** Schema property → the option that carries it, so problems name what the operator typed. */
export type Flags = Readonly<Record<string, string>>;

function describeProblem(errors: ErrorObject[], flags: Flags): string {
  const first = errors[0];
  if (!first) return 'invalid options';
  const path = first.instancePath.split('/').filter(Boolean);
  const missing = first.keyword === 'required' ? String(first.params.missingProperty) : undefined;
  if (missing !== undefined) path.push(missing);
  const flag = path[0] === undefined ? 'options' : (flags[path[0]] ?? path[0]);
  // Array items by position; budget periods as typed (--budget daily=…, not dailyMillicents).
  const inner = path.slice(1).map((seg) => (/^\d+$/.test(seg) ? `#${Number(seg) + 1}` : seg.replace(/Millicents$/, '')));
  const where = inner.length ? `${flag} (${inner.join(' ')})` : flag;
  if (missing !== undefined) return `${where} is required`;
  if (first.keyword === 'additionalProperties') return `${where}: unknown name "${String(first.params.additionalProperty).replace(/Millicents$/, '')}"`;
  // A union of literals fails once per branch: list what each branch would have taken.
  const allowed = errors
    .filter((e) => e.instancePath === first.instancePath)
    .flatMap((e) => (e.keyword === 'const' ? [e.params.allowedValue] : e.keyword === 'enum' ? (e.params.allowedValues as unknown[]) : []));
  if (allowed.length > 0) return `${where} must be one of: ${allowed.map(String).join(', ')}`;
  return `${where} ${first.message ?? 'is invalid'}`;
}

/** Checks `value` with an admin API schema (the same validator the API uses for bodies). */
export function checked<T extends TSchema>(schema: T, value: Record<string, unknown>, flags: Flags): Static<T> {
  const validate = compileStrict(schema);
  const input = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
  if (!validate(input)) throw new UsageError(describeProblem(validate.errors ?? [], flags));
  return canonicalIds(input) as Static<T>;
}

/** A whole number, or the raw text for the schema to refuse (so "1e3" or "12abc" never pass as numbers). */
export function int(value: string): number | string;
export function int(value: string | undefined): number | string | undefined;
export function int(value: string | undefined): number | string | undefined {
  if (value === undefined) return undefined;
  return /^-?\d+$/.test(value.trim()) ? Number(value) : value;
}

export function single(list: string[] | undefined, flag: string): string | undefined {
  if (list && list.length > 1) throw new UsageError(`${flag} is given ${list.length} times; this command takes one`);
  return list?.[0];
}

export function pairs(list: string[] | undefined, flag: string): [string, string][] {
  return (list ?? []).map((item) => {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`${flag} takes NAME=VALUE (got "${item}")`);
    return [item.slice(0, eq), item.slice(eq + 1)];
  });
}

export function limits(list: string[] | undefined): Record<string, number | string | null> | undefined {
  if (!list?.length) return undefined;
  return Object.fromEntries(pairs(list, '--limit').map(([name, value]) => [name, value === 'default' ? null : int(value)]));
}

export function budgets(list: string[] | undefined): Record<string, number | string | null> | undefined {
  if (!list?.length) return undefined;
  return Object.fromEntries(pairs(list, '--budget').map(([period, value]) => [`${period}Millicents`, value === 'none' ? null : int(value)]));
}

/** --low-credits MILLICENTS|none: the credits.low threshold, `none` turning it off. */
export function lowCredits(value: string | undefined): number | string | null | undefined {
  return value === 'none' ? null : int(value);
}

export function csv(value: string | undefined, all: readonly string[], fallback: readonly string[]): string[] {
  if (value === undefined) return [...fallback];
  if (value === 'all') return [...all];
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

/** One command of the operator tool: its options, their check, and what it runs. */
export interface Command<I> {
  options: readonly OptionName[];
  /** Builds and checks the input from the options (no database yet); throws UsageError. */
  parse(v: Values): I;
  run(deps: Deps, input: I): Promise<unknown>;
}
