/**
 * Opaque, tamper-proof list cursors (decisions.md section 1): src/lib/cursor.ts and the keyset
 * helpers of src/http/pagination.ts. A forged or foreign cursor decodes to nothing and the list
 * answers 400 INVALID_CURSOR; HTTP-level checks live in test/money/billing.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Deps } from '../../src/deps.js';
import { Keyring } from '../../src/lib/crypto.js';
import { CursorCodec } from '../../src/lib/cursor.js';
import { newId } from '../../src/lib/ids.js';
import { AppError } from '../../src/http/errors.js';
import { keysetPage, readCursor } from '../../src/http/pagination.js';

const SECRET = 'cursor-test-secret-0123456789abcdef0123';
const codec = new CursorCodec(new Keyring(SECRET));
const WS_A = '0190f000-0000-7000-8000-00000000000a';
const WS_B = '0190f000-0000-7000-8000-00000000000b';

/** Every cursor with exactly one character replaced by another base64url character or a dot. */
function oneCharacterVariants(cursor: string): string[] {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
  const out: string[] = [];
  for (let i = 0; i < cursor.length; i++) {
    for (const c of [alphabet[(alphabet.indexOf(cursor[i]!) + 1) % alphabet.length]!, alphabet[(alphabet.indexOf(cursor[i]!) + 17) % alphabet.length]!]) {
      if (c !== cursor[i]) out.push(cursor.slice(0, i) + c + cursor.slice(i + 1));
    }
  }
  return out;
}

test('cursor round trip: what is encoded for (list, workspace) decodes for the same pair', () => {
  const after = newId();
  const cursor = codec.encode('transactions', WS_A, { after });
  assert.deepEqual(codec.decode('transactions', WS_A, cursor), { after });
});

test('cursor is opaque: it does not show the id, the list or the workspace in clear text', () => {
  const after = newId();
  const cursor = codec.encode('transactions', WS_A, { after });
  assert.ok(!cursor.includes(after));
  assert.ok(!cursor.includes('transactions'));
  assert.ok(!cursor.includes(WS_A));
  assert.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
});

test('cursor length: a keyset cursor stays within the spec bound of 200 characters', () => {
  for (let i = 0; i < 50; i++) {
    for (const list of ['transactions', 'balance.allocations']) {
      assert.ok(codec.encode(list, WS_A, { after: newId() }).length <= 200);
    }
  }
});

test('cursor tamper-proof: any one-character change anywhere is rejected', () => {
  const cursor = codec.encode('transactions', WS_A, { after: newId() });
  const variants = oneCharacterVariants(cursor);
  assert.ok(variants.length >= cursor.length);
  for (const v of variants) assert.equal(codec.decode('transactions', WS_A, v), undefined, `variant ${v} was accepted`);
});

test('cursor tamper-proof: truncated, extended, empty or re-assembled cursors are rejected', () => {
  const cursor = codec.encode('transactions', WS_A, { after: newId() });
  const [payload, mac] = cursor.split('.') as [string, string];
  const other = codec.encode('transactions', WS_A, { after: newId() });
  const forgedPayload = Buffer.from(JSON.stringify({ after: 'ffffffff-ffff-7fff-bfff-ffffffffffff' })).toString('base64url');
  for (const bad of [
    '',
    '.',
    payload,
    `${payload}.`,
    `.${mac}`,
    cursor.slice(0, -1),
    `${cursor}A`,
    `A${cursor}`,
    `${payload}.${mac}.${mac}`,
    `${forgedPayload}.${mac}`,
    `${payload}.${other.split('.')[1]}`,
    `${payload}.${mac.toUpperCase()}`,
  ]) {
    assert.equal(codec.decode('transactions', WS_A, bad), undefined, `accepted ${JSON.stringify(bad)}`);
  }
});

test('cursor is foreign to another list: a transactions cursor does not open balance allocations', () => {
  const cursor = codec.encode('transactions', WS_A, { after: newId() });
  assert.equal(codec.decode('balance.allocations', WS_A, cursor), undefined);
});

test('cursor is foreign to another workspace: a cursor of workspace A is refused for workspace B', () => {
  const cursor = codec.encode('transactions', WS_A, { after: newId() });
  assert.equal(codec.decode('transactions', WS_B, cursor), undefined);
});

test('cursor is bound to the deployment secret: another SECRET_KEY refuses it', () => {
  const cursor = codec.encode('transactions', WS_A, { after: newId() });
  const otherDeployment = new CursorCodec(new Keyring(`${SECRET}-other`));
  assert.equal(otherDeployment.decode('transactions', WS_A, cursor), undefined);
});

function fakeDeps(): Deps {
  return { cursors: codec } as unknown as Deps;
}

function assertInvalidCursor(fn: () => unknown) {
  assert.throws(fn, (err: unknown) => err instanceof AppError && err.code === 'INVALID_CURSOR' && err.status === 400);
}

test('readCursor: no cursor is the first page; a forged or foreign cursor is 400 INVALID_CURSOR', () => {
  const deps = fakeDeps();
  assert.equal(readCursor(deps, 'transactions', WS_A, undefined), undefined);
  const after = newId();
  const cursor = codec.encode('transactions', WS_A, { after });
  assert.equal(readCursor(deps, 'transactions', WS_A, cursor), after);
  assertInvalidCursor(() => readCursor(deps, 'transactions', WS_B, cursor));
  assertInvalidCursor(() => readCursor(deps, 'balance.allocations', WS_A, cursor));
  assertInvalidCursor(() => readCursor(deps, 'transactions', WS_A, `${cursor}x`));
});

test('readCursor: a genuine cursor without a string position is still INVALID_CURSOR', () => {
  const deps = fakeDeps();
  for (const value of [null, 5, 'x', {}, { after: 7 }, { before: newId() }]) {
    assertInvalidCursor(() => readCursor(deps, 'transactions', WS_A, codec.encode('transactions', WS_A, value)));
  }
});

test('keysetPage: pages never overlap or skip, the last page has nextCursor null', async () => {
  const deps = fakeDeps();
  const ids = Array.from({ length: 23 }, () => newId()).sort();
  const fetch = async (after: string | undefined, limit: number) => ids.filter((id) => after === undefined || id > after).slice(0, limit).map((id) => ({ id }));
  for (const limit of [1, 4, 5, 22, 23, 24, 100]) {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await keysetPage(deps, 'list', WS_A, { limit, cursor }, fetch);
      assert.ok(page.items.length <= limit);
      assert.ok(page.items.length > 0, 'no empty page is ever handed out');
      seen.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    assert.deepEqual(seen, ids, `limit ${limit}`);
    assert.equal(pages, Math.ceil(ids.length / limit));
  }
});
