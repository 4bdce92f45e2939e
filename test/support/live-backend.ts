/**
 * Real work for live keys without SIMULATE_LIVE (docs/decisions.md "Test mode": live keys never
 * run simulated work): the fakes of two paid providers speaking their wire formats
 * (fake-openai.ts, fake-replicate.ts) and a providers file mapping operations onto them, for the
 * suites about live-only behaviour (the operator's views of live money and jobs, credit
 * adjustments, live-only cost rows). A suite asks for it with `describeEachDatabase(…, { live:
 * true })` (or `createTestContext(dbName, { live: true })`) and finds it as `ctx.live`.
 *
 * Routes (prices restated here, not read from the service):
 * - chat.generate on the OpenAI fake (synchronous), at LIVE_CHAT_PRICE (the built-in chat prices);
 * - image.generate on the Replicate fake (queued): each prediction answers one PNG after one
 *   poll by default; `failNext()` makes the next prediction fail with prediction time, which is
 *   charged (a failed job with a cost, PROVIDER_ERROR);
 * - music.generate on the Replicate fake (queued), at LIVE_MUSIC_PRICE; a test scripts its
 *   prediction with `musicUrl` as the output.
 * With `unitPrices`, chat costs 1 millicent per input token and music 1 per predict second (and
 * nothing else), so that a test sets a live run's exact cost through what the fake reports
 * (support/live-costing.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeOpenAi } from './fake-openai.js';
import { FakeReplicate } from './fake-replicate.js';
import { mp3, png } from './media.js';

export const LIVE_OPENAI_KEY = 'sk-live-backend-0123456789abcdef';
export const LIVE_REPLICATE_TOKEN = 'r8_live_backend_0123456789abcdef';
export const LIVE_CHAT_PRICE = { baseMillicents: 20, inputTokenMillicents: 1, outputTokenMillicents: 3 };
export const LIVE_IMAGE_PRICE = { perImageMillicents: 4000, perPredictSecondMillicents: 10 };
export const LIVE_MUSIC_PRICE = { perSecondMillicents: 10, perPredictSecondMillicents: 100 };
export const UNIT_CHAT_PRICE = { inputTokenMillicents: 1 };
export const UNIT_MUSIC_PRICE = { perPredictSecondMillicents: 1 };
/** The music route's prediction deadline: with unit prices, a music job holds this many millicents. */
export const LIVE_MUSIC_TIMEOUT_S = 6000;
/** What live keys run with this file (link.preview always runs on the built-in fetcher): GET /v1/tools lists no more. */
export const LIVE_OPERATIONS: readonly string[] = ['chat.generate', 'image.generate', 'link.preview', 'music.generate'];
/** The provider names of the file: what a live job's `provider` shows. */
export const LIVE_PROVIDERS = { chat: 'oa', image: 'rep', music: 'rep' } as const;

export interface LiveBackendOptions {
  /** Chat at 1 millicent per input token, music at 1 per predict second, nothing else. */
  unitPrices?: boolean;
  /**
   * A providers file of the suite's own instead of the routes above, given the fakes (their keys
   * are in the environment as LIVE_OPENAI_KEY and LIVE_REPLICATE_TOKEN).
   */
  file?: (fakes: { openai: FakeOpenAi; replicate: FakeReplicate }) => { providers: Record<string, unknown>; operations: Record<string, unknown> };
}

export interface LiveBackend {
  openai: FakeOpenAi;
  replicate: FakeReplicate;
  /** The environment that points a service at the file (PROVIDERS_FILE and the providers' keys). */
  env: Record<string, string>;
  /** An MP3 the Replicate fake serves, the output a music.generate prediction is scripted with (`replicate.next`); by default a prediction answers the PNG. */
  musicUrl: string;
  /** The next prediction (image.generate, music.generate) fails after `predictTime` seconds of work, which is charged. */
  failNext(predictTime?: number): void;
  close(): Promise<void>;
}

export async function startLiveBackend(options: LiveBackendOptions = {}): Promise<LiveBackend> {
  const openai = await FakeOpenAi.start();
  const replicate = await FakeReplicate.start();
  const image = await png();
  replicate.defaultScript = { polls: 1, output: [replicate.putFile('live.png', image)] };
  const musicUrl = replicate.putFile('live.mp3', mp3());
  const dir = mkdtempSync(join(tmpdir(), 'was-live-backend-'));
  const file = join(dir, 'providers.json');
  writeFileSync(
    file,
    JSON.stringify(options.file ? options.file({ openai, replicate }) : {
      providers: {
        [LIVE_PROVIDERS.chat]: { type: 'openai', baseUrl: openai.baseUrl, apiKeyEnv: 'LIVE_OPENAI_KEY', privateNetwork: true, maxRetries: 0 },
        [LIVE_PROVIDERS.image]: { type: 'replicate', baseUrl: replicate.baseUrl, apiKeyEnv: 'LIVE_REPLICATE_TOKEN', privateNetwork: true, maxRetries: 0 },
      },
      operations: {
        'chat.generate': { provider: LIVE_PROVIDERS.chat, model: 'gpt-4o-mini', price: options.unitPrices ? UNIT_CHAT_PRICE : LIVE_CHAT_PRICE },
        'image.generate': { provider: LIVE_PROVIDERS.image, model: 'owner/img', input: { prompt: '{{prompt}}', num_outputs: '{{count}}' }, price: LIVE_IMAGE_PRICE, pollIntervalMs: 10 },
        'music.generate': {
          provider: LIVE_PROVIDERS.music,
          model: 'owner/music',
          input: { prompt: '{{prompt}}', duration: '{{durationSeconds}}' },
          price: options.unitPrices ? UNIT_MUSIC_PRICE : LIVE_MUSIC_PRICE,
          timeoutSeconds: LIVE_MUSIC_TIMEOUT_S,
          pollIntervalMs: 10,
        },
      },
    }),
  );
  return {
    openai,
    replicate,
    env: { PROVIDERS_FILE: file, LIVE_OPENAI_KEY, LIVE_REPLICATE_TOKEN },
    musicUrl,
    failNext(predictTime = 2) {
      replicate.next({ polls: 1, status: 'failed', error: 'the model failed', predictTime });
    },
    async close() {
      await openai.close();
      await replicate.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
