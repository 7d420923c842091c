// The Grafana dashboard and the alert rules ask only for metrics and labels the webhook and
// the controller really register, and the committed dashboard is what its builder makes.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import { createControllerMetrics } from '../../../controller/metrics.ts';
import { createWebhookMetrics } from '../../../webhook/metrics.ts';
import { recordControllerSamples } from '../../support/metricSamples.ts';
import { DASHBOARD_FILE, dashboardExpressions, renderDashboard } from '../../../scripts/dashboard.ts';

/** Metric name → label names, read from registries after every recorder was used once. */
async function registered(): Promise<Map<string, Set<string>>> {
  const c = createControllerMetrics({ defaultMetrics: false });
  recordControllerSamples(c);
  const w = createWebhookMetrics({ defaultMetrics: false });
  w.observeAdmission({ webhook: '/validate/instances', operation: 'UPDATE', verdict: 'allowed' }, 0.01);
  w.countBadRequest('/validate/instances', 'not-json');
  const out = new Map<string, Set<string>>();
  for (const registry of [c.registry, w.registry]) {
    for (const metric of await registry.getMetricsAsJSON()) {
      for (const v of metric.values) {
        const name = (v as { metricName?: string }).metricName ?? metric.name;
        const labels = out.get(name) ?? new Set<string>();
        for (const l of Object.keys(v.labels)) labels.add(l);
        out.set(name, labels);
      }
    }
  }
  return out;
}

/** Labels every scraped series carries besides the metric's own (Kubernetes service discovery). */
const SCRAPE_LABELS = ['namespace', 'pod', 'job', 'instance'];

function metricsIn(expr: string): string[] {
  return [...expr.matchAll(/\b(planwarden_[a-z_]+)/g)].map((m) => m[1]!);
}

function groupingLabels(expr: string): string[] {
  return [...expr.matchAll(/\bby \(([^)]*)\)/g)].flatMap((m) => m[1]!.split(',').map((l) => l.trim()));
}

function matcherLabels(expr: string): string[] {
  return [...expr.matchAll(/planwarden_[a-z_]+\{([^}]*)\}/g)].flatMap((m) =>
    [...m[1]!.matchAll(/([a-z_]+)\s*(?:=~|!=|=)/g)].map((x) => x[1]!),
  );
}

const rules = parse(readFileSync('manifests/observability/prometheus-rules.yaml', 'utf8')) as {
  spec: { groups: { rules: { alert: string; expr: string }[] }[] };
};
const ALERTS = rules.spec.groups.flatMap((g) => g.rules);

describe('observability manifests', () => {
  let metrics: Map<string, Set<string>>;
  before(async () => {
    metrics = await registered();
  });

  it('the committed dashboard is what scripts/dashboard.ts builds (npx tsx scripts/gen-dashboard.ts)', () => {
    expect(readFileSync(DASHBOARD_FILE, 'utf8')).to.equal(renderDashboard());
  });

  const cases = [
    ...dashboardExpressions().map((expr) => ({ where: 'dashboard', expr })),
    ...ALERTS.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })),
  ];
  it('has queries and alerts to check', () => {
    expect(dashboardExpressions()).to.have.length.above(10);
    expect(ALERTS).to.have.length.above(4);
  });
  for (const { where, expr } of cases) {
    it(`${where}: ${expr}`, () => {
      const names = metricsIn(expr);
      expect(names, 'names a planwarden metric').to.not.be.empty;
      for (const name of names) {
        const labels = metrics.get(name);
        expect(labels, `${name} is registered`).to.not.equal(undefined);
        const known = new Set([...labels!, ...SCRAPE_LABELS]);
        for (const label of [...groupingLabels(expr), ...matcherLabels(expr)]) {
          expect(known.has(label), `label ${label} of ${name}`).to.equal(true);
        }
      }
    });
  }
});
