/**
 * The console's Media and Webhooks pages in Chromium (issue 35, items 7 and 8): playwright-core
 * with the system Chromium against the app on a real socket, signed in through a sign-in link
 * (support/console-browser.ts). Media: an upload with the file input and "Upload", one dropped on the page (a
 * DataTransfer dispatched as a drop event), the previews loading under the Content-Security-Policy,
 * a download, and a refusal shown with the API's code. Webhooks: a domain added, its instructions
 * read, checked (refused, then verified by its TXT record), a webhook created on it with the
 * secret shown once, a delivery failed by the HTTPS receiver and replayed with "Replay", the
 * secret rotated, the webhook revoked; a member sees it all without a control, and the endpoint
 * refuses the member. axe-core finds no serious or critical violation; screenshots go to
 * test-artifacts/console/.
 *
 * Runs with SIMULATE_LIVE off (testKeySuite, issue 34): it runs no operation with a live key, so
 * a production server answers it the same.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWebhook } from '../../src/modules/webhooks/service.js';
import { describeEachDatabase, testKeySuite } from '../support/harness.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { png, wav } from '../support/media.js';
import { seedTenant } from '../support/seed.js';
import { emit, onlyDelivery, verifyHostname, WEBHOOK_TEST_ENV, worker } from '../support/webhooks.js';
import { seedOrganization } from '../support/console.js';
import { consoleSite, useConsoleBrowser } from '../support/console-browser.js';

const site = await consoleSite();
const { skip, base } = site;
const receiver = HttpsReceiver.forThisFile();

/** The page's globals as the functions run in the browser see them (the tests compile without the DOM library). */
type PageGlobals = { document: { querySelector(selector: string): unknown } };

