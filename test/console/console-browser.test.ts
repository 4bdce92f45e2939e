/**
 * The console in a real browser (issue 35): the system Chromium through playwright-core against
 * the app listening on a real socket. Signs in with a link, creates a key, calls the public API
 * with it, revokes it and sees the API refuse it; a used or expired link and a forged or expired
 * session are refused; a member gets no "Create key"; axe-core finds no serious or critical
 * violation on the main pages; the Content-Security-Policy reports no violation. Screenshots of
 * the main pages go to test-artifacts/console/. Test mode: a test key made on the Keys page (its
 * "Test" badge) and test credits added on the Usage page, the live balance and ledger untouched.
 *
 * Runs with SIMULATE_LIVE off (testKeySuite, issue 34): it runs no operation with a live key, so
 * a production server answers it the same.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSOLE_CSP } from '../../src/console/static.js';
import { describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';
import { seedOrganization } from '../support/console.js';
import { consoleSite, useConsoleBrowser } from '../support/console-browser.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { testScopeOf } from '../../src/lib/livemode.js';

const site = await consoleSite();
const { skip, base } = site;

describeEachDatabase(
  'console in Chromium',
  (get) => {
    const ui = useConsoleBrowser(get, site);
    const dbName = () => get().dbName;

    test('sign in with a link, create a key, use it, revoke it, sign out', { skip }, async () => {
      const ctx: TestContext = get();
      const t = await seedTenant(ctx.deps);
      const page = await ui.newPage();
      const url = await ui.issueLinkUrl(t.user.id);

      const started = performance.now();
      const opened = await page.goto(url);
      assert.equal(opened?.headers()['content-security-policy'], CONSOLE_CSP);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      const cold = Math.round(performance.now() - started);
      const again = performance.now();
      await page.reload();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      process.stdout.write(`# console: the sign-in page was usable ${cold} ms after the first navigation of a new browser, ${Math.round(performance.now() - again)} ms after a reload [${dbName()}]\n`);
      await ui.screenshot(page, 'sign-in');
      await ui.assertAccessible(page, 'the sign-in page');
      await page.getByRole('button', { name: 'Sign in' }).click();

      await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
      assert.equal(new URL(page.url()).hash, '', 'the token left the address bar');
      for (const name of ['Workspaces', 'Keys', 'Run', 'Jobs', 'Usage', 'Media', 'Webhooks']) await page.getByRole('link', { name, exact: true }).waitFor();
      await page.getByRole('rowheader', { name: t.workspace.name }).waitFor();
      await ui.screenshot(page, 'workspaces');
      await ui.assertAccessible(page, 'the workspaces page');

      await page.getByRole('link', { name: 'Keys', exact: true }).click();
      await page.getByRole('heading', { name: 'Keys' }).waitFor();
      await page.getByRole('checkbox', { name: 'link.preview' }).check();
      await page.getByRole('button', { name: 'Create key' }).click();
      const secretBox = page.getByRole('textbox', { name: 'Secret' });
      await secretBox.waitFor();
      const secret = await secretBox.inputValue();
      assert.match(secret, /^wask_/);
      await page.getByRole('button', { name: 'Copy secret' }).waitFor();
      await ui.screenshot(page, 'keys-created');
      await ui.assertAccessible(page, 'the keys page with a new secret');

      assert.equal((await ui.publicApi('GET', '/v1/workspaces', secret, t.workspace.id)).status, 200, 'GET /v1/workspaces with the new key');

      const prefix = secret.slice(0, 12);
      await page.getByRole('button', { name: `Revoke key ${prefix}` }).click();
      await page.getByRole('row').filter({ hasText: prefix }).getByText(/^revoked/).waitFor();
      await assert.rejects(secretBox.waitFor({ timeout: 200 }), 'the secret is gone once its key is revoked');
      assert.equal((await ui.publicApi('GET', '/v1/workspaces', secret, t.workspace.id)).status, 401, 'the revoked key is refused');
      await ui.screenshot(page, 'keys-revoked');

      await page.getByRole('link', { name: 'Jobs', exact: true }).click();
      await page.getByRole('heading', { name: 'Jobs' }).waitFor();
      await ui.assertAccessible(page, 'a page not built yet');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Not signed in' }).waitFor();
      await page.reload();
      await page.getByText('UNAUTHENTICATED').waitFor();
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });

    test('test mode: a test key created on the Keys page, test credits added on the Usage page, live money untouched', { skip }, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 30_000 });
      const shown = (mc: number) => `$${(mc / 100_000).toFixed(2)} (${mc.toLocaleString('en-US')} millicents)`;
      const liveMoney = async () => ({
        balance: (await ui.publicApi('GET', '/v1/balance?limit=100', t.secret, t.workspace.id)).json,
        ledger: (await ui.publicApi('GET', '/v1/transactions?limit=100', t.secret, t.workspace.id)).json,
      });
      const liveBefore = await liveMoney();
      assert.equal(liveBefore.balance.data.totalMillicents, 30_000);

      const page = await ui.signIn(t.user.id);
      await page.getByRole('link', { name: 'Keys', exact: true }).click();
      await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
      const live = page.getByRole('radio', { name: /^Live/ });
      assert.equal(await live.isChecked(), true, 'live is the default mode');
      await page.getByRole('radio', { name: /^Test/ }).check();
      await page.getByRole('button', { name: 'Create key' }).click();
      const secret = await page.getByRole('textbox', { name: 'Secret' }).inputValue();
      assert.match(secret, /^wask_test_[A-Za-z0-9_-]{43}$/);
      const prefix = secret.slice(0, 'wask_test_'.length + 7);
      await page.getByRole('heading', { name: `New test key ${prefix}…` }).waitFor();
      await page.getByRole('row').filter({ hasText: prefix }).getByText('Test', { exact: true }).waitFor();
      await page.getByRole('row').filter({ hasText: t.key.prefix }).getByText('Live', { exact: true }).waitFor();
      assert.equal(await live.isChecked(), true, 'the form is back to live');
      await ui.screenshot(page, 'keys-test-key');
      await ui.assertAccessible(page, 'the keys page with a new test key');

      // The test key reads the test balance, the first test grant; the live key the live credits.
      const first = ctx.config.testCreditsMillicents;
      const testBalance = (await ui.publicApi('GET', '/v1/balance', secret, t.workspace.id)).json.data;
      assert.deepEqual({ total: testBalance.totalMillicents, livemode: testBalance.livemode }, { total: first, livemode: false });

      await page.getByRole('link', { name: 'Usage', exact: true }).click();
      await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
      const testFigures = page.getByTestId('test-balance');
      await testFigures.locator('[data-figure="total"]').getByText(shown(first)).waitFor();
      await page.getByTestId('balance').locator('[data-figure="total"]').getByText(shown(30_000)).waitFor();
      const amount = page.getByRole('spinbutton', { name: /^Test credits to add, in dollars/ });
      await amount.fill('1000.01');
      assert.equal(await amount.evaluate((el: any) => el.checkValidity() as boolean), false, 'more than the bound is refused by the form');
      await amount.fill('12.5');
      await page.getByRole('button', { name: 'Add test credits' }).click();
      await page.getByRole('status').getByText(`Added ${shown(1_250_000)} of test credits.`).waitFor();
      await testFigures.locator('[data-figure="total"]').getByText(shown(first + 1_250_000)).waitFor();
      await page.getByTestId('balance').locator('[data-figure="total"]').getByText(shown(30_000)).waitFor();
      await ui.screenshot(page, 'usage-test-credits');
      await ui.assertAccessible(page, 'the usage page with the test balance');

      const testAfter = (await ui.publicApi('GET', '/v1/balance?limit=100', secret, t.workspace.id)).json.data;
      assert.equal(testAfter.totalMillicents, first + 1_250_000);
      assert.ok(testAfter.allocations.some((a: { provenance: string; remainingMillicents: number }) => a.provenance === 'owner_test_grant' && a.remainingMillicents === 1_250_000));
      assert.deepEqual(await liveMoney(), liveBefore, 'the live balance and ledger are untouched');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
      await assertLedgerInvariants(ctx.deps, testScopeOf(t.workspace.id));
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });

    test('a used or expired link is refused with the API code; the page shows it', { skip }, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const page = await ui.newPage();
      const url = await ui.issueLinkUrl(t.user.id);
      await ui.openSignInLink(page, url);
      await page.getByRole('heading', { name: 'Workspaces' }).waitFor();

      const second = await ui.browser.newContext({ baseURL: base });
      const other = await second.newPage();
      await ui.openSignInLink(other, url);
      await other.getByRole('alert').getByText('UNAUTHENTICATED').waitFor();
      await ui.screenshot(other, 'link-used');
      await ui.assertAccessible(other, 'a refused sign-in');

      const late = await ui.issueLinkUrl(t.user.id);
      ctx.clock.advance(15 * 60_000);
      await ui.openSignInLink(other, late);
      await other.getByRole('alert').getByText(/expired/).waitFor();
      assert.equal((await second.cookies()).length, 0, 'no session cookie');
      await second.close();
      await ui.context.close();
    });

    test('a forged or expired session is refused', { skip }, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const page = await ui.newPage();
      await ui.context.addCookies([{ name: 'was_console', value: 'F'.repeat(43), url: base }]);
      await page.goto('/console/keys');
      await page.getByRole('heading', { name: 'Not signed in' }).waitFor();

      await ui.openSignInLink(page, await ui.issueLinkUrl(t.user.id));
      await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
      const [cookie] = await ui.context.cookies();
      assert.equal(cookie?.httpOnly, true);
      assert.equal(cookie?.sameSite, 'Lax');
      ctx.clock.advance(61 * 60_000);
      await page.reload();
      await page.getByRole('heading', { name: 'Not signed in' }).waitFor();
      await ui.screenshot(page, 'session-expired');
      await ui.context.close();
    });

    test('a member sees the workspace but no "Create key"', { skip }, async () => {
      const ctx = get();
      const { member } = await seedOrganization(ctx, { admin: false });
      const page = await ui.newPage();
      await ui.openSignInLink(page, await ui.issueLinkUrl(member.id));
      await page.getByRole('rowheader', { name: 'Acme prod' }).waitFor();
      await page.getByRole('link', { name: 'Keys', exact: true }).click();
      await page.getByText('only owners and admins of a workspace create and revoke its keys').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0);
      await ui.screenshot(page, 'member-keys');
      await ui.assertAccessible(page, "a member's keys page");
      await ui.context.close();
    });
  },
  testKeySuite({ env: { PUBLIC_BASE_URL: base } }),
);
