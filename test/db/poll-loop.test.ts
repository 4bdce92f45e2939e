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
