// The Grafana dashboard for planwarden, built from a short list of panels so that every
// query is written once, filtered by the namespace planwarden runs in, and checked by
// test/unit/manifests/observability.test.ts against the metrics the code registers.
// `npx tsx scripts/gen-dashboard.ts` writes manifests/observability/grafana-dashboard.json.

export const DASHBOARD_FILE = 'manifests/observability/grafana-dashboard.json';

interface PanelSpec {
  title: string;
  description: string;
  /** PromQL with `{NS}` where the namespace matcher goes (inside braces, or as a selector). */
  queries: { expr: string; legend: string }[];
  unit: string;
  kind?: 'timeseries' | 'stat';
}

const ROWS: { title: string; panels: PanelSpec[] }[] = [
  {
    title: 'Admission webhook',
    panels: [
      {
        title: 'Admission reviews by verdict',
        description: 'AdmissionReviews answered per second; error is a webhook.internal-error denial.',
        queries: [
          { expr: 'sum by (webhook, verdict) (rate(planwarden_admission_requests_total{NS}[5m]))', legend: '{{webhook}} {{verdict}}' },
        ],
        unit: 'reqps',
      },
      {
        title: 'Admission latency p99',
        description: 'Decoded review to encoded answer, lookups included. The apiserver gives a webhook 10 s.',
        queries: [
          {
            expr: 'histogram_quantile(0.99, sum by (le, webhook) (rate(planwarden_admission_duration_seconds_bucket{NS}[5m])))',
            legend: '{{webhook}}',
          },
        ],
        unit: 's',
      },
      {
        title: 'Denials',
        description: 'Writes refused per second, by webhook: a person or a sync was told why.',
        queries: [
          {
            expr: 'sum by (webhook, operation) (rate(planwarden_admission_requests_total{NS, verdict="denied"}[5m]))',
            legend: '{{webhook}} {{operation}}',
          },
        ],
        unit: 'reqps',
      },
      {
        title: 'Unusable requests',
        description: 'Bodies that never reached a rule (not JSON, no uid, too large …): a misconfigured caller.',
        queries: [{ expr: 'sum by (reason) (rate(planwarden_admission_bad_requests_total{NS}[5m]))', legend: '{{reason}}' }],
        unit: 'reqps',
      },
    ],
  },
  {
    title: 'Controller',
    panels: [
      {
        title: 'Leaders',
        description: 'Replicas holding the leader Lease: exactly 1 when healthy.',
        queries: [{ expr: 'sum(planwarden_leader{NS})', legend: 'leaders' }],
        unit: 'none',
        kind: 'stat',
      },
      {
        title: 'Plan runs finished',
        description: 'Plan runs reaching a terminal state in the last hour, by plan and result.',
        queries: [
          { expr: 'sum by (plan, result) (increase(planwarden_plan_duration_seconds_count{NS}[1h]))', legend: '{{plan}} {{result}}' },
        ],
        unit: 'short',
      },
      {
        title: 'Plan duration p90',
        description: 'Start to terminal state of a plan run.',
        queries: [
          {
            expr: 'histogram_quantile(0.9, sum by (le, plan) (rate(planwarden_plan_duration_seconds_bucket{NS}[30m])))',
            legend: '{{plan}}',
          },
        ],
        unit: 's',
      },
      {
        title: 'Step retries',
        description: 'Steps that failed transiently and wait for another attempt.',
        queries: [{ expr: 'sum by (plan) (rate(planwarden_step_retries_total{NS}[5m]))', legend: '{{plan}}' }],
        unit: 'ops',
      },
      {
        title: 'Maintenance and schedules',
        description:
          "Requests held by a pause or outside every window (the leader's view), and schedule ticks by outcome in the last hour.",
        queries: [
          { expr: 'max by (reason) (planwarden_held_requests{NS})', legend: 'held {{reason}}' },
          { expr: 'sum by (outcome) (increase(planwarden_schedule_ticks_total{NS}[1h]))', legend: 'ticks {{outcome}}' },
        ],
        unit: 'short',
      },
      {
        title: 'Work queue',
        description: 'Keys waiting, and reconciles re-queued with backoff after an error.',
        queries: [
          { expr: 'sum by (name) (planwarden_workqueue_depth{NS})', legend: 'waiting {{name}}' },
          { expr: 'sum by (name) (rate(planwarden_workqueue_retries_total{NS}[5m]))', legend: 'retries/s {{name}}' },
        ],
        unit: 'short',
      },
      {
        title: 'Reconcile p99',
        description: 'One reconcile of an Instance or UpdatePlan.',
        queries: [
          {
            expr: 'histogram_quantile(0.99, sum by (le, name) (rate(planwarden_reconcile_duration_seconds_bucket{NS}[5m])))',
            legend: '{{name}}',
          },
        ],
        unit: 's',
      },
      {
        title: 'Kubernetes API requests',
        description:
          'Requests the controller makes, by resource and status code. Idle, only the leader Lease is renewed (PUT leases, every 2 s).',
        queries: [
          {
            expr: 'sum by (resource, method, code) (rate(planwarden_api_requests_total{NS}[5m]))',
            legend: '{{method}} {{resource}} {{code}}',
          },
        ],
        unit: 'reqps',
      },
      {
        title: 'Informer restarts',
        description: 'List/watch failures restarted with backoff in the last hour.',
        queries: [{ expr: 'sum by (resource) (increase(planwarden_informer_restarts_total{NS}[1h]))', legend: '{{resource}}' }],
        unit: 'short',
      },
    ],
  },
];

