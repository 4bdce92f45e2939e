/**
 * The console's Usage page in Chromium (issue 35, item 6): playwright-core with the system
 * Chromium against the app on a real socket, signed in through a sign-in link.
 * After a few runs (synchronous chats on two UTC days, a queued music job) the page shows the
 * balance the public API reports, the allocations with their expiry, the ledger rows (keyId and
 * operationId), the charts with one bar per bucket (60 minutes, the days of the service's month)
 * whose figures are the public API's, each budget against its ceiling, and the alerts; a member
 * sees it without the keys' budgets. No CSP violation (the charts are SVG with attributes and
 * classes, no inline style); axe-core finds no serious or critical violation; screenshots go to
 * test-artifacts/console/.
 *
 * Live-only (issue 34): this suite runs live keys on the paid providers' fakes (`{ live: { unitPrices: true } }`,
 * support/live-backend.ts; SIMULATE_LIVE off), because the page it checks shows the live
 * workspace's alerts (credits.low, allocation.expiring), which only live spending raises. The Usage page in test
 * mode (the test ledger of a test key's run) is covered by console-test-mode-browser.test.ts,
 * and the usage endpoints in test mode by console-usage.test.ts and console-usage-fuzz.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import * as accounts from '../../src/modules/accounts/service.js';
import { raiseExpiryNotices } from '../../src/modules/alerts/service.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { call, describeEachDatabase, TEST_ADMIN_TOKEN, type TestContext } from '../support/harness.js';
import { assertOk } from '../support/assertions.js';
import { drain, run } from '../support/jobs.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { seedOrganization } from '../support/console.js';
import { consoleSite, useConsoleBrowser } from '../support/console-browser.js';
import { chatCosting, musicCosting } from '../support/sim-inputs.js';

const site = await consoleSite();
const { skip, base } = site;

const DAY = 86_400_000;
const millicents = (n: number) => `${n.toLocaleString('en-US')} millicents`;

const pub = async (ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, url: string) => assertOk(await call(ctx, 'GET', url, { secret: t.secret, workspaceId: t.workspace.id })).data;

describeEachDatabase(
  'console usage page in Chromium',
  (get) => {
    const ui = useConsoleBrowser(get, site);

    /** The bars of a chart, each with its total (data-total) and its number of coloured segments. */
    async function bars(page: Page, chart: string): Promise<{ total: number; segments: number }[]> {
      const groups = page.locator(`[data-chart="${chart}"] > svg g.bar`);
      const out: { total: number; segments: number }[] = [];
      for (let i = 0; i < (await groups.count()); i++) {
        const g = groups.nth(i);
        out.push({ total: Number(await g.getAttribute('data-total')), segments: await g.locator('rect').count() });
      }
      return out;
    }

    test('after a few runs: balance, allocations, ledger, charts with one bar per bucket, budgets and alerts', { skip }, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 500_000, key: { budgets: { dailyMillicents: 20_000, monthlyMillicents: 80_000 } } });
      await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 30_000, expiresAt: ctx.clock.now() + 5 * DAY, provenance: 'promotion' });
      await accounts.updateWorkspaceSettings(ctx.deps, t.workspace.id, { budgets: { weeklyMillicents: 100_000 }, lowCreditsMillicents: 10_000_000 });
      await raiseExpiryNotices(ctx.deps);
      const second = await seedKey(ctx.deps, t.user.id, [t.workspace.id]);
      ctx.clock.advance(-DAY);
      assert.equal((await run(ctx, t, 'chat.generate', chatCosting(300))).statusCode, 200);
      ctx.clock.advance(DAY);
      for (const cost of [700, 900]) assert.equal((await run(ctx, t, 'chat.generate', chatCosting(cost))).statusCode, 200);
      assert.equal((await run(ctx, { secret: second.secret, workspace: t.workspace }, 'music.generate', musicCosting(1_200))).statusCode, 202);
      await drain(ctx);

      // The public API's figures, read before the page (the page's own reads charge no points; each
      // public read charges its own, so the history is read last).
      const now = new Date(ctx.clock.now());
      const monthFrom = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString().slice(0, 10);
      const monthTo = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
      const daysInMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
      const balance = await pub(ctx, t, '/v1/balance');
      const ledger = await pub(ctx, t, '/v1/transactions');
      const costs = await pub(ctx, t, `/v1/costs?bucket=day&from=${monthFrom}&to=${monthTo}&groupBy=operationId`);
      const usage = await pub(ctx, t, '/v1/usage');
      const minutes = await pub(ctx, t, '/v1/usage/history?bucket=minute');
      const days = await pub(ctx, t, `/v1/usage/history?bucket=day&from=${monthFrom}&to=${monthTo}`);

      const page = await ui.signIn(t.user.id);
      await page.goto('/console/');
      await page.getByRole('link', { name: 'Usage', exact: true }).click();
      await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();

      // Balance.
      const figures = page.getByTestId('balance');
      await figures.waitFor();
      assert.match((await figures.locator('[data-figure="total"]').textContent())!, new RegExp(millicents(balance.totalMillicents)));
      assert.match((await figures.locator('[data-figure="reserved"]').textContent())!, new RegExp(millicents(balance.reservedMillicents)));
      assert.match((await figures.locator('[data-figure="spendable"]').textContent())!, new RegExp(millicents(balance.spendableMillicents)));

      // Allocations with their expiry.
      const allocationRows = page.locator('tr[data-allocation-id]');
      await allocationRows.first().waitFor();
      assert.deepEqual(await allocationRows.evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { allocationId: string } }).dataset.allocationId)), balance.allocations.map((a: { id: string }) => a.id));
      const promotion = balance.allocations.find((a: { provenance: string }) => a.provenance === 'promotion');
      await page.locator(`tr[data-allocation-id="${promotion.id}"]`).getByText(promotion.expiresAt.slice(0, 10)).waitFor();

      // The ledger, newest first, with keys and operations.
      const entryRows = page.locator('tr[data-entry-id]');
      await entryRows.first().waitFor();
      assert.deepEqual(await entryRows.evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { entryId: string } }).dataset.entryId)), ledger.items.map((e: { id: string }) => e.id));
      const music = ledger.items.find((e: { operationId: string | null }) => e.operationId === 'music.generate');
      const musicRow = page.locator(`tr[data-entry-id="${music.id}"]`);
      await musicRow.getByText(second.key.id).waitFor();
      await musicRow.getByText(millicents(music.amountMillicents)).waitFor();

      // Charts: one bar per bucket, each bar's total the public API's.
      await page.locator('[data-chart="points-minute"] > svg').waitFor();
      await page.locator('[data-chart="spend-day"] > svg').waitFor();
      await page.locator('[data-chart="points-day"] > svg').waitFor();
      const minuteBars = await bars(page, 'points-minute');
      assert.equal(minuteBars.length, 60);
      // The public read of the days came after that of the minutes and charged its point in this minute.
      const expectedMinutes = minutes.buckets.map((b: { points: number }) => b.points);
      expectedMinutes[59] += 1;
      assert.deepEqual(minuteBars.map((b) => b.total), expectedMinutes);
      assert.ok(minuteBars[59]!.total > 0, 'the runs of this minute');
      const dayBars = await bars(page, 'points-day');
      assert.equal(dayBars.length, daysInMonth);
      assert.deepEqual(dayBars.map((b) => b.total), days.buckets.map((b: { points: number }) => b.points));
      const today = now.getUTCDate() - 1;
      assert.ok(dayBars[today]!.total > 0 && dayBars[today - 1]!.total > 0, 'points yesterday and today');
      const spendBars = await bars(page, 'spend-day');
      assert.equal(spendBars.length, daysInMonth);
      const usageOf = (b: { lines: { type: string; costMillicents: number }[] }) => b.lines.filter((l) => l.type === 'usage').reduce((s, l) => s + l.costMillicents, 0);
      assert.deepEqual(spendBars.map((b) => b.total), costs.buckets.map(usageOf));
      assert.equal(spendBars[today]!.segments, 2, 'chat.generate and music.generate today');
      assert.equal(spendBars[today - 1]!.segments, 1, 'chat.generate yesterday');
      const legend = page.getByRole('list', { name: /Legend of Spend per day by operation/ });
      await legend.getByText('chat.generate').waitFor();
      await legend.getByText('music.generate').waitFor();
      // The text alternatives: each chart is an image with a summary, and its data as a table.
      const spendImage = page.locator('[data-chart="spend-day"] svg[role="img"]');
      assert.match((await spendImage.getAttribute('aria-label'))!, /chat\.generate .*music\.generate/);
      await page.getByText('Table of usage points per minute, last hour').click();
      const minuteTable = page.getByRole('table', { name: 'Usage points per minute, last hour' });
      await minuteTable.waitFor();
      assert.equal(await minuteTable.locator('tbody tr').count(), 60);

      // Budgets against their ceilings, as GET /v1/usage reports them.
      for (const b of usage.budgets as { scope: string; period: string; spentMillicents: number; limitMillicents: number }[]) {
        const row = page.locator(`tr[data-budget="${b.scope}:${b.period}"]`);
        await row.getByText(millicents(b.spentMillicents)).first().waitFor();
        await row.getByText(millicents(b.limitMillicents)).waitFor();
        await row.getByRole('img', { name: /% of the ceiling used or reserved/ }).waitFor();
      }
      assert.deepEqual(await page.locator('tr[data-budget]').evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { budget: string } }).dataset.budget)), ['workspace:week', 'key:day', 'key:month']);

      // Alerts and notifications.
      const notices = assertOk(await call(ctx, 'GET', `/admin/v1/workspaces/${t.workspace.id}/notifications`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).data.items as { kind: string; message: string }[];
      await page.locator('tr[data-kind="allocation.expiring"]').waitFor();
      assert.deepEqual(await page.locator('tr[data-kind]').evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { kind: string } }).dataset.kind)), notices.map((n) => n.kind));
      assert.ok(notices.some((n) => n.kind === 'credits.low'));
      await page.getByRole('cell', { name: notices[0]!.message }).waitFor();

      await ui.screenshot(page, 'usage');
      await ui.assertAccessible(page, 'the usage page');
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');

      // Refresh reads again: a new run appears in the ledger.
      assert.equal((await run(ctx, t, 'chat.generate', chatCosting(400))).statusCode, 200);
      const newest = (await pub(ctx, t, '/v1/transactions?limit=1')).items[0];
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.locator(`tr[data-entry-id="${newest.id}"]`).waitFor();
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });

    test('a member sees the balance, charts and ledger, without the keys\' budgets', { skip }, async () => {
      const ctx = get();
      const { owner, member, workspace } = await seedOrganization(ctx, { admin: false });
      await grantCredits(ctx.deps, workspace.id, { amountMillicents: 100_000 });
      await accounts.updateWorkspaceSettings(ctx.deps, workspace.id, { budgets: { monthlyMillicents: 50_000 } });
      const key = await seedKey(ctx.deps, owner.id, [workspace.id], { budgets: { dailyMillicents: 5_000 } });
      assert.equal((await run(ctx, { secret: key.secret, workspace }, 'chat.generate', chatCosting(400))).statusCode, 200);

      const page = await ui.signIn(member.id);
      await page.goto('/console/usage');
      await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
      await page.getByTestId('balance').waitFor();
      await page.locator('tr[data-entry-id]').first().waitFor();
      await page.locator('[data-chart="spend-day"] > svg').waitFor();
      await page.getByText('Keys’ budgets are shown to the workspace’s owners and admins.').waitFor();
      assert.deepEqual(await page.locator('tr[data-budget]').evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { budget: string } }).dataset.budget)), ['workspace:month']);
      await ui.screenshot(page, 'member-usage');
      await ui.assertAccessible(page, "a member's usage page");
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });
  },
  { live: { unitPrices: true }, env: { PUBLIC_BASE_URL: base } },
);
