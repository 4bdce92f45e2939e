/** The workers' shared poll loop (src/lib/poll-loop.ts): rounds, notifies, pauses, stop. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { PollLoop, type RoundResult } from '../../src/lib/poll-loop.js';

const HOUR = 3_600_000;
const log = pino({ level: 'silent' });

/** A loop whose rounds are held until the test releases them, one by one. */
function heldLoop(results: (RoundResult | void)[] = []) {
  const started: (() => void)[] = [];
  let roundStarted: () => void = () => {};
  let rounds = 0;
  const loop = new PollLoop({
    name: 'test',
    pollMs: HOUR,
    log,
    round: async () => {
      const n = rounds++;
      await new Promise<void>((release) => {
        started.push(release);
        roundStarted();
      });
      return results[n];
    },
  });
  const nextRound = () => new Promise<void>((r) => (roundStarted = r));
  return { loop, started, nextRound, rounds: () => rounds };
}

describe('poll loop', () => {
  test('runs a round at start, then waits; a notify during the wait starts the next round', async () => {
    const h = heldLoop();
    const first = h.nextRound();
    h.loop.start();
    await first;
    const second = h.nextRound();
    h.started[0]!();
    await new Promise((r) => setImmediate(r));
    assert.equal(h.rounds(), 1, 'waiting a poll interval (an hour) after the first round');
    h.loop.notify();
    await second;
    assert.equal(h.rounds(), 2);
    h.started[1]!();
    await h.loop.stop();
  });

  test('a notify during a round is kept: the next round starts when this one ends, not a poll interval later', async () => {
    const h = heldLoop();
    const first = h.nextRound();
    h.loop.start();
    await first;
    h.loop.notify(); // work announced while the round is claiming
    const second = h.nextRound();
    h.started[0]!();
    await second;
    assert.equal(h.rounds(), 2);
    h.started[1]!();
    await h.loop.stop();
  });

  test('a round that asks for a pause is not skipped by a notify made during it', async () => {
    const h = heldLoop([{ pauseMs: HOUR }]);
    const first = h.nextRound();
    h.loop.start();
    await first;
    h.loop.notify();
    h.started[0]!();
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.equal(h.rounds(), 1, 'still pausing');
    const second = h.nextRound();
    h.loop.notify(); // a notify during the pause ends it
    await second;
    h.started[1]!();
    await h.loop.stop();
  });

  test('rounds that keep failing log the first failure, then at most one line per failureLogMs with the count, and the recovery once', async () => {
    const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
    const logger = {
      error: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'error', msg, fields }),
      info: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'info', msg, fields }),
    } as unknown as pino.Logger;
    let rounds = 0;
    let failing = true;
    let settled: () => void = () => {};
    const loop = new PollLoop({
      name: 'db',
      pollMs: 1,
      failureLogMs: 200,
      log: logger,
      round: async () => {
        rounds++;
        if (!failing && rounds > 0) settled();
        if (failing) throw new Error('connection refused');
      },
    });
    // The loop's timers are unref'd: this keeps the test's event loop alive while it waits.
    const keepAlive = setInterval(() => {}, 50);
    const started = Date.now();
    loop.start();
    while (Date.now() - started < 450) await new Promise((r) => setTimeout(r, 20));
    const failedRounds = rounds;
    const elapsed = Date.now() - started;
    const recovered = new Promise<void>((r) => (settled = r));
    failing = false;
    await recovered;
    await loop.stop();
    clearInterval(keepAlive);
    const errors = lines.filter((l) => l.level === 'error');
    assert.ok(failedRounds >= 5, `the loop went on failing (${failedRounds} rounds)`);
    // At most one line per 200 ms of failures (the first at once), however many rounds failed.
    assert.ok(errors.length >= 2 && errors.length <= 1 + Math.ceil(elapsed / 200), `${errors.length} error lines for ${failedRounds} failed rounds in ${elapsed} ms`);
    assert.ok(errors.length < failedRounds, 'not one line per failed round');
    assert.equal(errors[0]!.msg, 'db round failed');
    assert.equal(errors[1]!.msg, 'db round failed (still failing)');
    assert.ok((errors[1]!.fields.failedRounds as number) > 1 && (errors[1]!.fields.notLoggedSince as number) >= 1);
    const infos = lines.filter((l) => l.level === 'info');
    assert.deepEqual(infos.map((l) => l.msg), ['db rounds succeed again']);
    assert.ok((infos[0]!.fields.failedRounds as number) >= failedRounds - 1);
  });

  test('stop ends the wait, waits for the round in progress and starts no other; a failed round is logged and the loop goes on', async () => {
    let rounds = 0;
    let release: () => void = () => {};
    let inRound: () => void = () => {};
    const entered = new Promise<void>((r) => (inRound = r));
    const errors: string[] = [];
    const loop = new PollLoop({
      name: 'failing',
      pollMs: HOUR,
      log: { error: (_o: unknown, msg: string) => errors.push(msg) } as unknown as pino.Logger,
      round: async () => {
        rounds++;
        if (rounds === 1) throw new Error('boom');
        inRound();
        await new Promise<void>((r) => (release = r));
      },
    });
    loop.start();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(errors, ['failing round failed']);
    loop.notify();
    await entered;
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(stopped, false, 'stop waits for the round in progress');
    release();
    await stopping;
    loop.notify();
    await new Promise((r) => setImmediate(r));
    assert.equal(rounds, 2, 'no round after stop');
    assert.equal(loop.running, false);
  });
});
