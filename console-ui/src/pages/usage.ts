/**
 * Usage: the workspace's money and usage, as the public API reports them (src/console/routes-usage.ts
 * calls the same services): the balance (total, reserved, spendable), the allocations with their
 * expiry, the ledger (newest first, paged, with the key and operation of each entry), charts of
 * the usage points per minute over the last hour and per day over the month, of the spending per
 * day by operation, every budget against its ceiling, and the alerts and account notifications.
 * The month and the last hour are the service's (its clock), not the browser's. Beside the live
 * balance, the test balance (what test keys spend; decisions.md "Test mode"), to which owners and
 * admins add make-believe credits ("Add test credits"); live credits are the operator's alone.
 */
import { useEffect, useState } from 'preact/hooks';
import type { KeyMode, Workspace } from '../api.js';
import { BarChart, BudgetMeter, type Bar } from '../charts.js';
import { ErrorNotice, formatTime, PageHeading } from '../components.js';
import { html } from '../html.js';
import { formatMillicents } from '../runs-api.js';
import {
  dollarsToMillicents,
  MAX_TEST_GRANT_MILLICENTS,
  monthOf,
  usageApi,
  type Allocation,
  type Balance,
  type Budget,
  type CostReport,
  type LedgerEntry,
  type Notification,
  type UsageHistory,
  type UsageSummary,
} from '../usage-api.js';

const dollars = (mc: number) => {
  const d = mc / 100_000;
  return `$${d.toFixed(d !== 0 && Math.abs(d) < 0.01 ? 5 : 2)}`;
};
const count = (n: number) => n.toLocaleString('en-US');
const utcMinute = (iso: string) => iso.slice(11, 16);
const utcDay = (iso: string) => iso.slice(0, 10);
const PERIOD_NAMES: Record<Budget['period'], string> = { day: 'Daily', week: 'Weekly', month: 'Monthly' };

interface Loaded<T> {
  data?: T;
  error?: unknown;
}

/** One read of the page, again whenever `deps` change. */
function useRead<T>(read: () => Promise<T> | undefined, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({});
  useEffect(() => {
    let stopped = false;
    const p = read();
    if (!p) return;
    p.then((data) => !stopped && setState({ data }), (error: unknown) => !stopped && setState({ error }));
    return () => {
      stopped = true;
    };
  }, deps);
  return state;
}

function Pending({ what, state }: { what: string; state: Loaded<unknown> }) {
  if (state.error) return html`<${ErrorNotice} error=${state.error} />`;
  return state.data === undefined ? html`<p aria-live="polite">Loading ${what}…</p>` : null;
}

function pointsChart(id: string, title: string, history: UsageHistory, tick: (iso: string) => string, label: (iso: string) => string) {
  const bars: Bar[] = history.buckets.map((b) => ({ label: label(b.start), tick: tick(b.start), values: [b.points] }));
  const busiest = history.buckets.reduce((m, b) => Math.max(m, b.points), 0);
  const summary = `${count(history.totals.points)} usage points in ${history.buckets.length} ${history.bucket === 'minute' ? 'minutes' : 'days'}, at most ${count(busiest)} in one${
    Object.keys(history.totals.refused).length ? `; refused (429): ${Object.entries(history.totals.refused).map(([k, v]) => `${k} ${v}`).join(', ')}` : ''
  }.`;
  return html`<${BarChart} id=${id} title=${title} summary=${summary} series=${[{ id: 'points', label: 'Points' }]} bars=${bars} format=${count} unit="Points" />`;
}

function spendChart(report: CostReport, month: string) {
  // Spending by jobs (type usage), one series per operation; refunds, debits and expirations are in the totals below.
  const operations = [...new Set(report.totals.lines.filter((l) => l.type === 'usage').map((l) => l.operationId ?? 'none'))];
  const bars: Bar[] = report.buckets.map((b) => ({
    label: utcDay(b.start),
    tick: b.start.slice(8, 10),
    values: operations.map((op) => b.lines.filter((l) => l.type === 'usage' && (l.operationId ?? 'none') === op).reduce((t, l) => t + l.costMillicents, 0)),
  }));
  const usage = report.totals.byType.usage ?? 0;
  const summary = operations.length
    ? `${dollars(usage)} spent by jobs in ${month}: ${operations
        .map((op) => `${op} ${dollars(report.totals.lines.filter((l) => l.type === 'usage' && (l.operationId ?? 'none') === op).reduce((t, l) => t + l.costMillicents, 0))}`)
        .join(', ')}.`
    : `Nothing spent by jobs in ${month}.`;
  return html`<${BarChart} id="spend-day" title=${`Spend per day by operation, ${month}`} summary=${summary} series=${operations.map((op) => ({ id: op, label: op }))} bars=${bars} format=${dollars} unit="Spend" />
    <p class="hint" data-testid="cost-totals">
      ${month}: jobs ${formatMillicents(usage)}; refunds ${formatMillicents(0 - (report.totals.byType.refund ?? 0))}; debits ${formatMillicents(report.totals.byType.debit ?? 0)}; expired credits ${formatMillicents(report.totals.byType.expiration ?? 0)}; net ${formatMillicents(report.totals.costMillicents)}.
    </p>`;
}

