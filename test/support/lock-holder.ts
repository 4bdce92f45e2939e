/**
 * A process that holds the server lock of the database file named by argv[2], for the lock tests:
 * it prints "held <pid>" once it holds it, and releases it (exits) after argv[3] ms, or when its
 * stdin closes (so it never outlives the test that started it).
 *   node --import tsx test/support/lock-holder.ts DATABASE_FILE [HOLD_MS]
 */
import { acquireServerLock } from '../../src/process-lock.js';

const [databaseFile, holdMs] = process.argv.slice(2);
const release = await acquireServerLock(databaseFile!, { waitMs: 0 });
process.stdout.write(`held ${process.pid}\n`);
const done = () => {
  release();
  process.exit(0);
};
if (holdMs) setTimeout(done, Number(holdMs));
process.stdin.on('end', done).on('close', done).resume();
