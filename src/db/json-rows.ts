/**
 * Multi-row writes on PostgreSQL with a fixed statement text: the rows travel as one JSON array
 * parameter and `json_populate_recordset` turns them into records of the table's own row type,
 * so every column keeps its declared type and one named statement serves any number of rows.
 */
import { sql, type RawBuilder } from 'kysely';

/**
 * `insert into <table> (<columns>) select <columns> from json_populate_recordset(null::<table>, <json>)`,
 * with the JSON text of the rows as parameter (objects keyed by column name).
 */
export function insertJsonRows(table: string, columns: readonly string[], rowsJson: unknown): RawBuilder<unknown> {
  const list = sql.raw(columns.join(', '));
  return sql`insert into ${sql.table(table)} (${list}) select ${list} from json_populate_recordset(null::${sql.table(table)}, ${rowsJson}::json)`;
}

/** Picks `columns` of each row, in a JSON array of objects for insertJsonRows. */
export function rowsJson(rows: readonly object[], columns: readonly string[]): string {
  return JSON.stringify(rows.map((r) => Object.fromEntries(columns.map((c) => [c, (r as Record<string, unknown>)[c] ?? null]))));
}
