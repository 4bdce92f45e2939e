/**
 * The console's "Test mode" switch in a real browser (issue 34): the system Chromium through
 * playwright-core against the app on a real socket, with SIMULATE_LIVE off (testKeySuite). The
 * switch is a labelled checkbox with the switch role in the shell of every workspace page; turned
 * on, the address says `?mode=test` (a reload and the navigation links keep it), a banner and the
 * bar's colour mark every page, the Run page lists the workspace's test keys only and says runs
 * are simulated and free of live money; chat.generate run with the test key makes a test job
 * (stored in the workspace's test twin, `livemode: false` on the public API) that the Jobs page
 * lists in test mode and not in live mode, the Usage page in test mode shows the test ledger with
 * its charge, and the live balance and ledger stay exactly as they were. axe-core finds no serious or critical violation with the switch on; screenshots go to
 * test-artifacts/console/.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testScopeOf } from '../../src/lib/livemode.js';
import { describeEachDatabase, testKeySuite } from '../support/harness.js';
import { seedKey, seedTenant } from '../support/seed.js';
import { consoleSite, useConsoleBrowser } from '../support/console-browser.js';

const site = await consoleSite();
const { skip, base } = site;

describeEachDatabase(
  'console test mode in Chromium',
  (get) => {
    const ui = useConsoleBrowser(get, site);
    const { publicApi } = ui;

    test('switch test mode on, run chat.generate with a test key, see the test job in Jobs; the live balance is unchanged', { skip }, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 2_000_000 });
      const testKey = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test' });
      const liveBalance = await publicApi('GET', '/v1/balance?limit=100', t.secret, t.workspace.id);
      const liveLedger = await publicApi('GET', '/v1/transactions?limit=100', t.secret, t.workspace.id);
      const testBefore = await publicApi('GET', '/v1/balance', testKey.secret, t.workspace.id);
      assert.equal(liveBalance.status, 200);
      assert.equal(testBefore.json.data.livemode, false);

      const page = await ui.signIn(t.user.id);
      const toggle = page.getByRole('switch', { name: 'Test mode' });
      assert.equal(await toggle.isChecked(), false, 'live is the default');
      assert.equal(await page.locator('.test-banner').count(), 0);

      // Live mode: the Run page offers the live key only.
      await page.getByRole('link', { name: 'Run', exact: true }).click();
      await page.getByRole('heading', { name: 'Run', exact: true }).waitFor();
      const keyChoice = page.getByRole('combobox', { name: /^Run with/ });
      await keyChoice.waitFor();
      const optionTexts = async () => (await keyChoice.locator('option').allTextContents()).map((s) => s.trim());
      assert.deepEqual((await optionTexts()).map((s) => s.split('…')[0]), [t.key.prefix]);

      // On: the address, the banner, the bar, and the test key only.
      await toggle.check();
      await page.waitForURL((url) => url.searchParams.get('mode') === 'test' && url.pathname === '/console/run');
      await page.getByRole('region', { name: 'Test mode' }).waitFor();
      assert.match((await page.locator('.test-banner').textContent()) ?? '', /no live credits are spent/);
      assert.equal(await page.locator('header.bar.test').count(), 1);
      await page.getByText('runs use the workspace\'s test keys, are simulated').waitFor();
      await page.getByRole('combobox', { name: 'Run with test key' }).waitFor();
      assert.deepEqual((await optionTexts()).map((s) => s.split('…')[0]), [testKey.key.prefix]);
      assert.match(testKey.key.prefix, /^wask_test_/);

      // A reload keeps test mode; so do the navigation links.
      await page.reload();
      await page.getByRole('heading', { name: 'Run', exact: true }).waitFor();
      assert.equal(await page.getByRole('switch', { name: 'Test mode' }).isChecked(), true, 'a reload keeps test mode');
      assert.equal(await page.getByRole('link', { name: 'Jobs', exact: true }).getAttribute('href'), '/console/jobs?mode=test');

      // chat.generate with the test key: estimate, run, the result.
      const operation = page.getByRole('combobox', { name: 'Operation', exact: true });
      await operation.waitFor();
      await operation.selectOption('chat.generate');
      await page.getByRole('textbox', { name: /^messages/ }).fill('[{"role": "user", "content": "Say hello"}]');
      await page.getByRole('button', { name: 'Estimate cost' }).click();
      await page.getByText('simulated work, paid from the test balance').waitFor();
      await ui.assertAccessible(page, 'the run page in test mode with an estimate');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await page.locator('section.job[data-status="completed"]').waitFor();
      await page.getByRole('heading', { name: /Test job/ }).waitFor();
      await page.getByRole('rowheader', { name: 'message.content' }).waitFor();
      const jobId = await page.locator('section.job').getAttribute('data-job-id');
      assert.ok(jobId);
      await ui.screenshot(page, 'test-mode-run');

      // The job is a test job: stored in the test twin, livemode false on the public API, web origin.
      const row = await ctx.deps.db.selectFrom('jobs').select(['workspace_id', 'execution_origin', 'key_id']).where('id', '=', jobId).executeTakeFirstOrThrow();
      assert.deepEqual(row, { workspace_id: testScopeOf(t.workspace.id), execution_origin: 'web', key_id: testKey.key.id });
      const viaApi = await publicApi('GET', `/v1/jobs/${jobId}`, testKey.secret, t.workspace.id);
      assert.deepEqual({ livemode: viaApi.json.data.livemode, status: viaApi.json.data.status }, { livemode: false, status: 'completed' });
      assert.equal((await publicApi('GET', `/v1/jobs/${jobId}`, t.secret, t.workspace.id)).status, 404, 'the live key does not see it');

      // Jobs in test mode lists it; the job opens there.
      await page.getByRole('link', { name: 'Jobs', exact: true }).click();
      await page.getByRole('heading', { name: 'Jobs', exact: true }).waitFor();
      assert.equal(new URL(page.url()).searchParams.get('mode'), 'test');
      const jobRow = page.locator(`tr[data-job-id="${jobId}"]`);
      await jobRow.waitFor();
      assert.equal(await jobRow.getAttribute('data-livemode'), 'false');
      await page.getByRole('table').getByText('Test jobs, newest first').waitFor();
      await jobRow.getByRole('button', { name: /^Open job/ }).click();
      await page.locator(`section.job[data-job-id="${jobId}"][data-status="completed"]`).waitFor();
      await page.getByRole('heading', { name: 'Result' }).waitFor();
      await ui.assertAccessible(page, 'the jobs page in test mode with a test job open');
      await ui.screenshot(page, 'test-mode-jobs');

      // Usage in test mode: the test balance and ledger, with the run's charge (the test key's view).
      await page.getByRole('link', { name: 'Usage', exact: true }).click();
      await page.getByRole('heading', { name: 'Usage', exact: true, level: 1 }).waitFor();
      const testLedger = (await publicApi('GET', '/v1/transactions?limit=25', testKey.secret, t.workspace.id)).json.data.items as { id: string; type: string; jobId: string | null }[];
      const charge = testLedger.find((e) => e.jobId === jobId && e.type === 'usage');
      assert.ok(charge, 'the test ledger holds the run’s charge');
      await page.locator(`tr[data-entry-id="${charge.id}"]`).waitFor();
      assert.deepEqual(await page.locator('tr[data-entry-id]').evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { entryId: string } }).dataset.entryId)), testLedger.map((e) => e.id), 'the test ledger, as the API shows it to the test key');
      await ui.assertAccessible(page, 'the usage page in test mode');
      await page.getByRole('link', { name: 'Jobs', exact: true }).click();
      await page.getByRole('heading', { name: 'Jobs', exact: true }).waitFor();

      // Off: live jobs only (none), and the banner is gone.
      await page.getByRole('switch', { name: 'Test mode' }).uncheck();
      await page.waitForURL((url) => url.pathname === '/console/jobs' && !url.searchParams.has('mode') && !url.searchParams.has('job'));
      await page.getByText('No jobs yet.').waitFor();
      assert.equal(await page.locator('.test-banner').count(), 0);
      assert.equal(await page.locator(`tr[data-job-id="${jobId}"]`).count(), 0);

      // Money: the live balance and ledger exactly as before; the test balance paid for the run.
      assert.deepEqual((await publicApi('GET', '/v1/balance?limit=100', t.secret, t.workspace.id)).json.data, liveBalance.json.data);
      assert.deepEqual((await publicApi('GET', '/v1/transactions?limit=100', t.secret, t.workspace.id)).json.data, liveLedger.json.data);
      const testAfter = await publicApi('GET', '/v1/balance', testKey.secret, t.workspace.id);
      assert.equal(testAfter.json.data.totalMillicents, testBefore.json.data.totalMillicents - viaApi.json.data.costMillicents);
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });

    test('the switch on every workspace page, accessible and kept by the links', { skip }, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 1_000 });
      const page = await ui.newPage();
      await ui.openSignInLink(page, await ui.issueLinkUrl(t.user.id));
      await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
      await page.goto(`${base}/console/usage?mode=test`);
      for (const [link, heading] of [['Keys', 'Keys'], ['Run', 'Run'], ['Jobs', 'Jobs'], ['Usage', 'Usage'], ['Media', 'Media'], ['Webhooks', 'Webhooks'], ['Workspaces', 'Workspaces']] as const) {
        await page.getByRole('link', { name: link, exact: true }).click();
        await page.getByRole('heading', { name: heading, exact: true, level: 1 }).waitFor();
        assert.equal(new URL(page.url()).searchParams.get('mode'), 'test', `${link} keeps test mode`);
        assert.equal(await page.getByRole('switch', { name: 'Test mode' }).isChecked(), true);
        await page.getByRole('region', { name: 'Test mode' }).waitFor();
        await ui.assertAccessible(page, `the ${link} page with test mode on`);
      }
      await ui.screenshot(page, 'test-mode-workspaces');
      // Keyboard: the switch is reached and toggled with Space.
      await page.getByRole('switch', { name: 'Test mode' }).focus();
      await page.keyboard.press('Space');
      await page.waitForURL((url) => !url.searchParams.has('mode'));
      assert.equal(await page.locator('.test-banner').count(), 0);
      await page.goBack();
      await page.getByRole('region', { name: 'Test mode' }).waitFor();
      assert.equal(await page.getByRole('switch', { name: 'Test mode' }).isChecked(), true, 'Back returns to test mode');
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });
  },
  testKeySuite({ env: { PUBLIC_BASE_URL: base } }),
);
