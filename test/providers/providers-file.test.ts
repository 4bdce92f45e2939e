/**
 * The providers file (decisions.md section 5, docs/providers.md): validation at start-up that lists
 * every problem together (ConfigError, exit 78), secrets that never print, provider addresses, the
 * example files, and the price rules of prices.ts (maximum a true bound, actual cost capped at it).
 * Pure unit tests through loadConfig / parseProvidersFile / prices.ts, plus the BUILT server as a
 * process for the exit code and the start-up log (skipped with a message without `npm run build`).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../../src/config.js';
import { OPERATIONS } from '../../src/operations/registry.js';
import { createEgress } from '../../src/egress/client.js';
import { ProviderRegistry } from '../../src/providers/registry.js';
import pino from 'pino';
import {
  checkProviderAddresses,
  DEFAULT_MAX_RETRIES,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_PREDICTION_TIMEOUT_S,
  DEFAULT_REQUEST_TIMEOUT_MS,
  parseProvidersFile,
  Secret,
  type ProvidersFile,
} from '../../src/providers/providers-file.js';
import { CHAT_TOKENS_PER_MESSAGE, CHAT_TOKENS_PER_REQUEST, characterCount, chatInputTokenBound, costOfUsage } from '../../src/operations/pricing.js';
import { priceFromParams } from '../../src/operations/registry.js';
import { priceParamsFor } from '../../src/providers/kinds.js';
import { DIST_MAIN, onLogLines, startServer } from '../support/processes.js';
import { waitUntil } from '../support/wait.js';
import { needsDist } from '../support/requirements.js';

const dir = mkdtempSync(join(tmpdir(), 'was-providers-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let fileNo = 0;
/** Writes `content` (a value as JSON, or a string as is) to a fresh file; returns its path. */
function providersFile(content: unknown): string {
  const path = join(dir, `providers-${++fileNo}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

/** The problems loadConfig lists for `content` as PROVIDERS_FILE (it must refuse it). */
function problemsOf(content: unknown, env: Record<string, string> = {}): string[] {
  try {
    loadConfig({ ...env, PROVIDERS_FILE: providersFile(content) });
  } catch (err) {
    assert.ok(err instanceof ConfigError, `a ConfigError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail('loadConfig accepted an invalid providers file');
}

/** The validated file of a valid `content`. */
function accepted(content: unknown, env: Record<string, string> = {}): ProvidersFile {
  let config: Config;
  try {
    config = loadConfig({ ...env, PROVIDERS_FILE: providersFile(content) });
  } catch (err) {
    assert.fail(`refused: ${err instanceof ConfigError ? err.problems.join(' | ') : String(err)}`);
  }
  assert.ok(config.providers, 'the validated file is in the configuration');
  return config.providers;
}

/** Exactly one problem matches each pattern. */
function assertListed(problems: string[], ...patterns: RegExp[]): void {
  for (const p of patterns) {
    const hits = problems.filter((x) => p.test(x));
    assert.equal(hits.length, 1, `one problem matching ${p}; problems: ${JSON.stringify(problems, null, 2)}`);
  }
}

const OPENAI = { type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' };
const REPLICATE = { type: 'replicate', baseUrl: 'https://api.replicate.com/v1', apiKeyEnv: 'REPLICATE_API_TOKEN' };
const KEYS = { OPENAI_API_KEY: 'sk-test-openai-0123456789', REPLICATE_API_TOKEN: 'r8_test_0123456789' };
const CHAT_PRICE = { baseMillicents: 20, inputTokenMillicents: 1, outputTokenMillicents: 3 };
const VERSION = 'a'.repeat(64);

/** A valid file with one openai and one replicate provider, and `operations`. */
function fileWith(operations: Record<string, unknown>, providers: Record<string, unknown> = { openai: OPENAI, replicate: REPLICATE }): Record<string, unknown> {
  return { providers, operations };
}

describe('providers file: the file as a whole', () => {
  test('a file that is not valid JSON is one problem naming the file', () => {
    const problems = problemsOf('{ "simulated": "off", ');
    assert.equal(problems.length, 1, JSON.stringify(problems));
    assert.match(problems[0]!, /^PROVIDERS_FILE: ".*providers-\d+\.json" is not valid JSON/);
  });

  test('PROVIDERS_FILE naming no file is a problem', () => {
    const problems = (() => {
      try {
        loadConfig({ PROVIDERS_FILE: join(dir, 'absent.json') });
      } catch (err) {
        return (err as ConfigError).problems;
      }
      return [];
    })();
    assertListed(problems, /^PROVIDERS_FILE: no file at ".*absent\.json"/);
  });

  test('the file must hold a JSON object (not an array, a string, a number or null)', () => {
    for (const content of ['[]', '"providers"', '42', 'null']) {
      assert.deepEqual(problemsOf(content), ['PROVIDERS_FILE: the file must hold a JSON object'], content);
    }
  });

  test('an unknown top-level field is a problem (only simulated, providers, operations)', () => {
    const problems = problemsOf({ simulated: 'off', provider: {}, operations: {} });
    assertListed(problems, /^PROVIDERS_FILE provider: unknown field \(expected simulated, providers, operations\)$/);
  });

  test('simulated must be "off" or "fallback"', () => {
    for (const value of ['on', true, 'Fallback', 0]) {
      assertListed(problemsOf({ simulated: value }), /^PROVIDERS_FILE simulated: must be "off" or "fallback"/);
    }
    // "fallback" runs live keys' unmapped operations on the simulated provider: only with
    // SIMULATE_LIVE=true (docs/decisions.md "Test mode"); refused otherwise, saying what to do.
    assert.equal(accepted({ simulated: 'fallback' }, { SIMULATE_LIVE: 'true' }).simulated, 'fallback');
    assertListed(problemsOf({ simulated: 'fallback' }), /^PROVIDERS_FILE simulated: "fallback" would run live keys' unmapped operations on the simulated provider; test keys \(wask_test_…\) run every operation on the simulated provider anyway; remove it, or set SIMULATE_LIVE=true/);
  });

  test('simulated defaults to "off" when a file is given; an empty file is valid', () => {
    const file = accepted({});
    assert.equal(file.simulated, 'off');
    assert.equal(file.providers.size, 0);
    assert.equal(file.operations.size, 0);
  });

  test('providers must be an object of named providers and operations an object keyed by operationId', () => {
    const problems = problemsOf({ providers: [OPENAI], operations: ['chat.generate'] });
    assertListed(problems, /^PROVIDERS_FILE providers: must be an object of named providers$/, /^PROVIDERS_FILE operations: must be an object keyed by operationId$/);
  });

  test('several problems of the file are listed together in one ConfigError, with the environment’s own problems', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        PROVIDERS_FILE: providersFile({
          simulated: 'sometimes',
          extra: 1,
          providers: {
            openai: { ...OPENAI, apiKeyEnv: 'UNSET_OPENAI_KEY_FOR_TEST' },
            weird: { type: 'anthropic' },
            local: { type: 'local', baseUrl: 'https://x.example' },
          },
          operations: {
            'chat.generate': { provider: 'missing', price: CHAT_PRICE },
            'image.generate': { provider: 'replicate', model: 'bad model', price: { perImageMillicents: -1 } },
            'link.preview': { provider: 'simulated' },
            'video.render': { provider: 'simulated' },
          },
        }),
      });
    } catch (err) {
      error = err;
    }
    assert.ok(error instanceof ConfigError, 'one ConfigError');
    assertListed(
      error.problems,
      /^PORT must be a whole number/,
      /^PROVIDERS_FILE extra: unknown field/,
      /^PROVIDERS_FILE simulated: must be "off" or "fallback" \(got "sometimes"\)$/,
      /^PROVIDERS_FILE providers\.openai: the environment variable UNSET_OPENAI_KEY_FOR_TEST \(apiKeyEnv\) is not set$/,
      /^PROVIDERS_FILE providers\.weird: unknown type "anthropic"/,
      /^PROVIDERS_FILE providers\.local: "baseUrl" does not apply to a local provider$/,
      /^PROVIDERS_FILE operations\.chat\.generate: provider "missing" is not declared in "providers"$/,
      /^PROVIDERS_FILE operations\.image\.generate: provider "replicate" is not declared/,
      /^PROVIDERS_FILE operations\.link\.preview: link\.preview always runs on the built-in fetcher/,
      /^PROVIDERS_FILE operations\.video\.render: not an operation/,
    );
    // The message of the error (what main.ts prints on stderr) carries every problem, one per line.
    for (const p of error.problems) assert.ok(error.message.includes(`  - ${p}`), p);
  });
});

