/**
 * The harness of the console's browser suites (test/console/*-browser.test.ts): the suite's app
 * listening on a port chosen before it is built (PUBLIC_BASE_URL, the console's origin), one
 * headless system Chromium per suite (browser.ts: the flags, a fresh profile), a new browser
 * context per test whose Content-Security-Policy violations and page errors are collected, sign-in
 * through the real sign-in link (issued by the admin API over the socket, opened in the page,
 * "Sign in" pressed), the public API called over the socket as a client would, axe-core's serious
 * and critical violations, and screenshots in test-artifacts/console/ named after the database.
 *
 *     const site = await consoleSite();
 *     describeEachDatabase('…', (get) => {
 *       const ui = useConsoleBrowser(get, site);
 *       test('…', { skip: site.skip }, async () => {
 *         const page = await ui.signIn(userId);
 *         await ui.assertAccessible(page, 'the workspaces page');
 *         await ui.screenshot(page, 'workspaces');
 *         assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
 *         await ui.context.close();
 *       });
 *     }, { env: { PUBLIC_BASE_URL: site.base } });
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { TEST_ADMIN_TOKEN, type TestContext } from './harness.js';
import { browserTestUnavailable, launchChromium, screenshot, seriousViolations, watchPageProblems, type LaunchedBrowser } from './browser.js';
import { freePort } from './free-port.js';

/** What a browser suite decides before it is declared. */
export interface ConsoleSite {
  /** false, or why the suite is skipped (Chromium or the console build missing; CI: throws). */
  skip: string | false;
  port: number;
  /** http://127.0.0.1:PORT: the app's PUBLIC_BASE_URL and the pages' origin. */
  base: string;
}

export async function consoleSite(): Promise<ConsoleSite> {
  const skip = browserTestUnavailable();
  const port = await freePort();
  return { skip, port, base: `http://127.0.0.1:${port}` };
}

export interface ConsoleBrowser {
  /** The suite's Chromium (a second context of a test, for instance). */
  readonly browser: Browser;
  /** The context the last newPage or signIn opened; a test closes it at its end. */
  readonly context: BrowserContext;
  /** The CSP violations and page errors that context reported so far. */
  readonly problems: string[];
  /** A page of a new context (base URL the app's), its problems watched. */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  /** A page of a new context signed in as `userId` through a fresh sign-in link, on the Workspaces page. */
  signIn(userId: string, options?: BrowserContextOptions): Promise<Page>;
  /** Opens a sign-in link in `page` and presses "Sign in" (what follows is the test's to check). */
  openSignInLink(page: Page, url: string): Promise<void>;
  /** A sign-in link through the admin API over the socket, as an operator's script would ask for it. */
  issueLinkUrl(userId: string): Promise<string>;
  /** The public API over the socket with an API key; with a body, a POST with a fresh Idempotency-Key. */
  publicApi(method: 'GET' | 'POST', path: string, secret: string, workspaceId: string, body?: unknown): Promise<{ status: number; json: any }>;
  /** No serious or critical axe-core violation on the page. */
  assertAccessible(page: Page, what: string): Promise<void>;
  /** A full-page screenshot, test-artifacts/console/DATABASE-NAME.png. */
  screenshot(page: Page, name: string): Promise<string>;
}

/**
 * Declares the suite's before and after hooks (the app listens on the site's port, Chromium is
 * launched, and closed at the end; nothing when the suite is skipped) and returns the harness.
 */
export function useConsoleBrowser(get: () => TestContext, site: ConsoleSite): ConsoleBrowser {
  const { base } = site;
  let chromium: LaunchedBrowser | undefined;
  let context: BrowserContext | undefined;
  let problems: string[] = [];

  before(async () => {
    if (site.skip) return;
    await get().app.listen({ port: site.port, host: '127.0.0.1' });
    chromium = await launchChromium();
  });
  after(async () => {
    await chromium?.close();
  });

  const ui: ConsoleBrowser = {
    get browser() {
      assert.ok(chromium, 'Chromium is launched');
      return chromium.browser;
    },
    get context() {
      assert.ok(context, 'a browser context is open');
      return context;
    },
    get problems() {
      return problems;
    },
    async newPage(options = {}) {
      context = await ui.browser.newContext({ baseURL: base, ...options });
      problems = watchPageProblems(context);
      return context.newPage();
    },
    async signIn(userId, options) {
      const page = await ui.newPage(options);
      await ui.openSignInLink(page, await ui.issueLinkUrl(userId));
      await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
      return page;
    },
    async openSignInLink(page, url) {
      await page.goto(url);
      await page.getByRole('button', { name: 'Sign in' }).click();
    },
    async issueLinkUrl(userId) {
      const res = await fetch(`${base}/admin/v1/users/${userId}/sign-in-links`, { method: 'POST', headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      assert.equal(res.status, 200);
      return ((await res.json()) as { data: { url: string } }).data.url;
    },
    async publicApi(method, path, secret, workspaceId, body) {
      const headers: Record<string, string> = { authorization: `Bearer ${secret}`, 'x-service-workspace': workspaceId };
      if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'idempotency-key': randomUUID() });
      const res = await fetch(`${base}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
      return { status: res.status, json: await res.json() };
    },
    async assertAccessible(page, what) {
      assert.deepEqual(await seriousViolations(page), [], `axe on ${what}`);
    },
    screenshot(page, name) {
      return screenshot(page, `${get().dbName}-${name}`);
    },
  };
  return ui;
}