const NAMESPACE_MATCHER = 'namespace=~"$namespace"';

/** `expr` with its `{NS}` placeholder turned into the namespace matcher. */
export function withNamespace(expr: string): string {
  return expr.replaceAll('{NS}', `{${NAMESPACE_MATCHER}}`).replaceAll('{NS, ', `{${NAMESPACE_MATCHER}, `);
}

/** Every PromQL expression of the dashboard, as Grafana will run it. */
export function dashboardExpressions(): string[] {
  return ROWS.flatMap((row) => row.panels.flatMap((p) => p.queries.map((q) => withNamespace(q.expr))));
}

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/** The dashboard model (Grafana schemaVersion 39). */
export function buildDashboard(): Record<string, unknown> {
  const panels: Record<string, unknown>[] = [];
  let id = 1;
  let y = 0;
  for (const row of ROWS) {
    panels.push({ id: id++, type: 'row', title: row.title, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] });
    y += 1;
    row.panels.forEach((p, i) => {
      const kind = p.kind ?? 'timeseries';
      panels.push({
        id: id++,
        type: kind,
        title: p.title,
        description: p.description,
        datasource: DATASOURCE,
        gridPos: { h: 8, w: 12, x: (i % 2) * 12, y: y + Math.floor(i / 2) * 8 },
        fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
        options: kind === 'stat' ? { reduceOptions: { calcs: ['lastNotNull'] } } : { legend: { displayMode: 'list', placement: 'bottom' } },
        targets: p.queries.map((q, k) => ({
          refId: String.fromCharCode(65 + k),
          datasource: DATASOURCE,
          expr: withNamespace(q.expr),
          legendFormat: q.legend,
        })),
      });
    });
    y += Math.ceil(row.panels.length / 2) * 8;
  }
  return {
    title: 'planwarden',
    uid: 'planwarden',
    description: 'Admission webhook and plan controller of planwarden (docs/operations.md lists every metric).',
    tags: ['planwarden', 'kubernetes'],
    schemaVersion: 39,
    version: 1,
    editable: true,
    time: { from: 'now-6h', to: 'now' },
    refresh: '30s',
    templating: {
      list: [
        { name: 'datasource', label: 'Prometheus', type: 'datasource', query: 'prometheus', current: {} },
        {
          name: 'namespace',
          label: 'namespace',
          type: 'query',
          datasource: DATASOURCE,
          query: { query: 'label_values(planwarden_admission_requests_total, namespace)', refId: 'namespace' },
          definition: 'label_values(planwarden_admission_requests_total, namespace)',
          current: { text: 'planwarden-system', value: 'planwarden-system' },
          includeAll: false,
          refresh: 2,
        },
      ],
    },
    panels,
  };
}

/** The file's text: stable key order, two-space indent, newline at the end. */
export function renderDashboard(): string {
  return `${JSON.stringify(buildDashboard(), null, 2)}\n`;
}