describe('providers file: providers', () => {
  test('an unknown provider type is a problem, and so is a provider without a type', () => {
    const problems = problemsOf({ providers: { a: { type: 'anthropic', baseUrl: 'https://api.anthropic.com' }, b: { baseUrl: 'https://x.example' }, c: 'openai' } });
    assertListed(
      problems,
      /^PROVIDERS_FILE providers\.a: unknown type "anthropic" \(expected openai, replicate, local or simulated\)$/,
      /^PROVIDERS_FILE providers\.b: unknown type undefined/,
      /^PROVIDERS_FILE providers\.c: must be an object with a "type"$/,
    );
  });

  test('unknown fields of a provider are problems (a key written into the file is refused without echoing it)', () => {
    const problems = problemsOf({ providers: { openai: { ...OPENAI, apiKey: 'sk-in-the-file-0123456789', region: 'eu' } } }, KEYS);
    assertListed(problems, /^PROVIDERS_FILE providers\.openai: unknown field "apiKey" \(expected type, baseUrl, apiKeyEnv/, /unknown field "region"/);
    assert.ok(!problems.join('\n').includes('sk-in-the-file-0123456789'));
  });

  test('a provider name is 1 to 32 lowercase letters, digits, "-" or "_", starting with a letter', () => {
    assertListed(problemsOf({ providers: { OpenAI: { type: 'simulated' } } }), /^PROVIDERS_FILE providers\.OpenAI: a provider name is 1 to 32/);
    assertListed(problemsOf({ providers: { ['a'.repeat(33)]: { type: 'simulated' } } }), /a provider name is 1 to 32/);
    assert.ok(accepted({ providers: { 'my-llm_2': { type: 'simulated' } } }).providers.has('my-llm_2'));
  });

  test('baseUrl is required for openai and replicate providers', () => {
    const problems = problemsOf({ providers: { o: { type: 'openai' }, r: { type: 'replicate', apiKeyEnv: 'REPLICATE_API_TOKEN' } } }, KEYS);
    assertListed(problems, /^PROVIDERS_FILE providers\.o: baseUrl is required/, /^PROVIDERS_FILE providers\.r: baseUrl is required/);
  });

  test('baseUrl is an http(s) URL without credentials, query or fragment', () => {
    const problems = problemsOf({
      providers: {
        creds: { type: 'openai', baseUrl: 'https://user:pass@api.openai.com/v1' },
        user: { type: 'openai', baseUrl: 'https://token@api.openai.com/v1' },
        query: { type: 'openai', baseUrl: 'https://api.openai.com/v1?api-key=x' },
        emptyquery: { type: 'openai', baseUrl: 'https://api.openai.com/v1?' },
        fragment: { type: 'openai', baseUrl: 'https://api.openai.com/v1#x' },
        ftp: { type: 'openai', baseUrl: 'ftp://files.example.com/' },
        nourl: { type: 'openai', baseUrl: 'api.openai.com/v1' },
        number: { type: 'openai', baseUrl: 42 },
      },
    });
    const noCreds = /must not carry credentials, a query or a fragment$/;
    assertListed(
      problems,
      new RegExp(`^PROVIDERS_FILE providers\\.creds: baseUrl ${noCreds.source}`),
      new RegExp(`^PROVIDERS_FILE providers\\.user: baseUrl ${noCreds.source}`),
      new RegExp(`^PROVIDERS_FILE providers\\.query: baseUrl ${noCreds.source}`),
      new RegExp(`^PROVIDERS_FILE providers\\.emptyquery: baseUrl ${noCreds.source}`),
      new RegExp(`^PROVIDERS_FILE providers\\.fragment: baseUrl ${noCreds.source}`),
      /^PROVIDERS_FILE providers\.ftp: baseUrl must be http or https$/,
      /^PROVIDERS_FILE providers\.nourl: baseUrl "api\.openai\.com\/v1" is not a URL$/,
      /^PROVIDERS_FILE providers\.number: baseUrl is required/,
    );
    assert.ok(!problems.join('\n').includes('pass'), 'the password is not echoed');
  });

  test('baseUrl on a loopback or private address (127.0.0.1, 10.x, [::1], localhost …) is refused without privateNetwork', () => {
    const hosts: Record<string, string> = {
      loop4: 'http://127.0.0.1:11434/v1',
      loopshort: 'http://127.1:11434/v1',
      ten: 'http://10.1.2.3/v1',
      lan: 'http://192.168.1.20:8000/v1',
      loop6: 'http://[::1]:8000/v1',
      mapped: 'http://[::ffff:127.0.0.1]:8000/v1',
      local: 'http://localhost:11434/v1',
      sublocal: 'http://llm.localhost/v1',
      metadata: 'http://169.254.169.254/latest',
      any: 'http://0.0.0.0:8000/v1',
    };
    const providers = Object.fromEntries(Object.entries(hosts).map(([name, baseUrl]) => [name, { type: 'openai', baseUrl }]));
    const problems = problemsOf({ providers });
    for (const name of Object.keys(hosts)) {
      assertListed(problems, new RegExp(`^PROVIDERS_FILE providers\\.${name}: baseUrl \\S+ is a private or loopback address: set "privateNetwork": true on this provider to allow it$`));
    }
    assert.equal(problems.length, Object.keys(hosts).length);
  });

  test('with "privateNetwork": true a loopback or private baseUrl is accepted (Ollama on the same host)', () => {
    const hosts = ['http://127.0.0.1:11434/v1', 'http://10.0.0.7:8000/v1', 'http://[::1]:8000/v1', 'http://localhost:11434/v1/'];
    const providers = Object.fromEntries(hosts.map((baseUrl, i) => [`p${i}`, { type: 'openai', baseUrl, privateNetwork: true }]));
    const file = accepted({ providers });
    assert.equal(file.providers.get('p0')?.privateNetwork, true);
    assert.equal(file.providers.get('p3')?.baseUrl, 'http://localhost:11434/v1', 'the trailing slash is dropped');
  });

  test('a public baseUrl needs no privateNetwork, and privateNetwork must be a boolean', () => {
    const file = accepted({ providers: { pub: { type: 'openai', baseUrl: 'https://93.184.216.34/v1' } } });
    assert.equal(file.providers.get('pub')?.privateNetwork, false);
    assertListed(problemsOf({ providers: { p: { type: 'openai', baseUrl: 'https://api.example.com/v1', privateNetwork: 'yes' } } }), /^PROVIDERS_FILE providers\.p: privateNetwork must be true or false$/);
  });

  test('apiKeyEnv naming an unset (or blank) environment variable is a problem; apiKeyEnv must be a variable name', () => {
    const problems = problemsOf(
      {
        providers: {
          unset: { ...OPENAI, apiKeyEnv: 'NOT_SET_ANYWHERE_KEY' },
          blank: { ...OPENAI, apiKeyEnv: 'BLANK_KEY' },
          badname: { ...OPENAI, apiKeyEnv: 'my-key' },
          notstring: { ...OPENAI, apiKeyEnv: 7 },
        },
      },
      { BLANK_KEY: '   ' },
    );
    assertListed(
      problems,
      /^PROVIDERS_FILE providers\.unset: the environment variable NOT_SET_ANYWHERE_KEY \(apiKeyEnv\) is not set$/,
      /^PROVIDERS_FILE providers\.blank: the environment variable BLANK_KEY \(apiKeyEnv\) is not set$/,
      /^PROVIDERS_FILE providers\.badname: apiKeyEnv must name an environment variable$/,
      /^PROVIDERS_FILE providers\.notstring: apiKeyEnv must name an environment variable$/,
    );
  });

  test('a provider without apiKeyEnv has no operator key (a keyless server such as Ollama)', () => {
    const spec = accepted({ providers: { ollama: { type: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', privateNetwork: true } } }).providers.get('ollama')!;
    assert.equal(spec.apiKey, undefined);
    assert.equal(spec.apiKeyEnv, undefined);
  });

  test('the secret value never appears in problems, JSON.stringify(config) or util.inspect(config)', () => {
    const secret = 'sk-live-VERY-SECRET-0123456789abcdef';
    const config = loadConfig({ OPENAI_API_KEY: ` ${secret} `, PROVIDERS_FILE: providersFile(fileWith({ 'chat.generate': { provider: 'openai', model: 'gpt-4o-mini', price: CHAT_PRICE } }, { openai: OPENAI })) });
    const spec = config.providers!.providers.get('openai')!;
    assert.ok(spec.apiKey instanceof Secret);
    assert.equal(spec.apiKey.reveal(), secret, 'the value is read from the environment (trimmed)');
    assert.equal(spec.apiKeyEnv, 'OPENAI_API_KEY');
    assert.equal(String(spec.apiKey), '[secret]');
    assert.equal(`${spec.apiKey}`, '[secret]');
    assert.equal(JSON.stringify(spec.apiKey), '"[secret]"');
    for (const text of [
      JSON.stringify(config),
      JSON.stringify([...config.providers!.providers.values()]),
      inspect(config, { depth: Infinity, showHidden: true }),
      inspect(spec, { depth: Infinity, showHidden: true }),
    ]) {
      assert.ok(!text.includes(secret), `the secret leaked into ${text.slice(0, 200)}`);
      assert.ok(!text.includes('VERY-SECRET'), 'not even a part of it');
    }
    assert.match(JSON.stringify([...config.providers!.providers.values()]), /"apiKey":"\[secret\]"/);
    assert.match(inspect(spec), /\[secret\]/);

    // With the variable set but the file broken elsewhere, the problems never quote the value.
    const problems = problemsOf(fileWith({ 'video.generate': { provider: 'openai', model: 'sora', price: { perRunMillicents: 1 } } }, { openai: OPENAI, bad: { type: 'nope' } }), { OPENAI_API_KEY: secret });
    assert.ok(problems.length >= 2);
    assert.ok(!problems.join('\n').includes(secret));
  });

  test('mediaInputs is "url" (default) or "dataUri", on replicate providers only', () => {
    const file = accepted({ providers: { r: { ...REPLICATE, mediaInputs: 'dataUri' }, r2: REPLICATE } }, KEYS);
    assert.equal(file.providers.get('r')?.mediaInputs, 'dataUri');
    assert.equal(file.providers.get('r2')?.mediaInputs, 'url');
    const problems = problemsOf({ providers: { o: { ...OPENAI, mediaInputs: 'url' }, r: { ...REPLICATE, mediaInputs: 'base64' } } }, KEYS);
    assertListed(problems, /^PROVIDERS_FILE providers\.o: mediaInputs applies to replicate providers only$/, /^PROVIDERS_FILE providers\.r: mediaInputs must be "url" or "dataUri"$/);
  });

  test('requestTimeoutMs is a whole number from 100 to 3600000 and maxRetries from 0 to 10 (defaults 120000 and 2)', () => {
    const file = accepted({ providers: { a: OPENAI, b: { ...OPENAI, requestTimeoutMs: 100, maxRetries: 0 }, c: { ...OPENAI, requestTimeoutMs: 3_600_000, maxRetries: 10 } } }, KEYS);
    assert.equal(file.providers.get('a')?.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS);
    assert.equal(DEFAULT_REQUEST_TIMEOUT_MS, 120_000);
    assert.equal(file.providers.get('a')?.maxRetries, DEFAULT_MAX_RETRIES);
    assert.equal(DEFAULT_MAX_RETRIES, 2);
    assert.equal(file.providers.get('c')?.requestTimeoutMs, 3_600_000);
    for (const requestTimeoutMs of [99, 3_600_001, 1000.5, '1000']) {
      assertListed(problemsOf({ providers: { a: { ...OPENAI, requestTimeoutMs } } }, KEYS), /^PROVIDERS_FILE providers\.a: requestTimeoutMs must be a whole number of milliseconds from 100 to 3600000$/);
    }
    for (const maxRetries of [-1, 11, 1.5, '2']) {
      assertListed(problemsOf({ providers: { a: { ...OPENAI, maxRetries } } }, KEYS), /^PROVIDERS_FILE providers\.a: maxRetries must be a whole number from 0 to 10$/);
    }
  });

  test('local and simulated providers take no remote fields', () => {
    const problems = problemsOf({ providers: { l: { type: 'local', apiKeyEnv: 'X', privateNetwork: true }, s: { type: 'simulated', requestTimeoutMs: 1000, maxRetries: 1, mediaInputs: 'url' } } });
    assertListed(
      problems,
      /^PROVIDERS_FILE providers\.l: "apiKeyEnv" does not apply to a local provider$/,
      /^PROVIDERS_FILE providers\.l: "privateNetwork" does not apply to a local provider$/,
      /^PROVIDERS_FILE providers\.s: "requestTimeoutMs" does not apply to a simulated provider$/,
      /^PROVIDERS_FILE providers\.s: "maxRetries" does not apply to a simulated provider$/,
      /^PROVIDERS_FILE providers\.s: "mediaInputs" does not apply to a simulated provider$/,
    );
    const file = accepted({ providers: { l: { type: 'local' }, s: { type: 'simulated' } } });
    assert.equal(file.providers.get('l')?.type, 'local');
  });
});

describe('providers file: operations', () => {
  test('an operation key that is not an operationId is a problem', () => {
    const problems = problemsOf(fileWith({ 'chat.complete': { provider: 'openai', model: 'm', price: CHAT_PRICE }, Chat: {} }), KEYS);
    assertListed(problems, /^PROVIDERS_FILE operations\.chat\.complete: not an operation/, /^PROVIDERS_FILE operations\.Chat: not an operation/);
  });

  test('link.preview takes no entry: it always runs on the built-in fetcher', () => {
    assertListed(problemsOf(fileWith({ 'link.preview': { provider: 'simulated' } })), /^PROVIDERS_FILE operations\.link\.preview: link\.preview always runs on the built-in fetcher and takes no entry$/);
  });

  test('an operation entry must be an object naming a provider', () => {
    const problems = problemsOf(fileWith({ 'chat.generate': 'openai', 'image.generate': { model: 'gpt-image-1', price: { perImageMillicents: 1 } } }), KEYS);
    assertListed(problems, /^PROVIDERS_FILE operations\.chat\.generate: must be an object with a "provider"$/, /^PROVIDERS_FILE operations\.image\.generate: provider must name a provider of the file/);
  });

  test('an operation mapped to a provider that is not declared is a problem ("simulated" needs no declaration)', () => {
    assertListed(problemsOf(fileWith({ 'chat.generate': { provider: 'anthropic', model: 'claude', price: CHAT_PRICE } }), KEYS), /^PROVIDERS_FILE operations\.chat\.generate: provider "anthropic" is not declared in "providers"$/);
    // Mapping live keys to the simulated provider takes SIMULATE_LIVE=true (docs/decisions.md "Test mode").
    const file = accepted({ operations: { 'video.generate': { provider: 'simulated' } } }, { SIMULATE_LIVE: 'true' });
    assertListed(problemsOf({ operations: { 'video.generate': { provider: 'simulated' } } }), /^PROVIDERS_FILE operations\.video\.generate: provider "simulated" is simulated and would run live keys on it; .*SIMULATE_LIVE=true/);
    assert.equal(file.operations.get('video.generate')?.provider, 'simulated');
  });

  test('a broken or undeclared provider is listed once, not again by every operation that names it (no model/input/voice problems of an unknown type)', () => {
    const problems = problemsOf({
      providers: { openai: { ...OPENAI, apiKeyEnv: 'UNSET_KEY_FOR_TEST' }, replicate: { ...REPLICATE, apiKeyEnv: 'UNSET_KEY_FOR_TEST' } },
      operations: {
        'chat.generate': { provider: 'openai', model: 'gpt-4o-mini', price: CHAT_PRICE },
        'speech.generate': { provider: 'openai', model: 'tts-1', voice: 'nova', price: { perThousandCharactersMillicents: 1 } },
        'image.generate': { provider: 'replicate', model: 'a/b', input: { prompt: '{{prompt}}' }, price: { perImageMillicents: 1 } },
        'music.generate': { provider: 'ghost', model: 'a/b', price: { perRunMillicents: 1 } },
      },
    });
    assert.deepEqual(problems, [
      'PROVIDERS_FILE providers.openai: the environment variable UNSET_KEY_FOR_TEST (apiKeyEnv) is not set',
      'PROVIDERS_FILE providers.replicate: the environment variable UNSET_KEY_FOR_TEST (apiKeyEnv) is not set',
      'PROVIDERS_FILE operations.music.generate: provider "ghost" is not declared in "providers"',
    ]);
  });

  test('an openai provider serves chat.generate, image.generate and speech.generate only (not video.generate)', () => {
    const problems = problemsOf(fileWith({ 'video.generate': { provider: 'openai', model: 'sora-2', price: { perSecondMillicents: 1 } }, 'background.remove': { provider: 'openai', model: 'x', price: { perRunMillicents: 1 } } }), KEYS);
    assertListed(
      problems,
      /^PROVIDERS_FILE operations\.video\.generate: an openai provider cannot serve video\.generate \(it serves chat\.generate, image\.generate, speech\.generate\)$/,
      /^PROVIDERS_FILE operations\.background\.remove: an openai provider cannot serve background\.remove/,
    );
    const file = accepted(fileWith({ 'chat.generate': { provider: 'openai', model: 'gpt-4o-mini', price: CHAT_PRICE }, 'image.generate': { provider: 'openai', model: 'gpt-image-1', price: { perImageMillicents: 1 } }, 'speech.generate': { provider: 'openai', model: 'tts-1', price: { perThousandCharactersMillicents: 1 } } }), KEYS);
    assert.equal(file.operations.size, 3);
  });

  test('a replicate provider cannot serve chat.generate, security.scan, sprite.generate or video.edit', () => {
    const price = { perRunMillicents: 1 };
    const problems = problemsOf(
      fileWith({
        'chat.generate': { provider: 'replicate', model: 'meta/llama', price },
        'security.scan': { provider: 'replicate', model: 'a/b', price },
        'sprite.generate': { provider: 'replicate', model: 'a/b', price },
        'video.edit': { provider: 'replicate', model: 'a/b', price },
      }),
      KEYS,
    );
    for (const op of ['chat.generate', 'security.scan', 'sprite.generate', 'video.edit']) {
      assertListed(problems, new RegExp(`^PROVIDERS_FILE operations\\.${op.replace('.', '\\.')}: a replicate provider cannot serve ${op.replace('.', '\\.')}$`));
    }
  });

  test('a replicate provider serves every other queued operation', () => {
    const ops = ['image.generate', 'headshot.generate', 'background.remove', 'video.generate', 'music.generate', 'speech.generate', 'three-d.generate', 'three-d.rig', 'voice.clone'];
    const file = accepted(fileWith(Object.fromEntries(ops.map((op) => [op, { provider: 'replicate', model: 'owner/model', price: { perRunMillicents: 1 } }]))), KEYS);
    assert.deepEqual([...file.operations.keys()].sort(), [...ops].sort());
  });

  test('a local provider needs a known "engine" that serves the operation (ffmpeg: video.edit, espeak-ng: speech.generate, scanner: security.scan, sprites: sprite.generate, rigger: three-d.rig)', () => {
    const problems = problemsOf({
      providers: { local: { type: 'local' } },
      operations: {
        'video.edit': { provider: 'local', engine: 'blender', price: { perRunMillicents: 100 } },
        'speech.generate': { provider: 'local', price: { perRunMillicents: 1 } },
        'music.generate': { provider: 'local', engine: 'ffmpeg', price: { perRunMillicents: 1 } },
      },
    });
    assertListed(
      problems,
      /^PROVIDERS_FILE operations\.video\.edit: unknown engine "blender" \(engines in this version: ffmpeg, espeak-ng, scanner, sprites, rigger\)$/,
      /^PROVIDERS_FILE operations\.speech\.generate: a local provider needs "engine"$/,
      /^PROVIDERS_FILE operations\.music\.generate: engine "ffmpeg" cannot serve music\.generate$/,
    );
    const file = accepted({
      providers: { local: { type: 'local' } },
      operations: {
        'video.edit': { provider: 'local', engine: 'ffmpeg', maxOutputSeconds: 120, price: { perSecondMillicents: 100 } },
        'speech.generate': { provider: 'local', engine: 'espeak-ng', price: { perThousandCharactersMillicents: 50 } },
        'security.scan': { provider: 'local', engine: 'scanner', price: { perRunMillicents: 15000 } },
        'sprite.generate': { provider: 'local', engine: 'sprites', frames: 'simulated', price: { perFrameMillicents: 10 } },
        'three-d.rig': { provider: 'local', engine: 'rigger', price: { perRunMillicents: 2000 } },
      },
      // Frames drawn on the simulated provider are simulated work for live keys: SIMULATE_LIVE only.
    }, { SIMULATE_LIVE: 'true' });
    assert.equal(file.operations.get('video.edit')?.maxOutputSeconds, 120);
    assert.equal(file.operations.get('sprite.generate')?.frames, 'simulated');
    assert.equal(file.operations.get('three-d.rig')?.engine, 'rigger');
  });

  test('maxOutputSeconds applies to the ffmpeg engine only, frames to the sprites engine only, and frames names a provider that can make images', () => {
    const problems = problemsOf({
      providers: { local: { type: 'local' } },
      operations: {
        'speech.generate': { provider: 'local', engine: 'espeak-ng', maxOutputSeconds: 10, price: { perRunMillicents: 1 } },
        'security.scan': { provider: 'local', engine: 'scanner', frames: 'simulated', price: { perRunMillicents: 1 } },
        'sprite.generate': { provider: 'local', engine: 'sprites', frames: 'nowhere', price: { perFrameMillicents: 1 } },
        'video.edit': { provider: 'local', engine: 'ffmpeg', maxOutputSeconds: 0, price: { perRunMillicents: 1 } },
      },
    });
    assertListed(
      problems,
      /^PROVIDERS_FILE operations\.speech\.generate: maxOutputSeconds applies to the ffmpeg engine only$/,
      /^PROVIDERS_FILE operations\.security\.scan: frames applies to the sprites engine only$/,
      /^PROVIDERS_FILE operations\.sprite\.generate: frames: provider "nowhere" is not declared in "providers"$/,
      /^PROVIDERS_FILE operations\.video\.edit: maxOutputSeconds must be a whole number of seconds from 1 to 86400$/,
    );
    const drawn = accepted(
      { providers: { local: { type: 'local' }, ...(fileWith({}).providers as Record<string, unknown>) }, operations: { 'sprite.generate': { provider: 'local', engine: 'sprites', frames: 'openai', model: 'gpt-image-1', price: { perFrameMillicents: 10 } } } },
      KEYS,
    );
    assert.equal(drawn.operations.get('sprite.generate')?.frames, 'openai');
    assertListed(
      problemsOf({ providers: { local: { type: 'local' }, ...(fileWith({}).providers as Record<string, unknown>) }, operations: { 'sprite.generate': { provider: 'local', engine: 'sprites', frames: 'openai', price: { perFrameMillicents: 10 } } } }, KEYS),
      /^PROVIDERS_FILE operations\.sprite\.generate: model is required/,
    );
  });

  test('engine applies to local providers only', () => {
    assertListed(problemsOf(fileWith({ 'chat.generate': { provider: 'openai', model: 'gpt-4o-mini', engine: 'ffmpeg', price: CHAT_PRICE } }), KEYS), /^PROVIDERS_FILE operations\.chat\.generate: engine applies to local providers only$/);
  });

  test('model is required for openai and replicate providers, and applies to nothing else', () => {
    const problems = problemsOf(
      {
        ...fileWith({ 'chat.generate': { provider: 'openai', price: CHAT_PRICE }, 'image.generate': { provider: 'replicate', model: '', price: { perImageMillicents: 1 } }, 'video.generate': { provider: 'simulated', model: 'sim' } }),
      },
      KEYS,
    );
    assertListed(
      problems,
      /^PROVIDERS_FILE operations\.chat\.generate: model is required/,
      /^PROVIDERS_FILE operations\.image\.generate: model is required/,
      /^PROVIDERS_FILE operations\.video\.generate: model does not apply to a simulated provider$/,
    );
  });

  test('a replicate model is "owner/name" or "owner/name:VERSION" with 64 hex digits', () => {
    for (const model of ['flux-schnell', 'owner/name:abc123', 'owner/name/extra', '/name', `owner/name:${'g'.repeat(64)}`, 'owner /name']) {
      assertListed(problemsOf(fileWith({ 'image.generate': { provider: 'replicate', model, price: { perImageMillicents: 1 } } }), KEYS), /^PROVIDERS_FILE operations\.image\.generate: a replicate model is "owner\/name" or "owner\/name:VERSION"/);
    }
    for (const model of ['black-forest-labs/flux-schnell', `meta/musicgen:${VERSION}`, 'stability-ai/sdxl']) {
      assert.equal(accepted(fileWith({ 'image.generate': { provider: 'replicate', model, price: { perImageMillicents: 1 } } }), KEYS).operations.get('image.generate')?.model, model);
    }
  });

  test('an input template may name only fields of the operation’s input, each string exactly "{{field}}" or "{{field.N}}" of a list field', () => {
    const problems = problemsOf(
      fileWith({
        'image.generate': { provider: 'replicate', model: 'a/b', input: { prompt: '{{prompt}}', steps: '{{steps}}', extra: ['{{seed}}'], nested: { deep: '{{colour}}' }, first: '{{referenceMediaIds.0}}', letter: '{{prompt.0}}' }, price: { perImageMillicents: 1 } },
        'music.generate': { provider: 'replicate', model: 'a/b', input: { prompt: 'music: {{prompt}}' }, price: { perRunMillicents: 1 } },
        'video.generate': { provider: 'replicate', model: 'a/b', input: ['{{prompt}}'], price: { perRunMillicents: 1 } },
      }),
      KEYS,
    );
    assertListed(
      problems,
      /^PROVIDERS_FILE operations\.image\.generate: input\.steps: "\{\{steps\}\}" is not a field of the operation's input$/,
      /^PROVIDERS_FILE operations\.image\.generate: input\.extra\[0\]: "\{\{seed\}\}" is not a field/,
      /^PROVIDERS_FILE operations\.image\.generate: input\.nested\.deep: "\{\{colour\}\}" is not a field/,
      /^PROVIDERS_FILE operations\.image\.generate: input\.letter: "\{\{prompt\.0\}\}" takes an element of prompt, which is not a list$/,
      /^PROVIDERS_FILE operations\.music\.generate: input\.prompt: a template string is exactly "\{\{field\}\}" or "\{\{field\.N\}\}" \(an element of a list field\)$/,
      /^PROVIDERS_FILE operations\.video\.generate: input must be an object \(the model input\)$/,
    );
    // "{{referenceMediaIds.0}}" (an element of a list field) is accepted: no problem of its own.
    assert.equal(problems.length, 6, JSON.stringify(problems));
  });

  test('a template keeps other values as written', () => {
    const input = { image: '{{mediaId}}', threshold: 0.5, reverse: false, sizes: [1, '{{mediaId}}'], label: 'plain text' };
    const file = accepted(fileWith({ 'background.remove': { provider: 'replicate', model: 'a/b', input, price: { perRunMillicents: 1 } } }), KEYS);
    assert.deepEqual(file.operations.get('background.remove')?.input, input);
  });

  test('an input template applies to replicate providers only', () => {
    assertListed(problemsOf(fileWith({ 'chat.generate': { provider: 'openai', model: 'gpt-4o-mini', input: { prompt: '{{messages}}' }, price: CHAT_PRICE } }), KEYS), /^PROVIDERS_FILE operations\.chat\.generate: input \(a model input template\) applies to replicate providers only$/);
  });

  test('voice applies to speech.generate on an openai provider only', () => {
    assert.equal(accepted(fileWith({ 'speech.generate': { provider: 'openai', model: 'tts-1', voice: 'nova', price: { perThousandCharactersMillicents: 1 } } }), KEYS).operations.get('speech.generate')?.voice, 'nova');
    const problems = problemsOf(fileWith({ 'chat.generate': { provider: 'openai', model: 'gpt-4o-mini', voice: 'nova', price: CHAT_PRICE }, 'speech.generate': { provider: 'replicate', model: 'a/b', voice: 'nova', price: { perRunMillicents: 1 } } }), KEYS);
    assertListed(problems, /^PROVIDERS_FILE operations\.chat\.generate: voice applies to speech\.generate/, /^PROVIDERS_FILE operations\.speech\.generate: voice applies to speech\.generate/);
  });

  test('sizes and maxImagesPerRequest: the sizes an image model accepts, validated at start-up (image.generate on openai only)', () => {
    const image = (extra: Record<string, unknown>) => fileWith({ 'image.generate': { provider: 'openai', model: 'sdxl', price: { perImageMillicents: 1 }, ...extra } });
    const ok = accepted(image({ sizes: ['512x512', '768x512'], maxImagesPerRequest: 2 }), KEYS).operations.get('image.generate')!;
    assert.deepEqual([ok.sizes, ok.maxImagesPerRequest], [[{ width: 512, height: 512 }, { width: 768, height: 512 }], 2]);
    const without = accepted(image({}), KEYS).operations.get('image.generate')!;
    assert.deepEqual(['sizes' in without, 'maxImagesPerRequest' in without], [false, false]);
    for (const bad of [[], 'x', ['512'], ['512x'], ['0x512'], ['8x512'], ['512x8192'], [512], ['512X512']]) {
      assert.ok(problemsOf(image({ sizes: bad }), KEYS).some((p) => /^PROVIDERS_FILE operations\.image\.generate: sizes/.test(p)), `sizes ${JSON.stringify(bad)} is a problem`);
    }
    assertListed(problemsOf(image({ sizes: ['512x512', '512x512'] }), KEYS), /^PROVIDERS_FILE operations\.image\.generate: sizes\[1\]: "512x512" is listed twice$/);
    assertListed(problemsOf(image({ sizes: Array.from({ length: 33 }, (_, i) => `${64 + i}x64`) }), KEYS), /^PROVIDERS_FILE operations\.image\.generate: sizes must be a list of 1 to 32 sizes/);
    for (const bad of [0, 11, 1.5, '2']) {
      assertListed(problemsOf(image({ maxImagesPerRequest: bad }), KEYS), /^PROVIDERS_FILE operations\.image\.generate: maxImagesPerRequest must be a whole number from 1 to 10$/);
    }
    const elsewhere = problemsOf(
      fileWith({
        'chat.generate': { provider: 'openai', model: 'gpt-4o-mini', price: CHAT_PRICE, sizes: ['512x512'] },
        'headshot.generate': { provider: 'replicate', model: 'a/b', price: { perRunMillicents: 1 }, maxImagesPerRequest: 2 },
      }),
      KEYS,
    );
    assertListed(
      elsewhere,
      /^PROVIDERS_FILE operations\.chat\.generate: sizes and maxImagesPerRequest apply to image\.generate on an openai provider only$/,
      /^PROVIDERS_FILE operations\.headshot\.generate: sizes and maxImagesPerRequest apply to image\.generate on an openai provider only$/,
    );
  });

  test('unknown fields of an operation entry are problems', () => {
    assertListed(problemsOf(fileWith({ 'chat.generate': { provider: 'openai', model: 'gpt-4o-mini', price: CHAT_PRICE, maxTokens: 100 } }), KEYS), /^PROVIDERS_FILE operations\.chat\.generate: unknown field "maxTokens" \(expected provider, model, engine, input, price, voice, timeoutSeconds, pollIntervalMs, frames, maxOutputSeconds, sizes, maxImagesPerRequest\)$/);
  });

  test('timeoutSeconds is a whole number from 1 to 86400 (default 600)', () => {
    const entry = (timeoutSeconds: unknown) => fileWith({ 'video.generate': { provider: 'replicate', model: 'a/b', timeoutSeconds, price: { perRunMillicents: 1 } } });
    assert.equal(accepted(fileWith({ 'video.generate': { provider: 'replicate', model: 'a/b', price: { perRunMillicents: 1 } } }), KEYS).operations.get('video.generate')?.timeoutSeconds, DEFAULT_PREDICTION_TIMEOUT_S);
    assert.equal(DEFAULT_PREDICTION_TIMEOUT_S, 600);
    for (const ok of [1, 86_400]) assert.equal(accepted(entry(ok), KEYS).operations.get('video.generate')?.timeoutSeconds, ok);
    for (const bad of [0, 86_401, 1.5, '60', -5]) {
      assertListed(problemsOf(entry(bad), KEYS), /^PROVIDERS_FILE operations\.video\.generate: timeoutSeconds must be a whole number of seconds from 1 to 86400$/);
    }
  });

  test('pollIntervalMs is a whole number from 10 to 60000 (default 1000)', () => {
    const entry = (pollIntervalMs: unknown) => fileWith({ 'video.generate': { provider: 'replicate', model: 'a/b', pollIntervalMs, price: { perRunMillicents: 1 } } });
    assert.equal(accepted(fileWith({ 'video.generate': { provider: 'replicate', model: 'a/b', price: { perRunMillicents: 1 } } }), KEYS).operations.get('video.generate')?.pollIntervalMs, DEFAULT_POLL_INTERVAL_MS);
    assert.equal(DEFAULT_POLL_INTERVAL_MS, 1000);
    for (const ok of [10, 60_000]) assert.equal(accepted(entry(ok), KEYS).operations.get('video.generate')?.pollIntervalMs, ok);
    for (const bad of [9, 60_001, 100.5, '1000']) {
      assertListed(problemsOf(entry(bad), KEYS), /^PROVIDERS_FILE operations\.video\.generate: pollIntervalMs must be a whole number of milliseconds from 10 to 60000$/);
    }
  });
});

describe('providers file: prices', () => {
  test('a price is required for a real provider (openai, replicate) and optional on the simulated one', () => {
    const problems = problemsOf(fileWith({ 'chat.generate': { provider: 'openai', model: 'gpt-4o-mini' }, 'video.generate': { provider: 'replicate', model: 'a/b' } }), KEYS);
    assertListed(problems, /^PROVIDERS_FILE operations\.chat\.generate: price is required for a real provider/, /^PROVIDERS_FILE operations\.video\.generate: price is required for a real provider/);
    const file = accepted({ operations: { 'video.generate': { provider: 'simulated' }, 'music.generate': { provider: 'simulated', price: { perSecondMillicents: 400 } } } }, { SIMULATE_LIVE: 'true' });
    assert.equal(file.operations.get('video.generate')?.price, undefined, 'the built-in price book applies');
    assert.deepEqual(file.operations.get('music.generate')?.price, { perSecondMillicents: 400 });
  });

  test('a price is an object with at least one parameter', () => {
    for (const price of [{}, 100, 'free', null, [1]]) {
      assertListed(problemsOf(fileWith({ 'chat.generate': { provider: 'openai', model: 'gpt-4o-mini', price } }), KEYS), /^PROVIDERS_FILE operations\.chat\.generate: price (must be an object with at least one price parameter|is required)/);
    }
  });

  test('a price parameter is a whole number of millicents from 0 to 10^8, so no maximum passes Number.MAX_SAFE_INTEGER (not negative, fractional or a string)', () => {
    const price = { baseMillicents: -1, inputTokenMillicents: 0.5, outputTokenMillicents: '3' };
    const problems = problemsOf(fileWith({ 'chat.generate': { provider: 'openai', model: 'gpt-4o-mini', price } }), KEYS);
    for (const key of Object.keys(price)) {
      assertListed(problems, new RegExp(`^PROVIDERS_FILE operations\\.chat\\.generate: price\\.${key} must be a whole number of millicents from 0 to 100000000$`));
    }
    assertListed(problemsOf(fileWith({ 'chat.generate': { provider: 'openai', model: 'm', price: { baseMillicents: 100_000_001 } } }), KEYS), /price\.baseMillicents must be a whole number/);
    const file = accepted(fileWith({ 'chat.generate': { provider: 'openai', model: 'm', price: { baseMillicents: 0, inputTokenMillicents: 100_000_000, outputTokenMillicents: 3 } } }), KEYS);
    assert.deepEqual(file.operations.get('chat.generate')?.price, { baseMillicents: 0, inputTokenMillicents: 100_000_000, outputTokenMillicents: 3 });
  });

  test('an unknown price parameter is a problem', () => {
    assertListed(problemsOf(fileWith({ 'chat.generate': { provider: 'openai', model: 'm', price: { perTokenMillicents: 1 } } }), KEYS), /^PROVIDERS_FILE operations\.chat\.generate: price\.perTokenMillicents is not a price parameter \(known: perRunMillicents, baseMillicents/);
  });

  test('a price parameter that does not apply to the operation is a problem (perImageMillicents on chat.generate …)', () => {
    const problems = problemsOf(
      fileWith({
        'chat.generate': { provider: 'openai', model: 'm', price: { perImageMillicents: 10 } },
        'image.generate': { provider: 'openai', model: 'm', price: { inputTokenMillicents: 1 } },
        'speech.generate': { provider: 'openai', model: 'm', price: { perSecondMillicents: 1 } },
        'music.generate': { provider: 'replicate', model: 'a/b', price: { perFrameMillicents: 1 } },
      }),
      KEYS,
    );
    assertListed(
      problems,
      /^PROVIDERS_FILE operations\.chat\.generate: price\.perImageMillicents does not apply to chat\.generate on a openai provider \(applicable: perRunMillicents, baseMillicents, inputTokenMillicents, outputTokenMillicents\)$/,
      /^PROVIDERS_FILE operations\.image\.generate: price\.inputTokenMillicents does not apply to image\.generate/,
      /^PROVIDERS_FILE operations\.speech\.generate: price\.perSecondMillicents does not apply to speech\.generate/,
      /^PROVIDERS_FILE operations\.music\.generate: price\.perFrameMillicents does not apply to music\.generate/,
    );
  });

  test('perRunMillicents applies to every operation; the operation parameters follow the price table', () => {
    const table: Record<string, string[]> = {
      'chat.generate': ['baseMillicents', 'inputTokenMillicents', 'outputTokenMillicents'],
      'image.generate': ['perImageMillicents'],
      'headshot.generate': ['perImageMillicents'],
      'speech.generate': ['perThousandCharactersMillicents'],
      'video.generate': ['perSecondMillicents'],
      'music.generate': ['perSecondMillicents'],
      // video.edit: nothing in the input bounds the output seconds, so perSecondMillicents is refused.
      'video.edit': [],
      'sprite.generate': ['perFrameMillicents'],
      'background.remove': [],
      'security.scan': [],
    };
    for (const [op, params] of Object.entries(table)) {
      assert.deepEqual(priceParamsFor(op as never, 'openai'), ['perRunMillicents', ...params], op);
      assert.deepEqual(priceParamsFor(op as never, 'replicate'), ['perRunMillicents', ...params, 'perPredictSecondMillicents'], op);
    }
  });

  test('perPredictSecondMillicents applies only on a replicate provider', () => {
    const problems = problemsOf(fileWith({ 'chat.generate': { provider: 'openai', model: 'm', price: { perPredictSecondMillicents: 5 } } }), KEYS);
    assertListed(problems, /^PROVIDERS_FILE operations\.chat\.generate: price\.perPredictSecondMillicents does not apply to chat\.generate on a openai provider/);
    assertListed(problemsOf({ operations: { 'video.generate': { provider: 'simulated', price: { perPredictSecondMillicents: 5 } } } }), /price\.perPredictSecondMillicents does not apply to video\.generate on a simulated provider/);
    const file = accepted(fileWith({ 'image.generate': { provider: 'replicate', model: 'a/b', price: { perImageMillicents: 10, perPredictSecondMillicents: 5 } } }), KEYS);
    assert.deepEqual(file.operations.get('image.generate')?.price, { perImageMillicents: 10, perPredictSecondMillicents: 5 });
  });

  test('every price parameter the file accepts for an operation counts in its maximum (none is silently free)', () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const inputs: Record<string, Record<string, unknown>> = {
      'chat.generate': { messages: [{ role: 'user', content: 'hi' }] },
      'speech.generate': { text: 'hi' },
      'image.generate': { prompt: 'p' },
      'headshot.generate': { referenceMediaIds: [id] },
      'background.remove': { mediaId: id },
      'video.generate': { prompt: 'p' },
      'video.edit': { mediaId: id, edits: [{ type: 'trim', startSeconds: 0, endSeconds: 4 }] },
      'music.generate': { prompt: 'p' },
      'three-d.generate': { prompt: 'p' },
      'three-d.rig': { mediaId: id },
      'sprite.generate': { prompt: 'p' },
      'voice.clone': { referenceMediaIds: [id], name: 'v' },
      'security.scan': { url: 'https://example.com' },
    };
    const free: string[] = [];
    for (const [op, input] of Object.entries(inputs)) {
      for (const type of ['simulated', 'replicate'] as const) {
        for (const param of priceParamsFor(op as never, type)) {
          // Accepted by the parser for this operation and provider type …
          const parsed = parseProvidersFile({ providers: { r: REPLICATE }, operations: { [op]: type === 'replicate' ? { provider: 'r', model: 'a/b', price: { [param]: 1000 } } : { provider: 'simulated', price: { [param]: 1000 } } } }, KEYS);
          if (parsed.problems.length > 0) continue; // e.g. an operation replicate cannot serve
          // … so a run must cost something under it.
          if (priceFromParams({ [param]: 1000 }, op as never, input, 600).maximumMillicents <= 0) free.push(`${op} ${param} on ${type}`);
        }
      }
    }
    assert.deepEqual(free, [], 'price parameters accepted by the file that never raise the maximum (and so are never charged)');
  });

  test('the chat maximum is base + inputToken × (UTF-8 bytes + 8 per message + 8) + outputToken × maxTokens; the estimate is at most the maximum', () => {
    const messages = [
      { role: 'system', content: 'héllo 😀' },
      { role: 'user', content: 'Grüße aus Köln — 日本語 ✓' },
      { role: 'assistant', content: 'ok' },
    ];
    const bytes = messages.map((m) => Buffer.byteLength(m.content, 'utf8'));
    assert.equal(bytes[0], 11, 'h é(2) l l o space 😀(4)');
    assert.notEqual(bytes[1], messages[1]!.content.length, 'multi-byte text: bytes are not UTF-16 units');
    assert.equal(CHAT_TOKENS_PER_MESSAGE, 8);
    assert.equal(CHAT_TOKENS_PER_REQUEST, 8);
    const inputBound = bytes.reduce((sum, b) => sum + b + 8, 0) + 8;
    assert.equal(chatInputTokenBound(messages), inputBound);
    const params = { baseMillicents: 20, inputTokenMillicents: 3, outputTokenMillicents: 7 };
    const price = priceFromParams(params, 'chat.generate', { messages, maxTokens: 100 }, 600);
    assert.equal(price.maximumMillicents, 20 + 3 * inputBound + 7 * 100);
    assert.ok(price.estimatedMillicents <= price.maximumMillicents);
    assert.ok(price.estimatedMillicents >= 20, 'the estimate includes the base');
    // maxTokens defaults to 512 (the input schema's default).
    assert.equal(priceFromParams(params, 'chat.generate', { messages }, 600).maximumMillicents, 20 + 3 * inputBound + 7 * 512);
    // perRunMillicents adds to the chat parameters.
    assert.equal(priceFromParams({ ...params, perRunMillicents: 1000 }, 'chat.generate', { messages, maxTokens: 100 }, 600).maximumMillicents, 1000 + 20 + 3 * inputBound + 7 * 100);
  });

  test('the actual cost is what the provider reports at the file’s prices, capped at the maximum', () => {
    const params = { baseMillicents: 20, inputTokenMillicents: 3, outputTokenMillicents: 7 };
    const messages = [{ role: 'user', content: 'héllo 😀' }];
    const { maximumMillicents } = priceFromParams(params, 'chat.generate', { messages, maxTokens: 50 }, 600);
    assert.equal(costOfUsage(params, { inputTokens: 5, outputTokens: 10 }, maximumMillicents), 20 + 15 + 70);
    assert.equal(costOfUsage(params, { inputTokens: 10_000, outputTokens: 10_000 }, maximumMillicents), maximumMillicents, 'a provider reporting more than the bound is charged the maximum');
    assert.equal(costOfUsage(params, {}, maximumMillicents), 20, 'no usage: the base only');
    assert.equal(costOfUsage(params, { inputTokens: 5, outputTokens: 10 }, 0), 0, 'never above a zero maximum');
  });

  test('speech is priced per thousand characters, counted in code points, rounded up', () => {
    const text = 'héllo 😀';
    assert.equal(characterCount(text), 7, 'the emoji is one code point');
    assert.equal(text.length, 8, 'but two UTF-16 units');
    assert.equal(priceFromParams({ perThousandCharactersMillicents: 1000 }, 'speech.generate', { text }, 600).maximumMillicents, 7);
    // 333 × 7 / 1000 = 2.331 → 3
    assert.equal(priceFromParams({ perThousandCharactersMillicents: 333 }, 'speech.generate', { text }, 600).maximumMillicents, 3);
    assert.equal(priceFromParams({ perThousandCharactersMillicents: 1500, perRunMillicents: 100 }, 'speech.generate', { text: 'x'.repeat(2001) }, 600).maximumMillicents, 100 + Math.ceil((1500 * 2001) / 1000));
    assert.equal(costOfUsage({ perThousandCharactersMillicents: 333 }, { characters: 1 }, 10), 1, 'a part of a thousand rounds up');
  });

  test('image.generate costs perImage × count (count defaults to 1)', () => {
    const params = { perImageMillicents: 4000 };
    assert.equal(priceFromParams(params, 'image.generate', { prompt: 'a cat', count: 3 }, 600).maximumMillicents, 12_000);
    assert.equal(priceFromParams(params, 'image.generate', { prompt: 'a cat' }, 600).maximumMillicents, 4000);
    assert.equal(priceFromParams(params, 'headshot.generate', { referenceMediaIds: ['x'], count: 2 }, 600).maximumMillicents, 8000);
    assert.equal(costOfUsage(params, { images: 2 }, 12_000), 8000, 'charged for the images returned');
    assert.equal(costOfUsage(params, { images: 5 }, 12_000), 12_000, 'never more than the images priced');
  });

  test('video and music are priced per second of the requested duration; sprites per frame', () => {
    assert.equal(priceFromParams({ perSecondMillicents: 1000 }, 'video.generate', { prompt: 'p', durationSeconds: 8 }, 600).maximumMillicents, 8000);
    assert.equal(priceFromParams({ perSecondMillicents: 1000 }, 'video.generate', { prompt: 'p' }, 600).maximumMillicents, 5000, 'default 5 s');
    assert.equal(priceFromParams({ perSecondMillicents: 100 }, 'music.generate', { prompt: 'p' }, 600).maximumMillicents, 3000, 'default 30 s');
    assert.equal(priceFromParams({ perFrameMillicents: 50 }, 'sprite.generate', { prompt: 'p', frames: 12 }, 600).maximumMillicents, 600);
  });

  test('replicate prediction time is bounded by timeoutSeconds: maximum = perPredictSecond × timeoutSeconds', () => {
    const params = { perRunMillicents: 100, perPredictSecondMillicents: 10 };
    const input = { mediaId: '00000000-0000-4000-8000-000000000000' };
    const price = priceFromParams(params, 'background.remove', input, 120);
    assert.equal(price.maximumMillicents, 100 + 10 * 120);
    assert.ok(price.estimatedMillicents <= price.maximumMillicents);
    assert.equal(priceFromParams(params, 'background.remove', input, 300).maximumMillicents, 100 + 10 * 300, 'a longer deadline, a larger bound');
    assert.equal(costOfUsage(params, { predictSeconds: 3.2 }, price.maximumMillicents), 100 + 40, 'reported seconds round up');
    assert.equal(costOfUsage(params, { predictSeconds: 500 }, price.maximumMillicents), price.maximumMillicents, 'capped at the bound');
    // With images, both parts add up.
    assert.equal(priceFromParams({ perImageMillicents: 300, perPredictSecondMillicents: 2 }, 'image.generate', { prompt: 'p', count: 2 }, 60).maximumMillicents, 600 + 120);
  });
});

describe('provider addresses at start-up (checkProviderAddresses)', () => {
  const file = (providers: Record<string, unknown>): ProvidersFile => {
    const parsed = parseProvidersFile({ providers }, KEYS);
    assert.deepEqual(parsed.problems, []);
    return parsed.file!;
  };
  const fakeLookup = (table: Record<string, string[]>) => {
    const asked: string[] = [];
    const lookup = async (host: string) => {
      asked.push(host);
      const answer = table[host];
      if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return answer;
    };
    return { lookup, asked };
  };

  test('a host name that resolves to a private address (10.0.0.5) without privateNetwork is a problem', async () => {
    const { lookup } = fakeLookup({ 'llm.internal.example': ['10.0.0.5'] });
    const problems = await checkProviderAddresses(file({ inhouse: { type: 'openai', baseUrl: 'https://llm.internal.example/v1' } }), lookup);
    assert.deepEqual(problems, ['PROVIDERS_FILE providers.inhouse: llm.internal.example resolves to 10.0.0.5 (private or loopback): set "privateNetwork": true on this provider to allow it']);
  });

  test('a host name that resolves to a public address (93.184.216.34) is fine', async () => {
    const { lookup, asked } = fakeLookup({ 'api.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] });
    assert.deepEqual(await checkProviderAddresses(file({ pub: { type: 'openai', baseUrl: 'https://api.example.com/v1' } }), lookup), []);
    assert.deepEqual(asked, ['api.example.com']);
  });

  test('one private address among public ones is a problem; loopback and mapped loopback too', async () => {
    const { lookup } = fakeLookup({ 'mixed.example': ['93.184.216.34', '192.168.0.9'], 'loop.example': ['::ffff:127.0.0.1'] });
    const problems = await checkProviderAddresses(file({ mixed: { type: 'openai', baseUrl: 'https://mixed.example/v1' }, loop: { type: 'replicate', baseUrl: 'https://loop.example/v1' } }), lookup);
    assert.equal(problems.length, 2);
    assert.match(problems[0]!, /^PROVIDERS_FILE providers\.mixed: mixed\.example resolves to 192\.168\.0\.9 \(private or loopback\)/);
    assert.match(problems[1]!, /^PROVIDERS_FILE providers\.loop: loop\.example resolves to ::ffff:127\.0\.0\.1/);
  });

  test('privateNetwork providers, IP literals and non-remote providers are not looked up; a name that does not resolve is left to the egress guard', async () => {
    const { lookup, asked } = fakeLookup({ 'llm.internal.example': ['10.0.0.5'] });
    const problems = await checkProviderAddresses(
      file({
        inhouse: { type: 'openai', baseUrl: 'https://llm.internal.example/v1', privateNetwork: true },
        literal: { type: 'openai', baseUrl: 'https://93.184.216.34/v1' },
        sim: { type: 'simulated' },
        gone: { type: 'openai', baseUrl: 'https://does-not-resolve.example/v1' },
      }),
      lookup,
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(asked, ['does-not-resolve.example']);
  });
});

describe('the example providers files', () => {
  const example = (name: string) => fileURLToPath(new URL(`../../examples/${name}`, import.meta.url));
  const load = (name: string, env: Record<string, string> = {}) => loadConfig({ ...env, PROVIDERS_FILE: example(name) }).providers!;

  test('examples/providers.openai.json parses (with OPENAI_API_KEY set) into chat, image and speech on openai', () => {
    const file = load('providers.openai.json', { OPENAI_API_KEY: 'sk-example-0123456789' });
    assert.equal(file.simulated, 'off');
    const openai = file.providers.get('openai')!;
    assert.equal(openai.type, 'openai');
    assert.equal(openai.baseUrl, 'https://api.openai.com/v1');
    assert.equal(openai.apiKey?.reveal(), 'sk-example-0123456789');
    assert.deepEqual([...file.operations.keys()].sort(), ['chat.generate', 'image.generate', 'speech.generate']);
    for (const route of file.operations.values()) assert.equal(route.provider, 'openai');
    assert.equal(file.operations.get('chat.generate')?.model, 'gpt-4o-mini');
    assert.equal(file.operations.get('image.generate')?.model, 'gpt-image-1');
    assert.equal(file.operations.get('speech.generate')?.voice, 'alloy');
    assert.throws(() => loadConfig({ PROVIDERS_FILE: example('providers.openai.json') }), /OPENAI_API_KEY \(apiKeyEnv\) is not set/);
  });

  test('examples/providers.ollama.json parses into chat.generate on a keyless OpenAI-compatible server on 127.0.0.1 (privateNetwork)', () => {
    const file = load('providers.ollama.json');
    const ollama = file.providers.get('ollama')!;
    assert.equal(ollama.type, 'openai');
    assert.equal(ollama.baseUrl, 'http://127.0.0.1:11434/v1');
    assert.equal(ollama.privateNetwork, true);
    assert.equal(ollama.apiKey, undefined);
    assert.deepEqual([...file.operations.keys()], ['chat.generate']);
    const chat = file.operations.get('chat.generate')!;
    assert.equal(chat.provider, 'ollama');
    assert.equal(chat.model, 'llama3.2');
    assert.ok(chat.price && Object.keys(chat.price).length > 0);
  });

  test('examples/providers.replicate.json parses (with REPLICATE_API_TOKEN set) into queued operations with input templates', () => {
    const file = load('providers.replicate.json', { REPLICATE_API_TOKEN: 'r8_example_0123456789' });
    const replicate = file.providers.get('replicate')!;
    assert.equal(replicate.type, 'replicate');
    assert.equal(replicate.apiKeyEnv, 'REPLICATE_API_TOKEN');
    assert.deepEqual([...file.operations.keys()].sort(), ['background.remove', 'image.generate', 'music.generate']);
    const image = file.operations.get('image.generate')!;
    assert.equal(image.model, 'black-forest-labs/flux-schnell');
    assert.equal((image.input as Record<string, unknown>).prompt, '{{prompt}}');
    assert.equal((image.input as Record<string, unknown>).num_outputs, '{{count}}');
    assert.equal((file.operations.get('background.remove')!.input as Record<string, unknown>).image, '{{mediaId}}');
    for (const route of file.operations.values()) assert.equal(route.provider, 'replicate');
    assert.throws(() => loadConfig({ PROVIDERS_FILE: example('providers.replicate.json') }), /REPLICATE_API_TOKEN \(apiKeyEnv\) is not set/);
  });

  test('examples/providers.all.json parses (with both keys set) into real routes for every operation, nothing simulated; link.preview is built in; three-d.rig runs on the rigger', () => {
    const file = load('providers.all.json', { OPENAI_API_KEY: 'sk-example-0123456789', REPLICATE_API_TOKEN: 'r8_example_0123456789' });
    assert.equal(file.simulated, 'off');
    const mapped = [...file.operations.keys()].sort();
    const expected = OPERATIONS.map((op) => op.id).filter((id) => id !== 'link.preview').sort();
    assert.deepEqual(mapped, expected);
    for (const route of file.operations.values()) assert.notEqual(route.provider, 'simulated', `${route.operationId} is real`);
    assert.equal(file.operations.get('sprite.generate')!.frames, 'openai', 'sprite frames are drawn by the image provider, not simulated');
    assert.equal(file.operations.get('three-d.rig')!.engine, 'rigger');
    // Models that take one image or recording get the first reference, not a list.
    assert.equal((file.operations.get('headshot.generate')!.input as Record<string, unknown>).input_image, '{{referenceMediaIds.0}}');
    assert.equal((file.operations.get('voice.clone')!.input as Record<string, unknown>).voice_file, '{{referenceMediaIds.0}}');
    assert.throws(() => loadConfig({ PROVIDERS_FILE: example('providers.all.json'), OPENAI_API_KEY: 'sk-example-0123456789' }), /REPLICATE_API_TOKEN \(apiKeyEnv\) is not set/);
  });

  test('examples/providers.local.json parses into four local engines, one operation each, and nothing else offered (nothing simulated for live keys)', () => {
    const file = load('providers.local.json');
    assert.equal(file.simulated, 'off');
    assert.deepEqual(
      Object.fromEntries([...file.operations.values()].map((r) => [r.operationId, r.engine])),
      { 'video.edit': 'ffmpeg', 'speech.generate': 'espeak-ng', 'security.scan': 'scanner', 'three-d.rig': 'rigger' },
    );
    assert.equal(file.operations.get('video.edit')!.maxOutputSeconds, 300);
    // Sprite frames drawn on the simulated provider are simulated work: refused for live keys.
    const sprites = { providers: { local: { type: 'local' } }, operations: { 'sprite.generate': { provider: 'local', engine: 'sprites', frames: 'simulated', price: { perRunMillicents: 500, perFrameMillicents: 100 } } } };
    assertListed(problemsOf(sprites), /^PROVIDERS_FILE operations\.sprite\.generate: frames "simulated" would draw live keys' sprite frames on the simulated provider/);
    assert.equal(accepted(sprites, { SIMULATE_LIVE: 'true' }).operations.get('sprite.generate')!.frames, 'simulated');
  });

  test('every price of the local example counts in its route’s maximum: video.edit per output second is bounded by maxOutputSeconds, or by a trim', async () => {
    const file = load('providers.local.json');
    const egress = createEgress({ allowCidrs: [] });
    const registry = new ProviderRegistry(file, egress, pino({ level: 'silent' }), {});
    try {
      const id = '00000000-0000-4000-8000-000000000000';
      assert.equal(registry.route('video.edit', 'live')!.price({ mediaId: id, edits: [{ type: 'mute' }] }).maximumMillicents, 100 * 300);
      assert.equal(registry.route('video.edit', 'live')!.price({ mediaId: id, edits: [{ type: 'trim', startSeconds: 1, endSeconds: 11 }] }).maximumMillicents, 100 * 10);
      assert.equal(registry.route('speech.generate', 'live')!.price({ text: 'x'.repeat(2500) }).maximumMillicents, Math.ceil((500 * 2500) / 1000));
      assert.equal(registry.route('security.scan', 'live')!.price({ url: 'https://a.example/' }).maximumMillicents, 15000);
      assert.equal(registry.offers('image.generate', 'live'), false, 'simulated is off: unmapped operations are not offered');
    } finally {
      await registry.close();
      await egress.close();
    }
  });
});

describe('the built server and the providers file (node dist/main.js serve)', { skip: needsDist() }, () => {
  test('a broken providers file stops start-up with exit code 78 and every problem on stderr', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'was-providers-proc-'));
    try {
      const env = {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        PORT: '0',
        DATA_DIR: dataDir,
        PROVIDERS_FILE: providersFile({
          simulated: 'maybe',
          providers: { openai: { ...OPENAI, apiKeyEnv: 'UNSET_PROCESS_TEST_KEY' }, lan: { type: 'openai', baseUrl: 'http://10.0.0.5/v1' } },
          operations: { 'video.generate': { provider: 'nowhere' }, 'chat.generate': { provider: 'simulated', price: { perImageMillicents: 1 } } },
        }),
      };
      // What the process must print: the same problems loadConfig lists for this environment.
      let expected: string[] = [];
      try {
        loadConfig(env);
      } catch (err) {
        expected = (err as ConfigError).problems;
      }
      assert.ok(expected.length >= 5, JSON.stringify(expected));
      const child = spawn(process.execPath, [DIST_MAIN, 'serve'], { cwd: resolve('.'), env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      const stdout: Record<string, unknown>[] = [];
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      onLogLines(child.stdout, (line) => stdout.push(line));
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const code = await new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
      clearTimeout(timer);
      assert.equal(code, 78, `stderr: ${stderr}; stdout: ${JSON.stringify(stdout)}`);
      for (const problem of expected) assert.ok(stderr.includes(problem), `stderr lists "${problem}"; stderr: ${stderr}`);
      assert.match(stderr, /simulated: must be "off" or "fallback"/);
      assert.match(stderr, /UNSET_PROCESS_TEST_KEY \(apiKeyEnv\) is not set/);
      assert.match(stderr, /10\.0\.0\.5 is a private or loopback address/);
      assert.match(stderr, /provider "nowhere" is not declared/);
      assert.match(stderr, /price\.perImageMillicents does not apply to chat\.generate/);
      assert.ok(!stdout.some((l) => l.msg === 'service started'), 'the server never started');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('without PROVIDERS_FILE, with SIMULATE_LIVE=true, the start-up log has exactly one warning line: every paid operation is simulated for live keys', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'was-providers-proc-'));
    const server = await startServer({ DATA_DIR: dataDir, SIMULATE_LIVE: 'true' });
    try {
      await waitUntil(async () => server.lines.filter((l) => l.level === 40), (w) => w.length > 0, 'the start-up warning', 20_000);
      await server.stop();
      const warnings = server.lines.filter((l) => l.level === 40);
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.match(String(warnings[0]!.msg), /SIMULATE_LIVE=true and no PROVIDERS_FILE: live keys run every paid operation except link\.preview on the simulated provider .*never production/);
      assert.ok(!server.lines.some((l) => l.msg === 'providers'), 'no operation map when everything is simulated');
    } finally {
      await server.crash();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('without PROVIDERS_FILE or SIMULATE_LIVE the start-up log names what live keys run: link.preview and the installed local engines, no warning', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'was-providers-proc-'));
    const server = await startServer({ DATA_DIR: dataDir, SIMULATE_LIVE: 'false' });
    try {
      const line = (await waitUntil(async () => server.lines.find((l) => l.msg === 'providers'), (l) => l !== undefined, 'the providers log line', 20_000))!;
      await server.stop();
      const live = line.live as string[];
      assert.ok(live.includes('link.preview') && live.includes('security.scan') && live.includes('three-d.rig'), JSON.stringify(line));
      assert.ok(!live.includes('chat.generate') && !live.includes('image.generate'), 'nothing simulated for live keys');
      assert.deepEqual(live.filter((op) => !['link.preview', 'security.scan', 'speech.generate', 'three-d.rig', 'video.edit'].includes(op)), []);
      assert.equal((line.operations as Record<string, string>)['chat.generate'], 'not offered');
      assert.ok(!server.lines.some((l) => l.level === 40), 'no warning');
    } finally {
      await server.crash();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('with a valid providers file the start-up log names each operation’s provider instead of the warning', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'was-providers-proc-'));
    const server = await startServer({ DATA_DIR: dataDir, SIMULATE_LIVE: 'false', PROVIDERS_FILE: fileURLToPath(new URL('../../examples/providers.ollama.json', import.meta.url)) });
    try {
      const line = (await waitUntil(async () => server.lines.find((l) => l.msg === 'providers'), (l) => l !== undefined, 'the providers log line', 20_000))!;
      await server.stop();
      const operations = line.operations as Record<string, string>;
      assert.equal(line.level, 30);
      assert.equal(line.simulated, 'off');
      assert.equal(operations['chat.generate'], 'ollama (llama3.2)');
      assert.equal(operations['link.preview'], 'link-preview');
      assert.equal(operations['image.generate'], 'not offered');
      assert.ok(!server.lines.some((l) => l.level === 40 && /simulated/.test(String(l.msg))), 'no "everything simulated" warning');
    } finally {
      await server.crash();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
