/**
 * Live runs of an exact cost on the paid providers' fakes of a context started with
 * `{ live: { unitPrices: true } }` (support/live-backend.ts): chat costs what the OpenAI fake
 * reports as input tokens, music what the Replicate fake reports as prediction time (1 millicent
 * each). The input's bound is at least the cost, so the charge is never capped by the hold.
 */
import assert from 'node:assert/strict';
import type { TestContext } from './harness.js';

/** A chat input whose maximum at unit prices (its input-token bound) is at least `cost`, and what the fake must report. */
export function liveChatCosting(ctx: TestContext, cost: number): Record<string, unknown> {
  assert.ok(ctx.live, 'the context runs with { live: { unitPrices: true } }');
  ctx.live.openai.chatUsage = { prompt_tokens: cost, completion_tokens: 1 };
  return { messages: [{ role: 'user', content: `hello ${'x'.repeat(cost)}` }], maxTokens: 10 };
}

/** A music input; the next prediction ends `status` after `cost` seconds of reported prediction time. */
export function liveMusicCosting(ctx: TestContext, cost: number, status: 'succeeded' | 'failed' = 'succeeded'): Record<string, unknown> {
  assert.ok(ctx.live, 'the context runs with { live: { unitPrices: true } }');
  ctx.live.replicate.next({ polls: 1, status, predictTime: cost, ...(status === 'succeeded' ? { output: ctx.live.musicUrl } : { error: 'the model refused' }) });
  return { prompt: 'a tune', durationSeconds: 10 };
}

