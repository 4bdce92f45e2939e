/** The one ordered list of migrations, shared by SQLite and PostgreSQL. Append only. */
import type { Migration } from 'kysely';
import * as core from './0001-core.js';

export const migrations: Record<string, Migration> = {
  '0001-core': core,
};
