/**
 * WAL checkpoints of the embedded database off the event loop. SQLite's automatic checkpoint
 * runs inside the commit that crosses its threshold: that commit copies about a thousand pages
 * into the database file and fsyncs it, tens of milliseconds during which this single-threaded
 * server answers nothing (measured: the mean commit cost of a small transaction fell fourfold
 * without it). Here a worker thread with its own connection runs PASSIVE checkpoints (they never
 * block the writer or readers) every `intervalMs`, so the copying and fsyncs happen beside the
 * server's work.
 *
 * A WAL file can only start over when everything in it was copied and a writer begins, which a
 * checkpointer on another connection cannot see to under constant writing. So the writer keeps
 * an automatic checkpoint, with a threshold `safetyPages` far above what the worker leaves
 * behind: when it fires it finds nearly every frame already copied, finishes the last few and
 * lets the WAL restart. Durability is unchanged: a checkpoint moves committed pages from one
 * file to the other.
 */
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import type SqliteDatabase from 'better-sqlite3';

export interface Checkpointer {
  stop(): Promise<void>;
}

// CommonJS source run by the worker thread (eval: no separate file to find from src/ and dist/).
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 0');
let timer;
const tick = () => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (err) { parentPort.postMessage({ error: String(err && err.message || err) }); }
  timer = setTimeout(tick, workerData.intervalMs);
};
timer = setTimeout(tick, workerData.intervalMs);
parentPort.on('message', (m) => { if (m === 'stop') { clearTimeout(timer); db.close(); parentPort.close(); } });
`;

export function startCheckpointer(
  sqlite: SqliteDatabase.Database,
  path: string,
  options: { intervalMs?: number; safetyPages?: number; onError?: (message: string) => void } = {},
): Checkpointer {
  sqlite.pragma(`wal_autocheckpoint = ${options.safetyPages ?? 16_384}`);
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), path, intervalMs: options.intervalMs ?? 200 },
  });
  worker.unref();
  worker.on('message', (m: { error?: string }) => {
    if (m.error) options.onError?.(m.error);
  });
  worker.on('error', (err) => options.onError?.(err.message));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      // Referenced again while stopping: an unreferenced worker would let the process exit
      // in the middle of this await, before the caller's own shutdown steps ran.
      worker.ref();
      worker.postMessage('stop');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 2000)))]);
      clearTimeout(timer);
      await worker.terminate();
    },
  };
}
