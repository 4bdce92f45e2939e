/**
 * Names of prepared statements on PostgreSQL, shared by pipelines (pg-pipeline.ts) and single
 * prepared statements (prepared.ts). A module of its own so that naming a statement does not load
 * the pg driver (which only a PostgreSQL database needs).
 */
import { createHash } from 'node:crypto';

const names = new Map<string, string>();

/**
 * The name a statement is prepared under on a connection: derived from its text, so one name
 * never means two statements (also used by db/prepared.ts). Texts here are fixed per kind of
 * statement (values travel as parameters), so the cache stays small.
 */
export function statementName(text: string): string {
  let name = names.get(text);
  if (!name) names.set(text, (name = `was_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`));
  return name;
}
