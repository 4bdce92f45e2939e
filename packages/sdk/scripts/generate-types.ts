/**
 * Regenerates src/generated/openapi.ts from the service's /openapi.json.
 *
 *   npm run generate -w workspace-automation-sdk            # starts the built server (dist/main.js) on a temporary data directory
 *   npm run generate -w workspace-automation-sdk -- --url http://127.0.0.1:8080
 *   … -- --check                                             # exit 1 when the committed file differs
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generateTypes } from './openapi-types.js';

const SDK = resolve(import.meta.dirname, '..');
const ROOT = resolve(SDK, '../..');
const OUT = join(SDK, 'src/generated/openapi.ts');

async function fromRunningServer(url: string): Promise<Record<string, unknown>> {
  const res = await fetch(new URL('/openapi.json', url));
  if (!res.ok) throw new Error(`GET ${url}/openapi.json: ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

async function fromBuiltServer(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'was-sdk-generate-'));
  const child = spawn(process.execPath, [join(ROOT, 'dist/main.js'), 'serve'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise<number>((res, rej) => {
      let buffer = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        buffer += chunk;
        for (const line of buffer.split('\n')) {
          try {
            const parsed = JSON.parse(line) as { msg?: string; port?: number };
            if (parsed.msg === 'service started' && parsed.port) res(parsed.port);
          } catch {
            /* a partial line */
          }
        }
      });
      child.on('exit', (code) => rej(new Error(`the server exited (${code}) before it started; run \`npm run build\` first`)));
    });
    return await fromRunningServer(`http://127.0.0.1:${port}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
const urlAt = args.indexOf('--url');
const document = urlAt >= 0 ? await fromRunningServer(args[urlAt + 1]!) : await fromBuiltServer();
const text = await generateTypes(document);
if (args.includes('--check')) {
  const current = readFileSync(OUT, 'utf8');
  if (current !== text) {
    process.stderr.write('src/generated/openapi.ts is out of date: run `npm run generate -w workspace-automation-sdk`\n');
    process.exit(1);
  }
  process.stdout.write('src/generated/openapi.ts is up to date\n');
} else {
  writeFileSync(OUT, text);
  process.stdout.write(`wrote ${OUT} (${text.length} characters)\n`);
}
