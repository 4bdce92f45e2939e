/**
 * The console's charts: bar charts (stacked by series) and budget meters drawn as inline SVG by
 * these few lines instead of a chart library (no bytes beyond these, and nothing that sets a
 * `style` attribute, which the Content-Security-Policy's `style-src 'self'` forbids: positions and
 * sizes are SVG attributes, colours CSS classes of styles.css). Each chart is an `img` with a
 * summary as its accessible name, and its data as a table (in a disclosure) for whoever cannot
 * see it.
 */
import { html } from './html.js';

export interface Series {
  id: string;
  label: string;
}

export interface Bar {
  /** The bucket's full name (table rows, tooltips), e.g. "2026-11-18 12:04 UTC". */
  label: string;
  /** A short axis label, e.g. "12:04". */
  tick: string;
  /** One value per series, in the order of `series`. */
  values: number[];
}

const W = 720;
const H = 220;
const LEFT = 64;
const RIGHT = 8;
const TOP = 10;
const BOTTOM = 26;
/** Colour classes (.series-0 …) in styles.css. */
const PALETTE = 8;

/** A round maximum for the axis: 1, 2 or 5 times a power of ten, at least `max`. */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

const sum = (values: number[]) => values.reduce((t, v) => t + v, 0);

export interface BarChartProps {
  /** Identifies the chart in the page (data-chart), for tests and links. */
  id: string;
  title: string;
  /** The chart's text alternative: what it shows, in one or two sentences. */
  summary: string;
  series: Series[];
  bars: Bar[];
  format: (value: number) => string;
  /** The table's value heading (e.g. "Points"). */
  unit: string;
}

export function BarChart({ id, title, summary, series, bars, format, unit }: BarChartProps) {
  const top = niceMax(Math.max(0, ...bars.map((b) => sum(b.values))));
  const plotW = W - LEFT - RIGHT;
  const plotH = H - TOP - BOTTOM;
  const slot = bars.length > 0 ? plotW / bars.length : plotW;
  const barW = Math.max(1, slot * 0.8);
  const y = (v: number) => TOP + plotH - (v / top) * plotH;
  const every = Math.max(1, Math.ceil(bars.length / 12));
  const titleId = `chart-${id}-title`;
  return html`<figure class="chart" data-chart=${id}>
    <figcaption id=${titleId}>${title}</figcaption>
    <svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${`${title}. ${summary}`} focusable="false">
      ${[0, top / 2, top].map(
        (v) => html`<g key=${v} class="grid">
          <line x1=${LEFT} x2=${W - RIGHT} y1=${y(v)} y2=${y(v)} />
          <text x=${LEFT - 6} y=${y(v) + 4} text-anchor="end">${format(v)}</text>
        </g>`,
      )}
      ${bars.map((b, i) => {
        const x = LEFT + i * slot + (slot - barW) / 2;
        let base = 0;
        return html`<g key=${b.label} class="bar" data-total=${sum(b.values)}>
          <title>${b.label}: ${format(sum(b.values))}</title>
          ${b.values.map((v, s) => {
            if (v <= 0) return null;
            const rect = html`<rect key=${s} class=${`series-${s % PALETTE}`} x=${x} width=${barW} y=${y(base + v)} height=${Math.max(0.5, y(base) - y(base + v))} />`;
            base += v;
            return rect;
          })}
          ${i % every === 0 ? html`<text class="tick" x=${x + barW / 2} y=${H - 8} text-anchor="middle">${b.tick}</text>` : null}
        </g>`;
      })}
    </svg>
    ${series.length > 1
      ? html`<ul class="legend" aria-label=${`Legend of ${title}`}>
          ${series.map(
            (s, i) => html`<li key=${s.id}><svg class="swatch" viewBox="0 0 10 10" aria-hidden="true" focusable="false"><rect class=${`series-${i % PALETTE}`} width="10" height="10" /></svg>${s.label}</li>`,
          )}
        </ul>`
      : null}
    <details>
      <summary>Table of ${title.charAt(0).toLowerCase()}${title.slice(1)}</summary>
      <table class="chart-data">
        <caption>${title}</caption>
        <thead>
          <tr>
            <th scope="col">Period</th>
            ${series.length > 1 ? series.map((s) => html`<th key=${s.id} scope="col">${s.label}</th>`) : null}
            <th scope="col">${series.length > 1 ? `Total ${unit.toLowerCase()}` : unit}</th>
          </tr>
        </thead>
        <tbody>
          ${bars.map(
            (b) => html`<tr key=${b.label}>
              <th scope="row">${b.label}</th>
              ${series.length > 1 ? b.values.map((v, s) => html`<td key=${s}>${format(v)}</td>`) : null}
              <td>${format(sum(b.values))}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </details>
  </figure>`;
}

/**
 * A budget against its ceiling: spent, then reserved, on a bar as long as the ceiling (what goes
 * beyond it is clipped at the end, and the label says so).
 */
export function BudgetMeter({ label, spent, reserved, limit }: { label: string; spent: number; reserved: number; limit: number }) {
  const w = 200;
  const scale = (v: number) => (limit > 0 ? Math.min(w, (v / limit) * w) : 0);
  const spentW = scale(spent);
  const heldW = Math.max(0, scale(spent + reserved) - spentW);
  const percent = limit > 0 ? Math.round(((spent + reserved) / limit) * 100) : 0;
  return html`<span class="meter">
    <svg viewBox=${`0 0 ${w} 14`} class=${percent >= 100 ? 'budget over' : percent >= 80 ? 'budget high' : 'budget'} role="img" aria-label=${`${label}: ${percent} % of the ceiling used or reserved`} focusable="false">
      <rect class="track" x="0" y="0" width=${w} height="14" />
      ${spentW > 0 ? html`<rect class="spent" x="0" y="0" width=${spentW} height="14" />` : null}
      ${heldW > 0 ? html`<rect class="held" x=${spentW} y="0" width=${heldW} height="14" />` : null}
    </svg>
    <span class="percent">${percent} %</span>
  </span>`;
}