function BudgetRows({ owner, budgets }: { owner: string; budgets: Budget[] }) {
  return budgets.map(
    (b) => html`<tr key=${`${owner}-${b.period}`} data-budget=${`${b.scope}:${b.period}`}>
      <th scope="row">${owner}, ${PERIOD_NAMES[b.period].toLowerCase()}</th>
      <td>${formatMillicents(b.spentMillicents)}</td>
      <td>${formatMillicents(b.reservedMillicents)}</td>
      <td>${formatMillicents(b.limitMillicents)}</td>
      <td><${BudgetMeter} label=${`${owner} ${PERIOD_NAMES[b.period].toLowerCase()} budget`} spent=${b.spentMillicents} reserved=${b.reservedMillicents} limit=${b.limitMillicents} /></td>
      <td>${formatTime(b.resetsAt)}</td>
    </tr>`,
  );
}

function Budgets({ summary }: { summary: UsageSummary }) {
  const none = summary.workspaceBudgets.length === 0 && summary.keyBudgets.length === 0;
  return html`<section aria-labelledby="budgets-heading">
    <h2 id="budgets-heading">Budgets</h2>
    ${none
      ? html`<p>No budget is set on this workspace${summary.canSeeKeys ? ' or its keys (set them on the Keys page)' : ''}.</p>`
      : html`<table class="budgets">
          <caption>Budgets against their ceilings (spent this period, and reserved by running jobs)</caption>
          <thead><tr><th scope="col">Budget</th><th scope="col">Spent</th><th scope="col">Reserved</th><th scope="col">Ceiling</th><th scope="col">Used or reserved</th><th scope="col">Resets</th></tr></thead>
          <tbody>
            <${BudgetRows} owner="Workspace" budgets=${summary.workspaceBudgets} />
            ${summary.keyBudgets.map((k) => html`<${BudgetRows} key=${k.keyId} owner=${`Key ${k.prefix}`} budgets=${k.budgets} />`)}
          </tbody>
        </table>`}
    ${summary.canSeeKeys ? null : html`<p class="hint">Keys’ budgets are shown to the workspace’s owners and admins.</p>`}
  </section>`;
}

/**
 * The test balance (GET …/balance?mode=test) and, for owners and admins, "Add test credits": an
 * amount in dollars, at most the API's bound a time, added to the test balance only.
 */
