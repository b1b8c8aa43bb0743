/**
 * Prometheus text exposition format 0.0.4, written by hand: HELP/TYPE once per family, label values escaped, names
 * checked. Corral's own writer instead of prom-client because /metrics renders a snapshot built on a timer: the
 * whole body is assembled once per collection and every scrape sends the same bytes. prom-client's registry
 * model (gauges set from collect() callbacks at scrape time, re-serialised per request) is the per-scrape work
 * this design avoids, and its label bookkeeping costs more than string concatenation at 10,000 VMs.
 */

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type MetricType = 'gauge' | 'counter';

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
/** Label names starting with `__` are reserved for Prometheus itself. */
const LABEL_NAME = /^(?!__)[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A label value inside double quotes: backslash, double quote and line feed are the three escapes the format has. */
export function escapeLabelValue(value: string): string {
  return /[\\"\n]/.test(value) ? value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`)) : value;
}

/** HELP text: backslash and line feed are escaped (a double quote is literal there). */
export function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'));
}

/** Go's ParseFloat spellings for the special values; integers without a decimal tail. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** Label names already found valid (a handful of constants, checked once instead of once per VM). */
const checkedLabelNames = new Set<string>();

/**
 * `{a="x",b="y"}` for the given pairs, in the given order (so every row of a family reads the same way), or ''
 * for none. Throws on an invalid label name: that is a programming error, never data.
 */
export function labelText(pairs: readonly (readonly [string, string])[]): string {
  if (pairs.length === 0) return '';
  let out = '{';
  for (let i = 0; i < pairs.length; i++) {
    const [name, value] = pairs[i]!;
    if (!checkedLabelNames.has(name)) {
      if (!LABEL_NAME.test(name)) throw new Error(`invalid Prometheus label name ${JSON.stringify(name)}`);
      if (checkedLabelNames.size < 1000) checkedLabelNames.add(name);
    }
    out += `${i ? ',' : ''}${name}="${escapeLabelValue(value)}"`;
  }
  return `${out}}`;
}

/** Appends families and their samples; `text()` is the exposition. Each family name may appear once. */
export class ExpositionWriter {
  private readonly parts: string[] = [];
  private readonly families = new Set<string>();
  private current = '';

  family(name: string, type: MetricType, help: string): this {
    if (!METRIC_NAME.test(name)) throw new Error(`invalid Prometheus metric name ${JSON.stringify(name)}`);
    if (this.families.has(name)) throw new Error(`metric family ${name} written twice`);
    this.families.add(name);
    this.current = name;
    this.parts.push(`# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`);
    return this;
  }

  /** One sample of the current family; `labels` is labelText()'s output (callers reuse it across families). */
  sample(labels: string, value: number): this {
    if (!this.current) throw new Error('a sample needs a family first');
    this.parts.push(`${this.current}${labels} ${formatValue(value)}\n`);
    return this;
  }

  /** A sample line rendered earlier (cached across collections); it must belong to the current family. */
  line(text: string): this {
    if (!text.startsWith(this.current) || !text.endsWith('\n'))
      throw new Error(`a line of ${this.current || 'no family'} expected, got ${JSON.stringify(text.slice(0, 80))}`);
    this.parts.push(text);
    return this;
  }

  text(): string {
    return this.parts.join('');
  }
}
