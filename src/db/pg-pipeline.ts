/**
 * Several statements in one round trip to a PostgreSQL server (the extended protocol's
 * pipelining: every statement's Parse/Bind/Describe/Execute, then one Sync), for the batched
 * money paths whose statements follow each other without a decision in between (begin, lock,
 * read; write, commit). node-postgres sends one statement per round trip; a pipeline is handed to
 * it as a custom "submittable", the interface it offers for this (pg-cursor uses the same), and
 * builds on its public connection messages and its Result type (so type parsers apply as usual).
 *
 * Statements are named (parsed and planned once per connection). After an error the server
 * skips the rest of the pipeline, so which names it parsed is unknown: the connection is then
 * discarded instead of returned to the pool.
 *
 * Each statement of a pipeline still runs on its own, with its own snapshot (READ COMMITTED):
 * a read after a lock in the same pipeline sees what the lock's previous holder committed.
 */
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';
import Result from 'pg/lib/result.js';
import pgUtils from 'pg/lib/utils.js';
import { statementName } from './statement-names.js';

export interface PipelineResult<R = any> {
  rows: R[];
  rowCount: number | null;
}

interface Statement {
  name: string;
  text: string;
  values: unknown[];
}

/** The parts of pg's connection a pipeline writes to. */
interface Connection {
  stream: { cork?: () => void; uncork?: () => void };
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  parse(q: { text: string; name: string; types?: unknown[] }): void;
  bind(q: { portal: string; statement: string; values: unknown[]; valueMapper: (v: unknown) => unknown }): void;
  describe(q: { type: 'P'; name: string }): void;
  execute(q: { portal: string; rows?: number }): void;
  sync(): void;
}

/** A pipeline as node-postgres runs it: `submit` writes every message, handlers collect results. */
class Pipeline {
  private readonly results: InstanceType<typeof Result>[];
  private index = 0;
  private parsedHere: string[] = [];
  readonly done: Promise<PipelineResult[]>;
  private resolve!: (r: PipelineResult[]) => void;
  private reject!: (err: unknown) => void;

  constructor(private readonly statements: Statement[]) {
    this.results = statements.map(() => new Result());
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  submit(connection: Connection): null {
    connection.stream.cork?.();
    try {
      for (const s of this.statements) {
        if (connection.parsedStatements[s.name] === undefined && connection.submittedNamedStatements[s.name] === undefined) {
          connection.parse({ text: s.text, name: s.name });
          connection.submittedNamedStatements[s.name] = s.text;
          this.parsedHere.push(s.name);
        }
        connection.bind({ portal: '', statement: s.name, values: s.values, valueMapper: pgUtils.prepareValue });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '' });
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(msg: { fields: unknown[] }): void {
    this.results[this.index]?.addFields(msg.fields);
  }

  handleDataRow(msg: { fields: unknown[] }): void {
    const result = this.results[this.index];
    if (result) result.addRow(result.parseRow(msg.fields));
  }

  handleCommandComplete(msg: unknown): void {
    this.results[this.index]?.addCommandComplete(msg);
    this.index++;
  }

  handleEmptyQuery(): void {
    this.index++;
  }

  handleError(err: unknown, connection: Connection): void {
    // Names submitted here may or may not exist on the server now; the caller discards the connection.
    for (const name of this.parsedHere) delete connection.submittedNamedStatements[name];
    this.reject(err);
  }

  handleReadyForQuery(connection: Connection): void {
    for (const name of this.parsedHere) {
      connection.parsedStatements[name] = connection.submittedNamedStatements[name]!;
      delete connection.submittedNamedStatements[name];
    }
    if (this.index !== this.statements.length) {
      this.reject(new Error(`pipeline ended after ${this.index} of ${this.statements.length} statements`));
      return;
    }
    this.resolve(this.results.map((r) => ({ rows: r.rows, rowCount: r.rowCount })));
  }

  handlePortalSuspended(): void {
    this.reject(new Error('pipeline: unexpected portal suspension'));
  }

  handleCopyInResponse(): void {
    this.reject(new Error('pipeline: COPY is not supported'));
  }

  handleCopyData(): void {}
}

function statementOf(q: CompiledQuery | string): Statement {
  if (typeof q === 'string') return { name: statementName(q), text: q, values: [] };
  return { name: statementName(q.sql), text: q.sql, values: [...q.parameters] };
}

/** A transaction on one pooled connection whose statements are sent in pipelines. */
export interface PipelinedTransaction {
  /**
   * Sends `queries` in one round trip (the first call also begins the transaction; with
   * `commit`, the transaction commits in the same round trip) and returns one result per query.
   */
  run(queries: CompiledQuery[], options?: { commit?: boolean }): Promise<PipelineResult[]>;
}

export class Pipelines {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Runs `fn` in a transaction whose statements `fn` sends through `tx.run`; `fn` must commit
   * with its last run. Rolls back when `fn` throws before committing.
   */
  async transaction<T>(fn: (tx: PipelinedTransaction) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let began = false;
    let committed = false;
    let broken: unknown;
    const tx: PipelinedTransaction = {
      run: async (queries, options = {}) => {
        if (committed) throw new Error('pipelined transaction already committed');
        const statements = [...(began ? [] : ['begin']), ...queries, ...(options.commit ? ['commit'] : [])].map(statementOf);
        began = true;
        const pipeline = new Pipeline(statements);
        client.query(pipeline as unknown as pg.QueryConfig);
        try {
          const results = await pipeline.done;
          if (options.commit) committed = true;
          return results.slice(results.length - queries.length - (options.commit ? 1 : 0), results.length - (options.commit ? 1 : 0));
        } catch (err) {
          broken = err;
          throw err;
        }
      },
    };
    try {
      const value = await fn(tx);
      if (!committed) throw new Error('pipelined transaction ended without its commit');
      return value;
    } catch (err) {
      if (began && !committed && broken === undefined) {
        await client.query('rollback').catch((e: unknown) => (broken = e));
      }
      throw err;
    } finally {
      // After a failed pipeline the connection's named statements are unknown: discard it.
      client.release(broken === undefined ? undefined : (broken as Error));
    }
  }
}

/** What a batch sends its statements through: a pipelined transaction, or a Kysely one. */
export type BatchRunner = PipelinedTransaction;
