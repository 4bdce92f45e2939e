/**
 * A migrated PGlite cluster as a data directory dump, made once and reused: every PGlite suite
 * loads it (`loadDataDir`) instead of paying initdb and the migrations again (6-10 s each on a
 * small machine). Within a test process the dump is built once; across processes it is cached
 * in the temp directory under a key of the PGlite version and the migration sources, so a
 * changed migration or PGlite upgrade makes a new one. The file is written under a temporary
 * name and renamed, so processes racing to build it never read a partial dump.
 * TEST_PGLITE_TEMPLATE_CACHE=0 skips the disk cache (still once per process).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kysely } from 'kysely';
import { migrateToLatest } from '../../src/db/connect.js';
import type { Database } from '../../src/db/schema.js';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../src/db/migrations');
const CACHE_DIR = join(tmpdir(), 'was-pglite-template');

let template: Promise<Blob> | undefined;

/** The dump of a freshly migrated PGlite cluster (uncompressed tar). */
export function pgliteTemplate(): Promise<Blob> {
  template ??= loadOrBuild().catch((err: unknown) => {
    template = undefined;
    throw err;
  });
  return template;
}

/** Forgets the dump (and its cached file) after it failed to load, so the next call builds anew. */
export function discardPgliteTemplate(): void {
  template = undefined;
  if (process.env.TEST_PGLITE_TEMPLATE_CACHE !== '0') rmSync(join(CACHE_DIR, `${templateKey()}.tar`), { force: true });
}

function templateKey(): string {
  const hash = createHash('sha256');
  hash.update(pgliteVersion());
  for (const name of readdirSync(MIGRATIONS_DIR).sort()) {
    hash.update(`\0${name}\0`);
    hash.update(readFileSync(join(MIGRATIONS_DIR, name)));
  }
  return hash.digest('hex').slice(0, 24);
}

/** PGlite's version, from the package.json above its entry point (its exports hide the file). */
function pgliteVersion(): string {
  let dir = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@electric-sql/pglite' && pkg.version) return pkg.version;
    } catch {
      // No package.json at this level: keep walking up.
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('@electric-sql/pglite package.json not found');
    dir = parent;
  }
}

async function loadOrBuild(): Promise<Blob> {
  if (process.env.TEST_PGLITE_TEMPLATE_CACHE === '0') return build();
  const key = templateKey();
  const file = join(CACHE_DIR, `${key}.tar`);
  try {
    return new Blob([readFileSync(file)]);
  } catch {
    // Not cached yet: build it below.
  }
  const dump = await build();
  mkdirSync(CACHE_DIR, { recursive: true });
  const partial = `${file}.${process.pid}.${Date.now()}.partial`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, file);
  // Dumps of older migration sets are never read again.
  for (const name of readdirSync(CACHE_DIR)) {
    if (name.endsWith('.tar') && name !== `${key}.tar`) rmSync(join(CACHE_DIR, name), { force: true });
  }
  return dump;
}

async function build(): Promise<Blob> {
  const [{ PGlite }, { PGliteDialect }] = await Promise.all([import('@electric-sql/pglite'), import('kysely-pglite-dialect')]);
  const client = new PGlite();
  await client.waitReady;
  const db = new Kysely<Database>({ dialect: new PGliteDialect(client) });
  try {
    await migrateToLatest(db);
    return await client.dumpDataDir('none');
  } finally {
    await db.destroy();
    if (!client.closed) await client.close();
  }
}
