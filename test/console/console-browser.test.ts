/**
 * The console in a real browser (issue 35): the system Chromium through playwright-core against
 * the app listening on a real socket. Signs in with a link, creates a key, calls the public API
 * with it, revokes it and sees the API refuse it; a used or expired link and a forged or expired
 * session are refused; a member gets no "Create key"; axe-core finds no serious or critical
 * violation on the main pages; the Content-Security-Policy reports no violation. Screenshots of
 * the main pages go to test-artifacts/console/.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import * as accounts from '../../src/modules/accounts/service.js';
import { CONSOLE_CSP } from '../../src/console/static.js';
import { describeEachDatabase, TEST_ADMIN_TOKEN, type TestContext } from '../support/harness.js';
import { seedTenant, uniqueEmail } from '../support/seed.js';
import { browserTestUnavailable, freePort, launchChromium, screenshot, seriousViolations, watchPageProblems, type LaunchedBrowser } from '../support/browser.js';

const skip = browserTestUnavailable();
const port = await freePort();
const base = `http://127.0.0.1:${port}`;

/** A sign-in link through the admin API over the socket, as an operator's script would. */
async function issueLinkUrl(userId: string): Promise<string> {
  const res = await fetch(`${base}/admin/v1/users/${userId}/sign-in-links`, { method: 'POST', headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { data: { url: string } }).data.url;
}

async function publicStatus(secret: string, workspaceId: string): Promise<number> {
  return (await fetch(`${base}/v1/workspaces`, { headers: { authorization: `Bearer ${secret}`, 'x-service-workspace': workspaceId } })).status;
}

async function signInThroughPage(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function assertAccessible(page: Page, what: string): Promise<void> {
  assert.deepEqual(await seriousViolations(page), [], `axe on ${what}`);
}

describeEachDatabase(
  'console in Chromium',
  (get) => {
    let chromium: LaunchedBrowser | undefined;
    let context: BrowserContext;
    let problems: string[];
    const dbName = () => get().dbName;

    before(async () => {
      if (skip) return;
      await get().app.listen({ port, host: '127.0.0.1' });
      chromium = await launchChromium();
    });
    after(async () => {
      await chromium?.close();
    });

    async function freshContext(): Promise<Page> {
      context = await chromium!.browser.newContext({ baseURL: base });
      problems = watchPageProblems(context);
      return context.newPage();
    }

    test('sign in with a link, create a key, use it, revoke it, sign out', { skip }, async () => {
      const ctx: TestContext = get();
      const t = await seedTenant(ctx.deps);
      const page = await freshContext();
      const url = await issueLinkUrl(t.user.id);

      const started = performance.now();
      const opened = await page.goto(url);
      assert.equal(opened?.headers()['content-security-policy'], CONSOLE_CSP);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      const cold = Math.round(performance.now() - started);
      const again = performance.now();
      await page.reload();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      process.stdout.write(`# console: the sign-in page was usable ${cold} ms after the first navigation of a new browser, ${Math.round(performance.now() - again)} ms after a reload [${dbName()}]\n`);
      await screenshot(page, `${dbName()}-sign-in`);
      await assertAccessible(page, 'the sign-in page');
      await page.getByRole('button', { name: 'Sign in' }).click();

      await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
      assert.equal(new URL(page.url()).hash, '', 'the token left the address bar');
      for (const name of ['Workspaces', 'Keys', 'Run', 'Jobs', 'Usage', 'Media', 'Webhooks']) await page.getByRole('link', { name, exact: true }).waitFor();
      await page.getByRole('rowheader', { name: t.workspace.name }).waitFor();
      await screenshot(page, `${dbName()}-workspaces`);
      await assertAccessible(page, 'the workspaces page');

      await page.getByRole('link', { name: 'Keys', exact: true }).click();
      await page.getByRole('heading', { name: 'Keys' }).waitFor();
      await page.getByRole('checkbox', { name: 'link.preview' }).check();
      await page.getByRole('button', { name: 'Create key' }).click();
      const secretBox = page.getByRole('textbox', { name: 'Secret' });
      await secretBox.waitFor();
      const secret = await secretBox.inputValue();
      assert.match(secret, /^wask_/);
      await page.getByRole('button', { name: 'Copy secret' }).waitFor();
      await screenshot(page, `${dbName()}-keys-created`);
      await assertAccessible(page, 'the keys page with a new secret');

      assert.equal(await publicStatus(secret, t.workspace.id), 200, 'GET /v1/workspaces with the new key');

      const prefix = secret.slice(0, 12);
      await page.getByRole('button', { name: `Revoke key ${prefix}` }).click();
      await page.getByRole('row').filter({ hasText: prefix }).getByText(/^revoked/).waitFor();
      await assert.rejects(secretBox.waitFor({ timeout: 200 }), 'the secret is gone once its key is revoked');
      assert.equal(await publicStatus(secret, t.workspace.id), 401, 'the revoked key is refused');
      await screenshot(page, `${dbName()}-keys-revoked`);

      await page.getByRole('link', { name: 'Jobs', exact: true }).click();
      await page.getByRole('heading', { name: 'Jobs' }).waitFor();
      await assertAccessible(page, 'a page not built yet');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Not signed in' }).waitFor();
      await page.reload();
      await page.getByText('UNAUTHENTICATED').waitFor();
      assert.deepEqual(problems, [], 'no CSP violation or page error');
      await context.close();
    });

    test('a used or expired link is refused with the API code; the page shows it', { skip }, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const page = await freshContext();
      const url = await issueLinkUrl(t.user.id);
      await signInThroughPage(page, url);
      await page.getByRole('heading', { name: 'Workspaces' }).waitFor();

      const second = await chromium!.browser.newContext({ baseURL: base });
      const other = await second.newPage();
      await signInThroughPage(other, url);
      await other.getByRole('alert').getByText('UNAUTHENTICATED').waitFor();
      await screenshot(other, `${dbName()}-link-used`);
      await assertAccessible(other, 'a refused sign-in');

      const late = await issueLinkUrl(t.user.id);
      ctx.clock.advance(15 * 60_000);
      await signInThroughPage(other, late);
      await other.getByRole('alert').getByText(/expired/).waitFor();
      assert.equal((await second.cookies()).length, 0, 'no session cookie');
      await second.close();
      await context.close();
    });

    test('a forged or expired session is refused', { skip }, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const page = await freshContext();
      await context.addCookies([{ name: 'was_console', value: 'F'.repeat(43), url: base }]);
      await page.goto('/console/keys');
      await page.getByRole('heading', { name: 'Not signed in' }).waitFor();

      await signInThroughPage(page, await issueLinkUrl(t.user.id));
      await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
      const [cookie] = await context.cookies();
      assert.equal(cookie?.httpOnly, true);
      assert.equal(cookie?.sameSite, 'Lax');
      ctx.clock.advance(61 * 60_000);
      await page.reload();
      await page.getByRole('heading', { name: 'Not signed in' }).waitFor();
      await screenshot(page, `${dbName()}-session-expired`);
      await context.close();
    });

    test('a member sees the workspace but no "Create key"', { skip }, async () => {
      const ctx = get();
      const owner = await accounts.createUser(ctx.deps, { email: uniqueEmail(), name: 'Owner' });
      const member = await accounts.createUser(ctx.deps, { email: uniqueEmail(), name: 'Member' });
      const org = await accounts.createOrganization(ctx.deps, { name: 'Acme', ownerUserId: owner.id });
      await accounts.setMember(ctx.deps, org.id, { userId: member.id, role: 'member' });
      await accounts.createWorkspace(ctx.deps, { name: 'Acme prod', plan: 'pro', organizationId: org.id });
      const page = await freshContext();
      await signInThroughPage(page, await issueLinkUrl(member.id));
      await page.getByRole('rowheader', { name: 'Acme prod' }).waitFor();
      await page.getByRole('link', { name: 'Keys', exact: true }).click();
      await page.getByText('only owners and admins of a workspace create and revoke its keys').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0);
      await screenshot(page, `${dbName()}-member-keys`);
      await assertAccessible(page, "a member's keys page");
      await context.close();
    });
  },
  { env: { PUBLIC_BASE_URL: base } },
);
