/**
 * A reader of the Prometheus text format (version 0.0.4, what prom-client writes): samples with
 * their labels and values, and each metric family's HELP and TYPE. Strict enough to fail on a
 * line that is not a comment or a sample.
 */
import assert from 'node:assert/strict';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  help: Map<string, string>;
  type: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const n = Number(text);
  assert.ok(!Number.isNaN(n), `sample value ${text}`);
  return n;
}

function parseLabels(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  if (!text) return labels;
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const m = LABEL.exec(text);
    assert.ok(m, `labels {${text}}`);
    labels[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
  }
  return labels;
}

export function parseExposition(text: string): Exposition {
  const out: Exposition = { samples: [], help: new Map(), type: new Map() };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('# HELP ')) {
      const [name, ...rest] = line.slice(7).split(' ');
      out.help.set(name!, rest.join(' '));
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ');
      out.type.set(name!, type!);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    out.samples.push({ name: m[1]!, labels: parseLabels(m[2]), value: parseValue(m[3]!) });
  }
  return out;
}

/** The samples of `name` whose labels include `labels`. */
export function samples(x: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return x.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The value of the one sample of `name` with exactly these labels; 0 when there is none (a counter not incremented yet). */
export function value(x: Exposition, name: string, labels: Record<string, string> = {}): number {
  const found = x.samples.filter((s) => s.name === name && Object.keys(s.labels).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `${name}${JSON.stringify(labels)}: ${found.length} samples`);
  return found[0]?.value ?? 0;
}
