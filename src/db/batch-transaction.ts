/**
 * The transaction of a batch (runs/admission-batch.ts, jobs/finish-batch.ts, claim.ts). Its code
 * hands over statements in groups that need no decision in between (begin, lock, read; write,
 * commit): on a PostgreSQL server each group is one round trip (db/pg-pipeline.ts); elsewhere
 * the statements run one by one in a Kysely transaction, shared through group commit on a
 * single-writer database (PGlite).
 */
import type { CompiledQuery, Transaction } from 'kysely';
import type { Deps } from '../deps.js';
import type { Database } from './schema.js';
import type { BatchRunner, PipelineResult } from './pg-pipeline.js';
import { executeNamed } from './prepared.js';
import { inTransaction } from './group-commit.js';

export type { BatchRunner } from './pg-pipeline.js';

export function batchTransaction<T>(deps: Pick<Deps, 'db' | 'caps'>, fn: (tx: BatchRunner) => Promise<T>): Promise<T> {
  if (deps.caps.pipelines) return deps.caps.pipelines.transaction(fn);
  return inTransaction(deps, (trx) => fn(statementByStatement(deps, trx)));
}

/** The same interface over a Kysely transaction; it commits when the unit returns. */
function statementByStatement(deps: Pick<Deps, 'caps'>, trx: Transaction<Database>): BatchRunner {
  return {
    async run(queries: CompiledQuery[]): Promise<PipelineResult[]> {
      const results: PipelineResult[] = [];
      for (const q of queries) {
        const r = await executeNamed(trx, deps.caps.namedStatements, q);
        results.push({ rows: r.rows as unknown[], rowCount: r.numAffectedRows === undefined ? r.rows.length : Number(r.numAffectedRows) });
      }
      return results;
    },
  };
}