function TestBalance({ workspace, state, onAdded }: { workspace: Workspace; state: Loaded<Balance>; onAdded: () => void }) {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState('');
  const maxDollars = MAX_TEST_GRANT_MILLICENTS / 100_000;

  useEffect(() => {
    setError(undefined);
    setDone('');
  }, [workspace.id]);

  async function submit(event: Event) {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const amountMillicents = dollarsToMillicents(String(new FormData(form).get('dollars') ?? ''));
    setDone('');
    setError(undefined);
    if (!(amountMillicents >= 1 && amountMillicents <= MAX_TEST_GRANT_MILLICENTS)) {
      setError(new Error(`Enter an amount from $0.01 to $${maxDollars.toLocaleString('en-US')}.`));
      return;
    }
    setBusy(true);
    try {
      const { allocation } = await usageApi.addTestCredits(workspace.id, amountMillicents);
      setDone(`Added ${formatMillicents(allocation.amountMillicents)} of test credits.`);
      form.reset();
      onAdded();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const t = state.data;
  return html`<section aria-labelledby="test-balance-heading" class="test-mode">
    <h2 id="test-balance-heading">Test balance</h2>
    <p class="hint">Test keys (<code>wask_test_…</code>, made on the Keys page) run every operation on the simulated provider, for free: they are paid from this make-believe balance, separate from the live credits above and never converted into them.</p>
    <${Pending} what="the test balance" state=${state} />
    ${t
      ? html`<dl class="facts balance" data-testid="test-balance">
          <dt>Total</dt><dd data-figure="total">${formatMillicents(t.totalMillicents)}</dd>
          <dt>Reserved</dt><dd data-figure="reserved">${formatMillicents(t.reservedMillicents)}</dd>
          <dt>Spendable</dt><dd data-figure="spendable">${formatMillicents(t.spendableMillicents)}</dd>
        </dl>`
      : null}
    ${workspace.canManageKeys
      ? html`<form class="inline-form inline" onSubmit=${submit} aria-label="Add test credits">
          <label for="test-credits-dollars">Test credits to add, in dollars (up to $${maxDollars.toLocaleString('en-US')} a time)</label>
          <input id="test-credits-dollars" name="dollars" type="number" min="0.01" max=${maxDollars} step="0.01" required />
          <button type="submit" class="primary" disabled=${busy}>Add test credits</button>
          <span role="status">${done}</span>
        </form>
        <${ErrorNotice} error=${error} />`
      : html`<p class="hint">Owners and admins of the workspace add test credits.</p>`}
  </section>`;
}

export function UsagePage({ workspace, mode }: { workspace: Workspace | undefined; mode: KeyMode }) {
  const [poke, setPoke] = useState(0);
  const [testPoke, setTestPoke] = useState(0);
  const id = workspace?.id;
  const summary = useRead(() => (id ? usageApi.summary(id, mode) : undefined), [id, mode, poke]);
  const balance = useRead(() => (id ? usageApi.balance(id, undefined, mode) : undefined), [id, mode, poke]);
  const testBalance = useRead(() => (id ? usageApi.balance(id, undefined, 'test') : undefined), [id, poke, testPoke]);
  if (!workspace) return html`<${PageHeading}>Usage<//><p>You have no workspace yet.</p>`;
  const s = summary.data;
  return html`<${PageHeading}>Usage<//>
    <p>Credits, spending and usage points of <strong>${workspace.name}</strong>, as the public API reports them (GET /v1/balance, /v1/transactions, /v1/costs, /v1/usage, /v1/usage/history)${mode === 'test' ? ' to its test keys' : ''}. Times are UTC.
      <button type="button" class="refresh" onClick=${() => setPoke((n) => n + 1)}>Refresh</button></p>
    ${mode === 'test' ? html`<p class="notice test-mode"><span class="badge test">Test</span> Test mode: the balance, ledger, charts and budgets below are the test mode's (test keys' simulated work, paid from the test balance). Alerts are the live workspace's.</p>` : null}
    <${BalanceSection} balance=${balance} summary=${summary} />
    <${TestBalance} workspace=${workspace} state=${testBalance} onAdded=${() => setTestPoke((n) => n + 1)} />
    <${ChartsSection} workspaceId=${workspace.id} mode=${mode} summary=${summary} />
    ${s ? html`<${Budgets} summary=${s} />` : null}
    <${AllocationsSection} key=${workspace.id} workspaceId=${workspace.id} mode=${mode} balance=${balance.data} />
    <${LedgerSection} key=${workspace.id} workspaceId=${workspace.id} mode=${mode} poke=${poke} />
    <${NoticesSection} key=${workspace.id} workspaceId=${workspace.id} poke=${poke} />`;
}

type Read<T> = ReturnType<typeof useRead<T>>;
type Summary = NonNullable<Read<Awaited<ReturnType<typeof usageApi.summary>>>['data']>;
type BalanceData = NonNullable<Read<Awaited<ReturnType<typeof usageApi.balance>>>['data']>;

function BalanceSection({ balance, summary }: { balance: Read<BalanceData>; summary: Read<Summary> }) {
  const b = balance.data;
  const s = summary.data;
  return html`<section aria-labelledby="balance-heading">
    <h2 id="balance-heading">Balance</h2>
    <${Pending} what="the balance" state=${balance} />
    ${b
      ? html`<dl class="facts balance" data-testid="balance">
          <dt>Total</dt><dd data-figure="total">${formatMillicents(b.totalMillicents)}</dd>
          <dt>Reserved</dt><dd data-figure="reserved">${formatMillicents(b.reservedMillicents)}</dd>
          <dt>Spendable</dt><dd data-figure="spendable">${formatMillicents(b.spendableMillicents)}</dd>
        </dl>`
      : null}
    ${s
      ? html`<dl class="facts points" data-testid="points">
          <dt>Points this minute</dt><dd>${count(s.points.minuteUsed)} of ${count(s.points.minuteLimit)} (resets ${formatTime(s.points.minuteResetsAt)})</dd>
          <dt>Points this month</dt><dd>${count(s.points.monthlyUsed)} of ${count(s.points.monthlyLimit)} (resets ${formatTime(s.points.monthlyResetsAt)})</dd>
        </dl>`
      : null}
  </section>`;
}

/** Points per minute (the last hour), points and spending per day of the month: read once the summary says what "now" is. */
function ChartsSection({ workspaceId: id, mode, summary }: { workspaceId: string; mode: KeyMode; summary: Read<Summary> }) {
  const s = summary.data;
  const month = s ? monthOf(s.now) : undefined;
  const minutes = useRead(() => (s ? usageApi.history(id, { bucket: 'minute' }, mode) : undefined), [id, mode, s]);
  const days = useRead(() => (month ? usageApi.history(id, { bucket: 'day', from: month.from, to: month.to }, mode) : undefined), [id, mode, s]);
  const spend = useRead(() => (month ? usageApi.costs(id, { bucket: 'day', from: month.from, to: month.to, groupBy: ['operationId'] }, mode) : undefined), [id, mode, s]);
  return html`<section aria-labelledby="charts-heading">
    <h2 id="charts-heading">Charts</h2>
    <${Pending} what="the points and budgets" state=${summary} />
    ${s ? html`<${Pending} what="the usage points per minute" state=${minutes} />` : null}
    ${minutes.data ? pointsChart('points-minute', 'Usage points per minute, last hour', minutes.data, utcMinute, (iso) => formatTime(iso)) : null}
    ${s ? html`<${Pending} what="the usage points per day" state=${days} />` : null}
    ${days.data && month ? pointsChart('points-day', `Usage points per day, ${month.label}`, days.data, (iso) => iso.slice(8, 10), utcDay) : null}
    ${s ? html`<${Pending} what="the spending per day" state=${spend} />` : null}
    ${spend.data && month ? spendChart(spend.data, month.label) : null}
  </section>`;
}

function AllocationsSection({ workspaceId, mode, balance }: { workspaceId: string; mode: KeyMode; balance: BalanceData | undefined }) {
  const [allocations, setAllocations] = useState<{ items: Allocation[]; nextCursor: string | null } | undefined>();
  const [moreError, setMoreError] = useState<unknown>();
  useEffect(() => setAllocations(balance ? { items: balance.allocations, nextCursor: balance.nextCursor } : undefined), [balance]);
  async function moreAllocations() {
    if (!allocations?.nextCursor) return;
    try {
      const next = await usageApi.balance(workspaceId, allocations.nextCursor, mode);
      setAllocations({ items: [...allocations.items, ...next.allocations], nextCursor: next.nextCursor });
      setMoreError(undefined);
    } catch (err) {
      setMoreError(err);
    }
  }
  return html`<section aria-labelledby="allocations-heading">
    <h2 id="allocations-heading">Allocations</h2>
    ${allocations && allocations.items.length === 0 ? html`<p>No credits left in this workspace.</p>` : null}
    ${allocations && allocations.items.length > 0
      ? html`<table class="allocations">
          <caption>Credit allocations with credits left, oldest first</caption>
          <thead><tr><th scope="col">Remaining</th><th scope="col">Expires</th><th scope="col">Provenance</th><th scope="col">Granted</th></tr></thead>
          <tbody>
            ${allocations.items.map(
              (a) => html`<tr key=${a.id} data-allocation-id=${a.id}>
                <th scope="row">${formatMillicents(a.remainingMillicents)}</th>
                <td>${a.expiresAt ? formatTime(a.expiresAt) : 'never'}</td>
                <td>${a.provenance}</td>
                <td>${formatTime(a.createdAt)}</td>
              </tr>`,
            )}
          </tbody>
        </table>`
      : null}
    <${ErrorNotice} error=${moreError} />
    ${allocations?.nextCursor ? html`<p class="pager"><button type="button" onClick=${moreAllocations}>More allocations</button></p>` : null}
  </section>`;
}

/** Pages back through a list by cursors: the current one and the buttons to move. */
function useCursorPages() {
  const [cursors, setCursors] = useState<string[]>([]);
  return {
    cursor: cursors[cursors.length - 1],
    page: cursors.length + 1,
    newer: cursors.length ? () => setCursors((c) => c.slice(0, -1)) : undefined,
    older: (next: string | null | undefined) => (next ? () => setCursors((c) => [...c, next]) : undefined),
  };
}

function LedgerSection({ workspaceId, mode, poke }: { workspaceId: string; mode: KeyMode; poke: number }) {
  const pages = useCursorPages();
  const ledger = useRead(() => usageApi.transactions(workspaceId, pages.cursor, mode), [workspaceId, mode, poke, pages.cursor]);
  const older = pages.older(ledger.data?.nextCursor);
  return html`<section aria-labelledby="ledger-heading">
    <h2 id="ledger-heading">Ledger</h2>
    <${Pending} what="the ledger" state=${ledger} />
    ${ledger.data && ledger.data.items.length === 0 ? html`<p>No ledger entries yet.</p>` : null}
    ${ledger.data && ledger.data.items.length > 0
      ? html`<table class="ledger">
          <caption>Ledger entries, newest first${pages.page > 1 ? ` (page ${pages.page})` : ''}</caption>
          <thead><tr><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Amount</th><th scope="col">Operation</th><th scope="col">Key</th><th scope="col">Job</th><th scope="col">Origin</th></tr></thead>
          <tbody>
            ${ledger.data.items.map(
              (e: LedgerEntry) => html`<tr key=${e.id} data-entry-id=${e.id} data-type=${e.type}>
                <th scope="row">${formatTime(e.createdAt)}</th>
                <td>${e.type}</td>
                <td class=${e.amountMillicents < 0 ? 'amount debit' : 'amount credit'}>${formatMillicents(e.amountMillicents)}</td>
                <td>${e.operationId ?? '—'}</td>
                <td>${e.keyId ? html`<code>${e.keyId}</code>` : '—'}</td>
                <td>${e.jobId ? html`<a href=${`/console/jobs?job=${encodeURIComponent(e.jobId)}`}>${e.jobId.slice(0, 8)}…<span class="visually-hidden"> (job ${e.jobId})</span></a>` : '—'}</td>
                <td>${e.executionOrigin ?? '—'}</td>
              </tr>`,
            )}
          </tbody>
        </table>`
      : null}
    <p class="pager">
      ${pages.newer ? html`<button type="button" onClick=${pages.newer}>Newer entries</button>` : null}
      ${older ? html`<button type="button" onClick=${older}>Older entries</button>` : null}
    </p>
  </section>`;
}

function NoticesSection({ workspaceId, poke }: { workspaceId: string; poke: number }) {
  const pages = useCursorPages();
  const notices = useRead(() => usageApi.notifications(workspaceId, pages.cursor), [workspaceId, poke, pages.cursor]);
  const older = pages.older(notices.data?.nextCursor);
  return html`<section aria-labelledby="notices-heading">
    <h2 id="notices-heading">Alerts and notifications</h2>
    <p class="hint">Budget thresholds, low credits, credits and keys about to expire, suspended keys, failing webhooks and refused provider keys; webhooks can receive the alerts as events.</p>
    <${Pending} what="the notifications" state=${notices} />
    ${notices.data && notices.data.items.length === 0 ? html`<p>No alerts or notifications.</p>` : null}
    ${notices.data && notices.data.items.length > 0
      ? html`<table class="notifications">
          <caption>Alerts and notifications, newest first</caption>
          <thead><tr><th scope="col">Time</th><th scope="col">Kind</th><th scope="col">Message</th></tr></thead>
          <tbody>
            ${notices.data.items.map(
              (n: Notification) => html`<tr key=${n.id} data-kind=${n.kind}>
                <th scope="row">${formatTime(n.createdAt)}</th>
                <td><code>${n.kind}</code></td>
                <td>${n.message}</td>
              </tr>`,
            )}
          </tbody>
        </table>`
      : null}
    <p class="pager">
      ${pages.newer ? html`<button type="button" onClick=${pages.newer}>Newer notifications</button>` : null}
      ${older ? html`<button type="button" onClick=${older}>Older notifications</button>` : null}
    </p>
  </section>`;
}
