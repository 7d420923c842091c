// Small statistics and formatting helpers of the benchmark.

/** The q-quantile (0..1) of `values`, linearly interpolated between closest ranks. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export const median = (values: readonly number[]) => quantile(values, 0.5);

/** Rounds to `digits` decimals; NaN and infinities become null (JSON has no NaN). */
export function round(value: number, digits = 2): number | null {
  if (!Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Milliseconds since `started` (a performance.now() value). */
export const elapsedMs = (started: number) => performance.now() - started;

/** One row of the printed table. */
export interface Row {
  figure: string;
  value: number | null;
  unit: string;
  baseline?: number | null;
  baselineLabel?: string;
  ratio?: number | null;
}

function fmt(v: number | null | undefined, unit = ''): string {
  if (v === null || v === undefined) return '—';
  const abs = Math.abs(v);
  const text = abs >= 1000 ? v.toFixed(0) : abs >= 100 ? v.toFixed(1) : abs >= 10 ? v.toFixed(2) : v.toFixed(3);
  return unit ? `${text} ${unit}` : text;
}

export function renderTable(rows: readonly Row[]): string {
  const cells = rows.map((r) => [
    r.figure,
    fmt(r.value, r.unit),
    r.baseline === undefined ? '' : `${fmt(r.baseline, r.unit)}${r.baselineLabel ? ` (${r.baselineLabel})` : ''}`,
    r.ratio === undefined ? '' : r.ratio === null ? '—' : `${r.ratio.toFixed(2)}×`,
  ]);
  const header = ['figure', 'value', 'baseline (same run)', 'ratio'];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: readonly string[]) => c.map((s, i) => (i === 0 || i === 2 ? s.padEnd(widths[i]!) : s.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}
