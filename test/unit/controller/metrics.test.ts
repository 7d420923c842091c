// The controller's metrics: the names and labels dashboards and alerts rely on.
import { expect } from 'chai';
import { createControllerMetrics } from '../../../controller/metrics.ts';
import { recordControllerSamples } from '../../support/metricSamples.ts';

describe('controller/metrics', () => {
  it('exposes every controller metric under its stable name and labels', async () => {
    const m = createControllerMetrics({ defaultMetrics: false });
    recordControllerSamples(m);
    const text = await m.registry.metrics();
    for (const line of [
      'planwarden_informer_restarts_total{resource="instances"} 1',
      'planwarden_workqueue_depth{name="instances"} 4',
      'planwarden_reconcile_duration_seconds_count{name="instances",result="success"} 1',
      'planwarden_workqueue_retries_total{name="instances"} 1',
      'planwarden_plan_duration_seconds_count{plan="deploy",result="COMPLETE"} 1',
      'planwarden_step_duration_seconds_count{plan="deploy",result="FATAL_ERROR"} 1',
      'planwarden_step_retries_total{plan="deploy"} 1',
      'planwarden_events_dropped_total 1',
      'planwarden_leader{identity="pod-a_1234"} 1',
      'planwarden_api_requests_total{method="PATCH",code="200",resource="instances/status"} 1',
      'planwarden_api_requests_total{method="GET",code="error",resource="unknown"} 1',
    ]) {
      expect(text).to.include(line);
    }
  });

  it('keeps registries apart, so two recorders never collide', async () => {
    const a = createControllerMetrics({ defaultMetrics: false });
    const b = createControllerMetrics({ defaultMetrics: false });
    a.setLeader('x', true);
    expect(await b.registry.metrics()).not.to.include('planwarden_leader{identity="x"}');
  });
});
