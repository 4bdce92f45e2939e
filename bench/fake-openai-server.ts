/**
 * The OpenAI-compatible fake of test/support/fake-openai.ts as a process of its own, for
 * bench/providers.ts: `node --import tsx bench/fake-openai-server.ts` listens on 127.0.0.1 (a free
 * port), prints `URL <base URL>` (the `…/v1` a providers file names) on stdout, answers every chat
 * completion at once with its default reply and usage, and stops on SIGTERM. The fake records
 * every request; the record is emptied every second so a long bench does not grow the process
 * (nothing reads it here).
 */
import { FakeOpenAi } from '../test/support/fake-openai.js';

const fake = await FakeOpenAi.start();
setInterval(() => {
  fake.requests.length = 0;
}, 1000).unref();
process.on('SIGTERM', () => {
  void fake.close().then(() => process.exit(0));
});
process.stdout.write(`URL ${fake.baseUrl}\n`);
