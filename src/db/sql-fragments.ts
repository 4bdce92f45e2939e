/**
 * SQL fragments whose text differs by backend, so that queries outside src/db/ read the same on
 * both and never name the dialect. Keys are literals in the statement text (prepared statements
 * keep their parameter list).
 */
import { SqliteAdapter, sql, type Kysely, type RawBuilder } from 'kysely';

/** The integer at `key` of the JSON text in `column` (null when absent). */
export function jsonIntegerField(db: Kysely<any>, column: string, key: string): RawBuilder<number | null> {
  const ref = sql.ref(column);
  return db.getExecutor().adapter instanceof SqliteAdapter
    ? sql<number | null>`json_extract(${ref}, ${sql.lit(`$.${key}`)})`
    : sql<number | null>`(${ref}::json ->> ${sql.lit(key)})::bigint`;
}
