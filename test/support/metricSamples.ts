// Uses every recorder of the controller's metrics once, with fixed values, so that tests can
// read names, labels and values back from the registry.
import type { ControllerMetrics } from '../../controller/metrics.ts';

export function recordControllerSamples(m: ControllerMetrics): void {
  m.countInformerRestart('instances');
  m.trackQueueDepth('instances', () => 4);
  m.observeReconcile('instances', 'success', 0.02);
  m.countQueueRetry('instances');
  m.observePlan('deploy', 'COMPLETE', 42);
  m.observeStep('deploy', 'FATAL_ERROR', 3);
  m.countStepRetry('deploy');
  m.countDroppedEvent();
  m.setLeader('pod-a_1234', true);
  m.countApiRequest('PATCH', 200, 'instances/status');
  m.countApiRequest('GET', 'error');
}
