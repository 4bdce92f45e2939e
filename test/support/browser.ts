/**
 * Browser tests of the console: playwright-core driving the system Chromium (Debian package
 * `chromium`; never a downloaded browser), headless, with the flags these machines need and a
 * fresh profile per launch (Playwright's own temporary one); axe-core for accessibility; screenshots as test artifacts in
 * test-artifacts/console/ (gitignored).
 *
 * Without Chromium a browser test is skipped with a printed reason; with CI=true (set by .ci/run,
 * which installs it) a missing Chromium fails the test instead.
 */
import { accessSync, constants, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const ROOT = resolve(import.meta.dirname, '../..');
export const ARTIFACTS_DIR = join(ROOT, 'test-artifacts', 'console');
export const CONSOLE_BUILD_INDEX = join(ROOT, 'dist', 'console-ui', 'index.html');

const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** CHROMIUM_PATH, or `chromium` on PATH. */
export function findChromium(): string | undefined {
  if (process.env.CHROMIUM_PATH) return executable(process.env.CHROMIUM_PATH) ? process.env.CHROMIUM_PATH : undefined;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'chromium');
    if (dir && executable(candidate)) return candidate;
  }
  return undefined;
}

function skipOrFail(missing: string[], what: string): string | false {
  if (missing.length === 0) return false;
  const reason = `${what} need ${missing.join(' and ')}`;
  if (process.env.CI === 'true') throw new Error(`CI must run these tests: ${reason}`);
  process.stdout.write(`# skipped: ${reason}\n`);
  return reason;
}

function buildMissing(): string[] {
  try {
    accessSync(CONSOLE_BUILD_INDEX);
    return [];
  } catch {
    return ['the console build (npm run build)'];
  }
}

/** `false` when the console build is there; otherwise the skip reason (CI: throws). */
export function consoleBuildMissing(): string | false {
  return skipOrFail(buildMissing(), 'the console page tests');
}

/** `false` when Chromium and the console build are there; otherwise the skip reason (CI: throws). */
export function browserTestUnavailable(): string | false {
  const missing = findChromium() ? [] : ['Chromium (Debian package chromium, or CHROMIUM_PATH)'];
  return skipOrFail([...missing, ...buildMissing()], 'the console browser tests');
}

export interface LaunchedBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/**
 * Chromium, headless. Playwright starts every launch with a new empty profile directory of its
 * own (it refuses a --user-data-dir argument) and removes it on close.
 */
export async function launchChromium(): Promise<LaunchedBrowser> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error('Chromium is not installed');
  const browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_FLAGS });
  return { browser, close: () => browser.close() };
}

/** Writes a full-page screenshot to test-artifacts/console/NAME.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's violations of the page. The script is evaluated through the DevTools protocol, which
 * the page's Content-Security-Policy does not govern, so the policy under test stays as served.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, options: unknown) => Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
}

/** Serious and critical violations, as readable lines (empty when there are none). */
export async function seriousViolations(page: Page): Promise<string[]> {
  return (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

/** Collects the Content-Security-Policy violations and page errors a context reports. */
export function watchPageProblems(context: BrowserContext): string[] {
  const problems: string[] = [];
  context.on('page', (page) => {
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  });
  return problems;
}
