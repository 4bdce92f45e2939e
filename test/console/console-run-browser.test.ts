/**
 * The console's Run, Jobs and key pages in a real browser (issue 35, items 3 to 5): the system
 * Chromium through playwright-core against the app on a real socket. Runs an operation from the
 * form generated from its inputSchema (estimate first, a double click runs once, executionOrigin
 * `web` on the job) and sees its result with previews; creates a key in the console, calls the
 * public API with it, sees the job appear and finish live on the Jobs page, opens its result,
 * revokes the key and sees the API refuse it; cancels and retries from the Jobs page; edits and
 * rolls a key; a member reads jobs without "Run", "Cancel" or "Retry". axe-core finds no serious
 * or critical violation on these pages; screenshots go to test-artifacts/console/.
 *
 * Runs with test keys (issue 34) and SIMULATE_LIVE off (testKeySuite): the pages are used with
 * the shell's "Test mode" switch on, as an owner trying operations for free would, so the work is
 * simulated because the keys are test keys and the jobs are test jobs (stored in the test twin:
 * scopeOf). The key edit-and-roll test runs no operation and stays on a live key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grantCredits } from '../../src/modules/billing/service.js';
import type { Page } from 'playwright-core';
import { describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { uploadPixel } from '../support/api-fuzz.js';
import { png } from '../support/media.js';
import { waitUntil } from '../support/wait.js';
import { drain } from '../support/jobs.js';
import { scopeOf, seedKey, seedTenant } from '../support/seed.js';
import { seedOrganization } from '../support/console.js';
import { consoleSite, useConsoleBrowser } from '../support/console-browser.js';

const site = await consoleSite();
const { skip, base } = site;
const CREDITS = 10_000_000;

/** Jobs of a workspace as the database holds them. */
/** A page predicate passed as a function: a string would need eval, which the console's CSP forbids once polling starts. */
function imageLoaded(): boolean {
  const img = (globalThis as any).document.querySelector('figure.file img');
  return !!img && img.complete && img.naturalWidth > 0;
}

async function jobRows(ctx: TestContext, workspaceId: string) {
  return ctx.deps.db.selectFrom('jobs').select(['id', 'status', 'execution_origin', 'operation_id']).where('workspace_id', '=', workspaceId).orderBy('id').execute();
}

/** Turns the shell's "Test mode" switch on (the address then says ?mode=test; the links keep it). */
async function testMode(page: Page): Promise<void> {
  await page.getByRole('switch', { name: 'Test mode' }).check();
  await page.waitForURL((url) => url.searchParams.get('mode') === 'test');
  await page.getByRole('region', { name: 'Test mode' }).waitFor();
}

/** Runs the queued jobs while the page watches (the harness app has no worker of its own). */
async function drainSoon(ctx: TestContext): Promise<void> {
  await new Promise((r) => setTimeout(r, 300));
  await drain(ctx);
}

/** Polls `read` until it returns a row. */
async function waitForRow<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  return (await waitUntil(read, (row) => row !== undefined, what)) as T;
}

