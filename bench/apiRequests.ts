// What the API server did during a phase of the benchmark, from its own /metrics: requests by
// verb and resource (apiserver_request_total) and admission webhook calls by webhook
// (apiserver_admission_webhook_admission_duration_seconds_count), before and after, so that
// a figure can say what one Instance (or one run) costs the API server, write by write.
// These counters cover every client of the API server, so each table lists Leases and kwok's
// node heartbeats apart (the steady background) and everything else as it came.
import { request as httpsRequest } from 'node:https';
import { adminTls, type ClusterState } from '../test/controlplane/cluster.ts';
import { parseMetric } from './kube.ts';

/** Counter samples keyed by a readable label tuple. */
export interface ApiCounts {
  /** "VERB group/resource[/subresource]" → requests (WATCH counted when a watch ends or starts, as the apiserver does). */
  requests: Map<string, number>;
  /** "webhook-name TYPE OPERATION" (TYPE validating/admit) → calls the API server made to it. */
  webhookCalls: Map<string, number>;
  /** The webhook's own count of admission requests, "path OPERATION" (planwarden_admission_requests_total). */
  webhookSeen: Map<string, number>;
}

/** The body of a GET on the API server with the admin credentials (e.g. `/metrics`). */
export function apiserverText(cluster: Pick<ClusterState, 'server' | 'kubeconfig'>, path: string): Promise<string> {
  const tls = adminTls(cluster.kubeconfig);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${cluster.server}${path}`, { ...tls, timeout: 30_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(body) : reject(new Error(`GET ${path}: ${res.statusCode} ${body.slice(0, 200)}`)),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer within 30 s`)));
    req.on('error', reject);
    req.end();
  });
}

export const resourceKey = (labels: Record<string, string>) =>
  `${labels.group ? `${labels.group}/` : ''}${labels.resource ?? '?'}${labels.subresource ? `/${labels.subresource}` : ''}`;

function add(m: Map<string, number>, key: string, v: number): void {
  m.set(key, (m.get(key) ?? 0) + v);
}

/** One scrape of the API server's counters and (when given) the webhook's own. */
export async function scrapeApiCounts(
  cluster: Pick<ClusterState, 'server' | 'kubeconfig'>,
  webhookMetrics?: () => Promise<string>,
): Promise<ApiCounts> {
  return apiCountsFromMetrics(await apiserverText(cluster, '/metrics'), webhookMetrics ? await webhookMetrics() : undefined);
}

/** The counters of an API server's /metrics text and of the webhook's. */
export function apiCountsFromMetrics(apiserver: string, webhook?: string): ApiCounts {
  const requests = new Map<string, number>();
  for (const s of parseMetric(apiserver, 'apiserver_request_total'))
    add(requests, `${s.labels.verb ?? '?'} ${resourceKey(s.labels)}`, s.value);
  const webhookCalls = new Map<string, number>();
  for (const s of parseMetric(apiserver, 'apiserver_admission_webhook_admission_duration_seconds_count')) {
    add(webhookCalls, `${s.labels.name ?? '?'} ${s.labels.type ?? '?'} ${s.labels.operation ?? '?'}`, s.value);
  }
  const webhookSeen = new Map<string, number>();
  if (webhook !== undefined) {
    for (const s of parseMetric(webhook, 'planwarden_admission_requests_total'))
      add(webhookSeen, `${s.labels.webhook ?? '?'} ${s.labels.operation ?? '?'}`, s.value);
    for (const s of parseMetric(webhook, 'planwarden_admission_operatorversion_reads_total'))
      add(webhookSeen, `OperatorVersion-read-from ${s.labels.source ?? '?'}`, s.value);
  }
  return { requests, webhookCalls, webhookSeen };
}

function diff(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
}

/** What changed between two scrapes. */
export interface ApiCountsDelta {
  requests: Record<string, number>;
  webhookCalls: Record<string, number>;
  webhookSeen: Record<string, number>;
}

export function apiCountsDelta(before: ApiCounts, after: ApiCounts): ApiCountsDelta {
  return {
    requests: diff(before.requests, after.requests),
    webhookCalls: diff(before.webhookCalls, after.webhookCalls),
    webhookSeen: diff(before.webhookSeen, after.webhookSeen),
  };
}

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY', 'CREATE', 'UPDATE']);
/**
 * The control plane's own steady background, whatever planwarden does: Leases (leader
 * election of every component, planwarden's included) and kwok's node heartbeats. Everything
 * else goes into the tables, so that a request planwarden causes is never hidden (what other
 * components do meanwhile shows as small rows).
 */
export const isLease = (resource: string) => resource === 'coordination.k8s.io/leases';
export const isBackground = (resource: string) => isLease(resource) || resource === 'nodes' || resource.startsWith('nodes/');

/** One row of the per-Instance table. */
export interface PerInstanceRow {
  verb: string;
  resource: string;
  total: number;
  perInstance: number;
}