describeEachDatabase(
  'console media and webhooks in Chromium',
  (get) => {
    const ui = useConsoleBrowser(get, site);

    test('media: upload with the file input and by drag and drop, previews, download, a refusal', { skip }, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const page = await ui.signIn(t.user.id, { acceptDownloads: true });
      await page.goto('/console/');
      await page.getByRole('link', { name: 'Media', exact: true }).click();
      await page.getByRole('heading', { name: 'Media', level: 1 }).waitFor();
      await page.getByText('No media yet.').waitFor();

      const image = await png(48, 32);
      await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'red.png', mimeType: 'image/png', buffer: image });
      await page.getByRole('button', { name: 'Upload', exact: true }).click();
      await page.getByRole('rowheader', { name: 'red.png' }).waitFor();
      const preview = page.getByRole('img', { name: 'Preview of red.png' });
      await preview.waitFor();
      await page.waitForFunction(() => ((globalThis as unknown as PageGlobals).document.querySelector('img.preview') as { complete?: boolean } | null)?.complete === true);
      assert.equal(await preview.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth), 48, 'the preview loaded under the CSP');
      await page.getByText('Uploaded red.png.').waitFor();

      // Drag and drop: a DataTransfer holding a WAV file, dropped on the drop zone.
      const sound = wav(8000, 8000);
      const dataTransfer = await page.evaluateHandle(`(() => {
        const bytes = Uint8Array.from(atob(${JSON.stringify(sound.toString('base64'))}), (c) => c.charCodeAt(0));
        const dt = new DataTransfer();
        dt.items.add(new File([bytes], 'tone.wav', { type: 'audio/wav' }));
        return dt;
      })()`);
      await page.dispatchEvent('[data-testid="drop-zone"]', 'dragenter', { dataTransfer });
      await page.dispatchEvent('[data-testid="drop-zone"]', 'dragover', { dataTransfer });
      await page.dispatchEvent('[data-testid="drop-zone"]', 'drop', { dataTransfer });
      await page.getByRole('rowheader', { name: 'tone.wav' }).waitFor();
      const audio = page.locator('audio[aria-label="Play tone.wav"]');
      await audio.waitFor();
      await page.waitForFunction(() => (((globalThis as unknown as PageGlobals).document.querySelector('audio.preview') as { readyState?: number } | null)?.readyState ?? 0) >= 1);
      assert.ok((await audio.evaluate((a) => (a as unknown as { duration: number }).duration)) > 0.9, 'the audio preview loaded its metadata');
      const stored = await ctx.deps.db.selectFrom('media').select(['name', 'mime_type']).where('workspace_id', '=', t.workspace.id).orderBy('name').execute();
      assert.deepEqual(stored.map((m) => [m.name, m.mime_type]), [['red.png', 'image/png'], ['tone.wav', 'audio/wav']]);

      const downloading = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Download red.png' }).click();
      const download = await downloading;
      assert.equal(download.suggestedFilename(), 'red.png');
      const chunks: Buffer[] = [];
      for await (const c of (await download.createReadStream())!) chunks.push(c as Buffer);
      assert.deepEqual(Buffer.concat(chunks), image);

      await ui.screenshot(page, 'media');
      await ui.assertAccessible(page, 'the media page');

      // A refusal: text that claims to be a PNG, refused as the public upload refuses it.
      await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('these are not pixels') });
      await page.getByRole('button', { name: 'Upload', exact: true }).click();
      const alert = page.getByRole('alert').filter({ hasText: 'UNSUPPORTED_MEDIA' });
      await alert.waitFor();
      await page.getByText('Could not upload notes.png').waitFor();
      await ui.screenshot(page, 'media-refused');
      await ui.assertAccessible(page, 'the media page with a refusal');
      assert.equal((await ctx.deps.db.selectFrom('media').select('id').where('workspace_id', '=', t.workspace.id).execute()).length, 2);
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });

    test('webhooks: add and check a domain, create a webhook, replay a failed delivery, rotate, revoke', { skip }, async () => {
      const ctx = get();
      receiver.reset();
      const t = await seedTenant(ctx.deps);
      const hostname = 'hooks.localhost';
      ctx.hostAddresses.set(hostname, ['127.0.0.1']);
      const page = await ui.signIn(t.user.id, { acceptDownloads: true });
      await page.goto('/console/');
      await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
      await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
      await page.getByText('No webhooks yet.').waitFor();

      await page.getByLabel('Hostname', { exact: true }).fill(hostname);
      await page.getByRole('button', { name: 'Add domain' }).click();
      const instructions = page.locator(`[data-instructions-for="${hostname}"]`);
      await instructions.getByText(`_service-verify.${hostname}`).waitFor();
      await instructions.getByText(`https://${hostname}/.well-known/service-verify.txt`).waitFor();
      const token = (await instructions.locator('code.token').textContent())!;
      assert.match(token, /^service-verify=/);

      await page.getByRole('button', { name: `Check ${hostname} by its DNS record` }).click();
      await page.getByRole('alert').filter({ hasText: 'DOMAIN_NOT_VERIFIED' }).waitFor();
      await ui.screenshot(page, 'domain-pending');
      ctx.txtRecords.set(`_service-verify.${hostname}`, [[token]]);
      await page.getByRole('button', { name: `Check ${hostname} by its DNS record` }).click();
      await page.getByRole('row').filter({ hasText: hostname }).getByRole('cell', { name: 'verified', exact: true }).waitFor();
      await page.getByText(`${hostname} is verified.`).waitFor();

      const url = receiver.url(hostname);
      await page.getByLabel('URL (HTTPS, on a verified hostname)').fill(url);
      await page.getByRole('button', { name: 'Create webhook' }).click();
      const secretBox = page.getByRole('textbox', { name: 'Webhook secret' });
      await secretBox.waitFor();
      const secret = await secretBox.inputValue();
      assert.match(secret, /^whsec_/);
      await page.getByRole('button', { name: 'Copy secret' }).waitFor();
      await page.getByRole('rowheader', { name: url }).waitFor();
      await ui.screenshot(page, 'webhook-created');
      await page.getByRole('button', { name: 'I have stored it' }).click();
      assert.equal(await secretBox.count(), 0, 'the secret is gone');
      const webhookId = (await ctx.deps.db.selectFrom('webhooks').select('id').where('workspace_id', '=', t.workspace.id).executeTakeFirstOrThrow()).id;

      // A delivery the receiver refuses for good (410): failed after one attempt.
      const eventId = await emit(ctx, t.workspace.id);
      receiver.reply({ status: 410 });
      await worker(ctx).runOnce();
      assert.equal((await onlyDelivery(ctx, webhookId)).status, 'failed');
      await page.getByRole('button', { name: `Deliveries of ${url}` }).click();
      const row = page.getByRole('row').filter({ hasText: eventId });
      await row.getByRole('cell', { name: 'failed', exact: true }).waitFor();
      await row.getByRole('cell', { name: 'HTTP 410' }).waitFor();
      await ui.screenshot(page, 'webhook-failed-delivery');
      await ui.assertAccessible(page, 'the webhooks page with deliveries');

      await row.getByRole('button', { name: 'Replay', exact: true }).click();
      await row.getByRole('cell', { name: 'pending', exact: true }).waitFor();
      await page.getByText(/queued again \(replay 1\)/).waitFor();
      await worker(ctx).runOnce();
      await page.getByRole('button', { name: 'Refresh deliveries' }).click();
      await row.getByRole('cell', { name: 'succeeded', exact: true }).waitFor();
      await row.getByRole('cell', { name: 'HTTP 200' }).waitFor();
      assert.equal(await row.getByRole('button', { name: 'Replay' }).count(), 0, 'a delivered event has no Replay');
      assert.equal(receiver.requests.length, 2);
      assert.ok(receiver.requests.every((r) => r.headers['service-event-id'] === eventId));
      await ui.screenshot(page, 'webhook-replayed');

      await page.getByRole('button', { name: `Rotate secret of ${url}` }).click();
      await secretBox.waitFor();
      const rotated = await secretBox.inputValue();
      assert.match(rotated, /^whsec_/);
      assert.notEqual(rotated, secret);
      await page.getByRole('button', { name: `Revoke webhook ${url}` }).click();
      await page.getByRole('row').filter({ hasText: url }).getByText(/^revoked/).waitFor();
      assert.equal(await secretBox.count(), 0, 'the secret of a revoked webhook is gone');
      assert.equal(await page.getByRole('button', { name: `Rotate secret of ${url}` }).count(), 0);
      await ui.assertAccessible(page, 'the webhooks page');
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });

    test('a member sees webhooks, deliveries and domains without a control; the endpoint refuses the member', { skip }, async () => {
      const ctx = get();
      receiver.reset();
      const { member, workspace } = await seedOrganization(ctx, { admin: false });
      const hostname = 'hooks-b.localhost';
      await verifyHostname(ctx, workspace.id, hostname);
      const created = await createWebhook(ctx.deps, workspace.id, { url: receiver.url(hostname), eventTypes: ['job.completed'] });
      const eventId = await emit(ctx, workspace.id);
      receiver.reply({ status: 410 });
      await worker(ctx).runOnce();
      const delivery = await onlyDelivery(ctx, created.webhook.id);
      assert.equal(delivery.status, 'failed', JSON.stringify({ delivery, requests: receiver.requests.length }));

      const page = await ui.signIn(member.id, { acceptDownloads: true });
      await page.goto('/console/webhooks');
      await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
      await page.getByText('only owners and admins change them').waitFor();
      await page.getByRole('rowheader', { name: created.webhook.url }).waitFor();
      await page.getByRole('rowheader', { name: hostname, exact: true }).waitFor();
      await page.getByRole('button', { name: `Deliveries of ${created.webhook.url}` }).click();
      const row = page.getByRole('row').filter({ hasText: eventId });
      await row.getByRole('cell', { name: 'failed', exact: true }).waitFor();
      for (const name of ['Replay', 'Create webhook', 'Add domain', `Rotate secret of ${created.webhook.url}`, `Revoke webhook ${created.webhook.url}`]) {
        assert.equal(await page.getByRole('button', { name }).count(), 0, `no "${name}" for a member`);
      }
      assert.equal(await page.getByLabel('Hostname', { exact: true }).count(), 0);
      await ui.screenshot(page, 'member-webhooks');
      await ui.assertAccessible(page, "a member's webhooks page");

      // The endpoint refuses what the page does not offer: the page's own fetch with the session and its CSRF token.
      const refused = await page.evaluate(async (path) => {
        const me = (await (await fetch('/console/api/me')).json()) as { data: { csrfToken: string } };
        const res = await fetch(path, { method: 'POST', headers: { 'x-csrf-token': me.data.csrfToken } });
        return { status: res.status, code: ((await res.json()) as { code: string }).code };
      }, `/console/api/workspaces/${workspace.id}/webhooks/${created.webhook.id}/deliveries/${delivery.id}/replay`);
      assert.deepEqual(refused, { status: 403, code: 'FORBIDDEN' });
      assert.equal((await onlyDelivery(ctx, created.webhook.id)).replay_count, delivery.replay_count);
      assert.deepEqual(ui.problems, [], 'no CSP violation or page error');
      await ui.context.close();
    });
  },
  testKeySuite({ env: { PUBLIC_BASE_URL: base, ...WEBHOOK_TEST_ENV } }),
);