describeEachDatabase(
  'console Run and Jobs in Chromium',
  (get) => {
    const ui = useConsoleBrowser(get, site);
    const { publicApi } = ui;

    test('run an operation from the form: estimate, a double click runs once, executionOrigin web, the result with previews', { skip }, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { mode: 'test', credits: CREDITS });
      const page = await ui.signIn(t.user.id);
      await testMode(page);
      await page.getByRole('link', { name: 'Run', exact: true }).click();
      await page.getByRole('heading', { name: 'Run', exact: true }).waitFor();
      await page.getByRole('combobox', { name: 'Operation', exact: true }).selectOption('image.generate');
      const prompt = page.getByRole('textbox', { name: /^prompt/ });
      await prompt.waitFor();

      // A refusal shows the API's code and message, and the field its pointer names.
      await page.getByRole('spinbutton', { name: /^width/ }).fill('3');
      await prompt.fill('a lighthouse at dusk');
      await page.getByRole('button', { name: 'Estimate cost' }).click();
      await page.getByRole('alert').getByText('INVALID_INPUT').waitFor();
      await page.locator('#input-width-problem').waitFor();
      await page.getByRole('spinbutton', { name: /^width/ }).fill('256');
      await page.getByRole('spinbutton', { name: /^height/ }).fill('256');

      await page.getByRole('button', { name: 'Estimate cost' }).click();
      const estimate = await publicApi('POST', '/v1/estimates', t.secret, t.workspace.id, { operationId: 'image.generate', input: { prompt: 'a lighthouse at dusk', width: 256, height: 256 } });
      await page.getByText(`${estimate.json.data.maximumCostMillicents.toLocaleString('en-US')} millicents`).first().waitFor();
      await page.getByText('Maximum cost').waitFor();
      await ui.screenshot(page, 'run-estimate');
      await ui.assertAccessible(page, 'the run page with an estimate');

      await page.getByRole('button', { name: 'Run', exact: true }).dblclick();
      const jobSection = page.locator('section.job');
      await jobSection.waitFor();
      const jobs = await jobRows(ctx, scopeOf(t));
      assert.equal(jobs.length, 1, 'a double click runs once');
      assert.equal(jobs[0]!.execution_origin, 'web');
      const viaApi = await publicApi('GET', `/v1/jobs/${jobs[0]!.id}`, t.secret, t.workspace.id);
      assert.equal(viaApi.json.data.executionOrigin, 'web', 'the public API shows the origin');

      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await page.getByText('This form was already run').waitFor();
      assert.equal((await jobRows(ctx, scopeOf(t))).length, 1, 'pressing Run again replays the same Idempotency-Key');

      await drainSoon(ctx);
      await page.locator('section.job[data-status="completed"]').waitFor();
      await page.getByRole('heading', { name: 'Result' }).waitFor();
      await page.getByText('verified.').waitFor();
      const image = page.locator('figure.file img').first();
      await image.waitFor();
      // The image loaded: the signed URL works and the Content-Security-Policy lets it in.
      await page.waitForFunction(imageLoaded);
      await ui.screenshot(page, 'run-result');
      await ui.assertAccessible(page, 'the run page with a result');

      // A synchronous operation whose input holds an array of objects (a JSON field): text output.
      await page.getByRole('combobox', { name: 'Operation', exact: true }).selectOption('chat.generate');
      await page.getByRole('textbox', { name: /^messages/ }).fill('[{"role": "user", "content": "Say hello"}]');
      await page.getByRole('button', { name: 'Estimate cost' }).click();
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await page.locator('section.job[data-status="completed"]').waitFor();
      await page.getByRole('rowheader', { name: 'message.content' }).waitFor();
      const rows = await jobRows(ctx, scopeOf(t));
      assert.equal(rows.length, 2);
      assert.deepEqual(rows.map((r) => r.execution_origin), ['web', 'web']);
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });

    test('media fields pick workspace media; enums, booleans and lists from the form; sprite atlases and frames, a GLB as a download', { skip }, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { mode: 'test', credits: CREDITS });
      const pixel = await uploadPixel(ctx, t, 'pixel.png');
      const page = await ui.signIn(t.user.id);
      await testMode(page);
      await page.getByRole('link', { name: 'Run', exact: true }).click();
      const operation = page.getByRole('combobox', { name: 'Operation', exact: true });
      const estimateAndRun = async () => {
        await page.getByRole('button', { name: 'Estimate cost' }).click();
        await page.getByRole('button', { name: 'Run', exact: true }).click();
        await page.locator('section.job').waitFor();
        await drainSoon(ctx);
        await page.locator('section.job[data-status="completed"]').waitFor();
        await page.getByRole('heading', { name: 'Result' }).waitFor();
      };

      await operation.selectOption('background.remove');
      const media = page.getByRole('combobox', { name: /^mediaId/ });
      await media.selectOption({ label: 'pixel.png (image/png)' });
      await estimateAndRun();
      const input = await ctx.deps.db.selectFrom('jobs').select('input_json').where('workspace_id', '=', scopeOf(t)).executeTakeFirstOrThrow();
      assert.equal(JSON.parse(input.input_json).mediaId, pixel.id, 'the chosen media went into the input');
      await page.waitForFunction(imageLoaded);

      // Or upload a file right from the form: stored with the API's checks, then chosen in the field.
      await operation.selectOption('headshot.generate');
      await page.getByLabel('or upload a file').setInputFiles({ name: 'face.png', mimeType: 'image/png', buffer: await png(24, 24) });
      const uploaded = await waitForRow(() => ctx.deps.db.selectFrom('media').select(['id', 'name']).where('workspace_id', '=', scopeOf(t)).where('name', '=', 'face.png').executeTakeFirst(), 'the uploaded file to be stored');
      const references = page.getByRole('listbox', { name: /^referenceMediaIds/ });
      await page.waitForFunction((id: string) => [...(globalThis as any).document.querySelector('select[name="referenceMediaIds"]').selectedOptions].some((o: any) => o.value === id), uploaded.id);
      assert.deepEqual(await references.evaluate((el: any) => [...el.selectedOptions].map((o: any) => o.textContent)), ['face.png (image/png)']);
      // A file the API refuses is refused here with its code, and nothing is stored.
      await page.getByLabel('or upload a file').setInputFiles({ name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('not an image at all') });
      await page.getByText('UNSUPPORTED_MEDIA').waitFor();
      assert.equal(await ctx.deps.db.selectFrom('media').select('id').where('workspace_id', '=', scopeOf(t)).where('name', '=', 'notes.png').executeTakeFirst(), undefined);

      await operation.selectOption('sprite.generate');
      await page.getByRole('textbox', { name: /^prompt/ }).fill('a walking knight');
      await page.getByRole('spinbutton', { name: /^frames/ }).fill('4');
      await page.getByRole('group', { name: /^engines/ }).getByRole('checkbox', { name: 'godot' }).check();
      await page.getByRole('checkbox', { name: /^powerOfTwo/ }).check();
      await estimateAndRun();
      await page.getByText('4 frames').waitFor();
      assert.equal(await page.locator('.frame-grid figure.file img').count(), 4, 'every frame shown');
      await page.locator('figure.file').filter({ hasText: 'atlas' }).locator('img').waitFor();
      await page.getByRole('rowheader', { name: /^exports\.godot/ }).first().waitFor();
      const sprite = await ctx.deps.db.selectFrom('jobs').select('input_json').where('operation_id', '=', 'sprite.generate').where('workspace_id', '=', scopeOf(t)).executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(sprite.input_json), { prompt: 'a walking knight', frames: 4, frameWidth: 64, frameHeight: 64, engines: ['godot'], padding: 2, powerOfTwo: true });
      await ui.screenshot(page, 'run-sprite');
      await ui.assertAccessible(page, 'the run page with a sprite');

      await operation.selectOption('three-d.generate');
      await page.getByRole('textbox', { name: /^prompt/ }).fill('a chair');
      await estimateAndRun();
      await page.getByText('3D model (GLB)').waitFor();
      const download = page.getByRole('link', { name: /^Download .*\.glb$/ });
      const href = (await download.getAttribute('href'))!;
      assert.ok(href.startsWith(`${base}/`), href);
      assert.notEqual(await download.getAttribute('download'), null);
      const glb = await page.request.get(href);
      assert.equal(glb.status(), 200);
      assert.equal((await glb.body()).subarray(0, 4).toString('latin1'), 'glTF', 'a GLB file');
      await ui.screenshot(page, 'run-glb');
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });

    test('a key created in the console calls the API; the job appears live on the Jobs page; its result opens; revoked, the API refuses it', { skip }, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { mode: 'test', credits: CREDITS });
      const page = await ui.signIn(t.user.id);
      await testMode(page);
      await page.getByRole('link', { name: 'Keys', exact: true }).click();
      await page.getByRole('heading', { name: 'Keys' }).waitFor();
      const create = page.locator('form.create-key').filter({ hasText: 'New key' });
      await create.getByRole('radio', { name: /^Test:/ }).check();
      await create.getByRole('checkbox', { name: 'tools:run' }).check();
      await create.getByRole('checkbox', { name: 'music.generate' }).check();
      await page.getByRole('button', { name: 'Create key' }).click();
      const secret = await page.getByRole('textbox', { name: 'Secret' }).inputValue();
      assert.match(secret, /^wask_test_/);

      await page.getByRole('link', { name: 'Jobs', exact: true }).click();
      await page.getByRole('heading', { name: 'Jobs' }).waitFor();
      await page.getByText('No test jobs yet').waitFor();
      const started = await publicApi('POST', '/v1/runs', secret, t.workspace.id, { operationId: 'music.generate', input: { prompt: 'a short tune', durationSeconds: 5 } });
      assert.equal(started.status, 202, JSON.stringify(started.json));
      const jobId = started.json.data.jobId as string;
      const row = page.locator(`tr[data-job-id="${jobId}"]`);
      await row.waitFor();
      await row.getByRole('cell', { name: 'api', exact: true }).waitFor();
      assert.equal(await row.getAttribute('data-status'), 'pending');
      await ui.screenshot(page, 'jobs-pending');

      await drainSoon(ctx);
      await page.locator(`tr[data-job-id="${jobId}"][data-status="completed"]`).waitFor();
      await row.getByRole('button', { name: /^Open job/ }).click();
      await page.locator(`section.job[data-job-id="${jobId}"][data-status="completed"]`).waitFor();
      await page.getByRole('heading', { name: 'Result' }).waitFor();
      const audio = page.locator('figure.file audio');
      await audio.waitFor();
      assert.match((await audio.getAttribute('src')) ?? '', new RegExp(`^${base}/`), 'a same-origin signed URL');
      assert.equal(new URL(page.url()).searchParams.get('job'), jobId);
      assert.equal(new URL(page.url()).searchParams.get('mode'), 'test', 'opening a job keeps test mode');
      await ui.screenshot(page, 'jobs-result');
      await ui.assertAccessible(page, 'the jobs page with a result');

      await page.reload();
      await page.locator(`section.job[data-job-id="${jobId}"]`).waitFor();

      await page.getByRole('link', { name: 'Keys', exact: true }).click();
      await page.getByRole('button', { name: `Revoke key ${secret.slice(0, 17)}` }).click();
      await page.getByRole('row').filter({ hasText: secret.slice(0, 17) }).getByText(/^revoked/).waitFor();
      const refused = await publicApi('GET', '/v1/jobs', secret, t.workspace.id);
      assert.equal(refused.status, 401);
      assert.equal(refused.json.code, 'UNAUTHENTICATED');
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });

    test('cancel and retry from the Jobs page, filters, and a refusal with its API code', { skip }, async () => {
      const ctx = get();
      // A test balance of four and a half image runs (a failed run is charged its cost): enough for
      // what this test runs, then jobs left waiting take the rest, below what a retry must hold.
      const t = await seedTenant(ctx.deps, { mode: 'test' });
      const oneRun = (await publicApi('POST', '/v1/estimates', t.secret, t.workspace.id, { operationId: 'image.generate', input: { prompt: 'waits', width: 256, height: 256 } })).json.data.maximumCostMillicents as number;
      await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: Math.floor(oneRun * 4.5), mode: 'test' });
      const pending = (await publicApi('POST', '/v1/runs', t.secret, t.workspace.id, { operationId: 'image.generate', input: { prompt: 'waits', width: 256, height: 256 } })).json.data.jobId as string;
      const page = await ui.signIn(t.user.id);
      await page.goto(`/console/jobs?job=${pending}&mode=test`);
      const job = page.locator(`section.job[data-job-id="${pending}"]`);
      await job.waitFor();
      await job.getByRole('button', { name: 'Cancel', exact: true }).click();
      await page.locator(`section.job[data-job-id="${pending}"][data-status="cancelled"]`).waitFor();
      await page.locator(`tr[data-job-id="${pending}"][data-status="cancelled"]`).waitFor();
      assert.equal(await job.getByRole('button', { name: 'Cancel', exact: true }).count(), 0, 'a cancelled job has no Cancel');

      const failing = (await publicApi('POST', '/v1/runs', t.secret, t.workspace.id, { operationId: 'image.generate', input: { prompt: 'breaks [sim:fail=PROVIDER_ERROR]', width: 256, height: 256 } })).json.data.jobId as string;
      await drain(ctx);
      await page.getByLabel('Status').selectOption('failed');
      const failedRow = page.locator(`tr[data-job-id="${failing}"]`);
      await failedRow.waitFor();
      assert.equal(await page.locator('tr[data-job-id]').count(), 1, 'the status filter keeps only failed jobs');
      await failedRow.getByRole('button', { name: /^Open job/ }).click();
      const failedJob = page.locator(`section.job[data-job-id="${failing}"][data-status="failed"]`);
      await failedJob.getByRole('button', { name: 'Retry', exact: true }).click();
      await page.locator(`section.job[data-job-id="${failing}"][data-status="pending"]`).waitFor();
      await ui.screenshot(page, 'jobs-retried');
      await ui.assertAccessible(page, 'the jobs page with a retried job');

      // The test balance runs short meanwhile: the API's refusal is shown.
      await drain(ctx);
      const again = (await publicApi('POST', '/v1/runs', t.secret, t.workspace.id, { operationId: 'image.generate', input: { prompt: 'breaks again [sim:fail=PROVIDER_ERROR]', width: 256, height: 256 } })).json.data.jobId as string;
      await drain(ctx);
      await page.goto(`/console/jobs?job=${again}&mode=test`);
      const retryButton = page.locator(`section.job[data-job-id="${again}"]`).getByRole('button', { name: 'Retry', exact: true });
      await retryButton.waitFor();
      // Jobs left waiting now hold the test balance until a run of the same cost is refused 402.
      let held = 0;
      for (;;) {
        const holder = await publicApi('POST', '/v1/runs', t.secret, t.workspace.id, { operationId: 'image.generate', input: { prompt: 'holds the credits', width: 256, height: 256 } });
        if (holder.status === 402) break;
        assert.equal(holder.status, 202, JSON.stringify(holder.json));
        assert.ok(++held <= 4, 'a few waiting jobs hold what is left');
      }
      await retryButton.click();
      await page.getByRole('alert').getByText('INSUFFICIENT_CREDITS').waitFor();
      await ui.screenshot(page, 'jobs-refused');
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });

    test('edit and roll a key: the new secret is shown once and works, the old one stops after the overlap', { skip }, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: CREDITS });
      const extra = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { scopes: ['workspaces:read'], operations: [] });
      const page = await ui.signIn(t.user.id);
      await page.getByRole('link', { name: 'Keys', exact: true }).click();
      await page.getByRole('button', { name: `Edit key ${extra.key.prefix}` }).click();
      const edit = page.locator('form.edit-key');
      await edit.getByRole('checkbox', { name: 'jobs:read' }).check();
      await edit.getByLabel('Daily').fill('5000');
      await ui.assertAccessible(page, 'the key edit form');
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await edit.waitFor({ state: 'detached' });
      await page.getByRole('row').filter({ hasText: extra.key.prefix }).getByText('workspaces:read, jobs:read').waitFor();
      assert.equal((await publicApi('GET', '/v1/jobs', extra.secret, t.workspace.id)).status, 200, 'the added scope works at once');

      await page.getByRole('button', { name: `Roll key ${extra.key.prefix}` }).click();
      await page.getByLabel(/^Overlap in minutes/).fill('0');
      await page.getByRole('button', { name: 'Roll key', exact: true }).click();
      const secretBox = page.getByRole('textbox', { name: 'Secret' });
      await secretBox.waitFor();
      const rolled = await secretBox.inputValue();
      assert.notEqual(rolled, extra.secret);
      await page.getByRole('button', { name: 'Copy secret' }).waitFor();
      await ui.screenshot(page, 'keys-rolled');
      await ui.assertAccessible(page, 'the keys page with a rolled secret');
      assert.equal((await publicApi('GET', '/v1/jobs', rolled, t.workspace.id)).status, 200, 'the new secret works');
      ctx.clock.advance(1000);
      assert.equal((await publicApi('GET', '/v1/jobs', extra.secret, t.workspace.id)).status, 401, 'the old secret is refused after the overlap');
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });

    test('a member reads the jobs but gets no "Run", "Cancel" or "Retry"', { skip }, async () => {
      const ctx = get();
      const { owner, member, workspace } = await seedOrganization(ctx, { admin: false });
      const key = await seedKey(ctx.deps, owner.id, [workspace.id], { mode: 'test' });
      await grantCredits(ctx.deps, workspace.id, { amountMillicents: CREDITS, mode: 'test' });
      const jobId = (await publicApi('POST', '/v1/runs', key.secret, workspace.id, { operationId: 'image.generate', input: { prompt: 'waits', width: 256, height: 256 } })).json.data.jobId as string;
      const page = await ui.signIn(member.id);
      await testMode(page);
      await page.getByRole('link', { name: 'Run', exact: true }).click();
      await page.getByText('only owners and admins of a workspace run operations').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Run', exact: true }).count(), 0);
      await ui.assertAccessible(page, "a member's run page");
      await page.getByRole('link', { name: 'Jobs', exact: true }).click();
      await page.locator(`tr[data-job-id="${jobId}"]`).getByRole('button', { name: /^Open job/ }).click();
      await page.locator(`section.job[data-job-id="${jobId}"][data-status="pending"]`).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Cancel', exact: true }).count(), 0);
      await ui.screenshot(page, 'member-jobs');
      await ui.assertAccessible(page, "a member's jobs page");
      await ui.context.close();
    });
  },
  testKeySuite({ env: { PUBLIC_BASE_URL: base } }),
);
