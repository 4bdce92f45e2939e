/** Local blobs of job results: one pooled copy per content, each blob a hard link to it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobPool } from '../../src/modules/media/blob-pool.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

test('equal bytes are stored once and linked by every blob; removing one blob leaves the others whole', async () => {
  const root = mkdtempSync(join(tmpdir(), 'was-pool-'));
  try {
    const staging = join(root, '.staging');
    mkdirSync(staging);
    const pool = new BlobPool(root, staging);
    const bytes = Buffer.from('the same generated image bytes');
    const other = Buffer.from('different bytes');
    const ws = join(root, 'ws');
    const targets = Array.from({ length: 20 }, (_, i) => join(ws, `blob-${i}`));
    await Promise.all([...targets.map((t) => pool.put(t, ws, bytes, sha(bytes))), pool.put(join(ws, 'other'), ws, other, sha(other))]);
    assert.deepEqual(readdirSync(join(root, '.pool')).sort(), [sha(bytes), sha(other)].sort(), 'one pooled file per content');
    for (const t of targets) assert.deepEqual(readFileSync(t), bytes);
    assert.equal(statSync(targets[0]!).nlink, targets.length + 1, 'every blob is a link to the pooled copy');
    assert.deepEqual(readdirSync(staging), [], 'nothing left in staging');
    rmSync(targets[0]!);
    assert.deepEqual(readFileSync(targets[1]!), bytes);
    // A new pool (a restarted process) reuses the pooled file it finds.
    await new BlobPool(root, staging).put(join(ws, 'later'), ws, bytes, sha(bytes));
    assert.equal(statSync(join(ws, 'later')).ino, statSync(targets[1]!).ino);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('concurrent directory syncs are shared: callers arriving before a sync starts share it, later ones get a sync of their own', async () => {
  const root = mkdtempSync(join(tmpdir(), 'was-pool-'));
  try {
    const pool = new BlobPool(root, root);
    const first = pool.syncDir(root);
    const second = pool.syncDir(root);
    assert.equal(first, second, 'queued together');
    await first;
    const third = pool.syncDir(root);
    assert.notEqual(third, first, 'a caller after the sync ran needs a new one');
    await third;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
