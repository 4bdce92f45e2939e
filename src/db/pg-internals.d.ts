/** The two node-postgres modules a pipeline builds on (db/pg-pipeline.ts); pg ships no types for them. */
declare module 'pg/lib/result.js' {
  export default class Result {
    constructor(rowMode?: string, types?: unknown);
    rows: any[];
    rowCount: number | null;
    addFields(fields: unknown[]): void;
    parseRow(fields: unknown[]): any;
    addRow(row: unknown): void;
    addCommandComplete(msg: unknown): void;
  }
}

declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): unknown };
  export default utils;
}
