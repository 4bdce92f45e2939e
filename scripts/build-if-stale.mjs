#!/usr/bin/env node
// Builds (`npm run build`) only when the build's inputs changed since the last build, so that
// `npm start` and `npm run cli` on an unchanged checkout start at once instead of compiling for
// 20-30 s every time (issue 19). Inputs: everything under src/, console-ui/ (the console's front
// end) and packages/ (node_modules and build outputs left out), the tsconfig files, package.json
// and package-lock.json.
//
// Staleness is decided by content, not by mtimes alone (a checkout or a touch that changes
// nothing rebuilds nothing): dist/.build-inputs keeps the content hash of the inputs of the last
// successful build and a key of their paths, sizes and mtimes. When the key still matches, no
// file is read (a few ms); otherwise the contents are hashed and compared. dist/main.js must
// exist too, and so must the console's dist/console-ui/index.html. `npm run build` stays the full
// build, and tsc is incremental (tsconfig.build.json).
//
//   node scripts/build-if-stale.mjs                 check (and build when stale)
//   node scripts/build-if-stale.mjs --exec ARGS…    then run dist/main.js ARGS… in this process
//
// `--exec` is what `npm start` and `npm run cli` use: one node process instead of a pre-script
// plus the service's own. Also runs as `prepare` (a build at install) and before `npm test`.
// BUILD_IF_STALE_VERBOSE=1 says what it decided.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawnSync } from 'node:child_process';

const ROOT = resolve(import.meta.dirname, '..');
const MAIN = join(ROOT, 'dist/main.js');
const STAMP = join(ROOT, 'dist/.build-inputs');
const CONSOLE_INDEX = join(ROOT, 'dist/console-ui/index.html');
const SKIP_DIRS = new Set(['node_modules', 'dist', 'build', '.turbo', '.cache']);
const verbose = process.env.BUILD_IF_STALE_VERBOSE === '1';

function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIP_DIRS.has(entry.name) ? [] : files(path);
    return entry.isFile() ? [path] : [];
  });
}

function inputs() {
  const roots = readdirSync(ROOT).filter((name) => /^tsconfig.*\.json$/.test(name) || name === 'package.json' || name === 'package-lock.json');
  return [...roots.map((name) => join(ROOT, name)), ...files(join(ROOT, 'src')), ...files(join(ROOT, 'console-ui')), ...files(join(ROOT, 'packages'))].sort();
}

function statKey(paths) {
  const hash = createHash('sha256');
  for (const path of paths) {
    const s = statSync(path);
    hash.update(`${relative(ROOT, path)}\0${s.size}\0${s.mtimeMs}\0`);
  }
  return hash.digest('hex');
}

function contentHash(paths) {
  const hash = createHash('sha256');
  for (const path of paths) {
    hash.update(`${relative(ROOT, path)}\0`);
    hash.update(readFileSync(path));
    hash.update('\0');
  }
  return hash.digest('hex');
}

function readStamp() {
  if (!existsSync(MAIN) || !existsSync(CONSOLE_INDEX) || !existsSync(STAMP)) return undefined;
  const text = readFileSync(STAMP, 'utf8').trim();
  if (/^[0-9a-f]{64}$/.test(text)) return { contentHash: text }; // the first format: the content hash alone
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Builds when stale; exits the process with the build's status when the build fails. */
function ensureBuilt() {
  const started = performance.now();
  const paths = inputs();
  const key = statKey(paths);
  const stamp = readStamp();
  if (stamp?.statKey === key) {
    if (verbose) process.stderr.write(`build-if-stale: up to date (${(performance.now() - started).toFixed(1)} ms, no file read)\n`);
    return;
  }
  const content = contentHash(paths);
  if (stamp?.contentHash === content) {
    writeFileSync(STAMP, `${JSON.stringify({ contentHash: content, statKey: key })}\n`);
    if (verbose) process.stderr.write(`build-if-stale: up to date (${(performance.now() - started).toFixed(1)} ms, contents unchanged)\n`);
    return;
  }
  process.stderr.write(stamp ? 'build-if-stale: sources changed, building\n' : 'build-if-stale: no build yet, building\n');
  const result = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  // The inputs as they were when the build started: an edit during the build rebuilds next time.
  writeFileSync(STAMP, `${JSON.stringify({ contentHash: content, statKey: key })}\n`);
}

ensureBuilt();
const exec = process.argv.indexOf('--exec');
if (exec !== -1) {
  // dist/main.js reads its verb from process.argv.slice(2), as when started as `node dist/main.js …`.
  process.argv = [process.argv[0], MAIN, ...process.argv.slice(exec + 1)];
  await import(pathToFileURL(MAIN).href);
}
