// What holds a heap: a V8 heap snapshot (.heapsnapshot, e.g. from PLANWARDEN_BENCH_HEAP_SNAPSHOT)
// summed by node type and constructor/name — self sizes and counts, the largest first — the
// summary issue 40 asks of the controller's memory figure.
// Usage: npx tsx bench/heapSummary.ts FILE.heapsnapshot [TOP]
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export interface HeapRow {
  type: string;
  name: string;
  count: number;
  selfBytes: number;
}

/** Self sizes by (type, name); strings, code and arrays are summed by type alone. */
export function summarise(s: Snapshot): HeapRow[] {
  const fields = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const rows = new Map<string, HeapRow>();
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + typeAt]!] ?? '?';
    const byName = type === 'object' || type === 'closure' || type === 'native';
    const name = byName ? (s.strings[s.nodes[i + nameAt]!] ?? '?') : `(${type})`;
    const key = `${type}\u0000${name}`;
    const row = rows.get(key) ?? { type, name, count: 0, selfBytes: 0 };
    row.count++;
    row.selfBytes += s.nodes[i + sizeAt]!;
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => b.selfBytes - a.selfBytes);
}

if (process.argv[1]?.endsWith('heapSummary.ts')) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: npx tsx bench/heapSummary.ts FILE.heapsnapshot [TOP]');
  const rows = summarise(JSON.parse(readFileSync(file, 'utf8')) as Snapshot);
  const total = rows.reduce((a, r) => a + r.selfBytes, 0);
  console.log(`${(total / 2 ** 20).toFixed(1)} MiB in ${rows.reduce((a, r) => a + r.count, 0)} nodes`);
  for (const r of rows.slice(0, Number(process.argv[3] ?? 30))) {
    console.log(
      `${(r.selfBytes / 2 ** 20).toFixed(2).padStart(8)} MiB ${((100 * r.selfBytes) / total).toFixed(1).padStart(5)}% ${String(r.count).padStart(9)}  ${r.type} ${r.name}`,
    );
  }
}