/** The figure: requests and webhook calls per Instance (or per run) over a phase. */
export interface ApiCostTable {
  units: number;
  unit: string;
  seconds: number;
  /** Every request but the background (isBackground), by verb and resource, per unit. */
  rows: PerInstanceRow[];
  /** The background the API server served meanwhile (Leases, node heartbeats), as totals. */
  background: Record<string, number>;
  /** API server → webhook calls per unit, by webhook name, type and operation. */
  webhookCalls: PerInstanceRow[];
  /** Writes (POST/PUT/PATCH/DELETE) to planwarden.dev resources, per unit, and webhook calls per such write. */
  writesPerUnit: number;
  webhookCallsPerWrite: number;
  /** The webhook's own count (planwarden_admission_requests_total), per unit, for comparison. */
  webhookSeenPerUnit: Record<string, number>;
  raw: ApiCountsDelta;
}

const per = (v: number, n: number) => Math.round((v / n) * 1000) / 1000;

export function apiCostTable(delta: ApiCountsDelta, units: number, unit: string, seconds: number): ApiCostTable {
  const rows: PerInstanceRow[] = [];
  const background: Record<string, number> = {};
  let writes = 0;
  for (const [key, total] of Object.entries(delta.requests)) {
    const [verb, resource] = key.split(' ') as [string, string];
    if (isBackground(resource)) {
      background[key] = total;
      continue;
    }
    rows.push({ verb, resource, total, perInstance: per(total, units) });
    if (WRITE_VERBS.has(verb) && resource.startsWith('planwarden.dev/')) writes += total;
  }
  rows.sort((a, b) => b.total - a.total || a.resource.localeCompare(b.resource) || a.verb.localeCompare(b.verb));
  const webhookCalls = Object.entries(delta.webhookCalls)
    .map(([key, total]) => {
      const [name, type, operation] = key.split(' ') as [string, string, string];
      return { verb: `${type} ${operation}`, resource: name, total, perInstance: per(total, units) };
    })
    .sort((a, b) => b.total - a.total || a.resource.localeCompare(b.resource));
  const totalCalls = webhookCalls.reduce((s, r) => s + r.total, 0);
  return {
    units,
    unit,
    seconds: Math.round(seconds * 10) / 10,
    rows,
    background,
    webhookCalls,
    writesPerUnit: per(writes, units),
    webhookCallsPerWrite: writes === 0 ? 0 : Math.round((totalCalls / writes) * 1000) / 1000,
    webhookSeenPerUnit: Object.fromEntries(Object.entries(delta.webhookSeen).map(([k, v]) => [k, per(v, units)])),
    raw: delta,
  };
}

/** The table as printed: verb, resource/subresource, per unit, total; then the webhook calls. */
export function renderApiCostTable(title: string, t: ApiCostTable): string {
  const lines: string[] = [`${title} (${t.units} ${t.unit}s, ${t.seconds} s; per ${t.unit}):`];
  const width = Math.max(
    28,
    ...t.rows.filter((r) => r.perInstance >= 0.01).map((r) => r.resource.length),
    ...t.webhookCalls.map((r) => r.resource.length),
  );
  lines.push(`  ${'verb'.padEnd(20)}${'resource[/subresource]'.padEnd(width + 2)}${`per ${t.unit}`.padStart(14)}${'total'.padStart(9)}`);
  // Rows under 0.01 per unit (watch renewals, discovery of the control plane's components) are summed in one line.
  const rare = t.rows.filter((r) => r.perInstance < 0.01);
  for (const r of t.rows) {
    if (r.perInstance >= 0.01)
      lines.push(
        `  ${r.verb.padEnd(20)}${r.resource.padEnd(width + 2)}${r.perInstance.toFixed(3).padStart(14)}${String(r.total).padStart(9)}`,
      );
  }
  if (rare.length)
    lines.push(
      `  ${`${rare.length} more kinds under 0.01 per ${t.unit}: ${rare.reduce((sum, r) => sum + r.total, 0)} requests in all (results.json has them)`}`,
    );
  lines.push(`  admission webhook calls by the API server:`);
  for (const r of t.webhookCalls)
    lines.push(
      `  ${r.verb.padEnd(20)}${r.resource.padEnd(width + 2)}${r.perInstance.toFixed(3).padStart(14)}${String(r.total).padStart(9)}`,
    );
  lines.push(`  writes to planwarden.dev per ${t.unit}: ${t.writesPerUnit}; webhook calls per write: ${t.webhookCallsPerWrite}`);
  const seen = Object.entries(t.webhookSeenPerUnit);
  if (seen.length) lines.push(`  the webhook's own count per ${t.unit}: ${seen.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  const bg = Object.entries(t.background).sort((a, b) => b[1] - a[1]);
  if (bg.length) lines.push(`  meanwhile, Leases and node heartbeats (totals): ${bg.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  return lines.join('\n');
}
