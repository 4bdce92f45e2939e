#!/usr/bin/env node
/** The was-client binary: runs the command line (run.ts) and exits with its code. */
import { EXIT } from './output.js';
import { main } from './run.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`was-client: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = EXIT.UNEXPECTED;
  },
);
