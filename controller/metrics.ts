// Prometheus metrics of the controller, kept in a Registry of its own (as the webhook's are)
// so that tests and a shared process never collide on metric names. Every module takes the
// recorder as an optional dependency; without it nothing is recorded.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ReconcileResult } from '../shared/kube/queue.ts';

export type { ReconcileResult };

export interface ControllerMetrics {
  registry: Registry;
  /** An informer's list/watch failed and is being restarted. `resource` is e.g. "instances". */
  countInformerRestart(resource: string): void;
  /** Report `depth()` of the named queue on every scrape. */
  trackQueueDepth(queue: string, depth: () => number): void;
  observeReconcile(queue: string, result: ReconcileResult, seconds: number): void;
  /** A key re-queued with per-key backoff after a failed reconcile. */
  countQueueRetry(queue: string): void;
  /** A plan reached a terminal state; `result` is that state (COMPLETE, FATAL_ERROR, ABORTED). */
  observePlan(plan: string, result: string, seconds: number): void;
  /** A step reached a terminal state; `result` is that state. */
  observeStep(plan: string, result: string, seconds: number): void;
  /** A step failed transiently and will be attempted again. */
  countStepRetry(plan: string): void;
  /** An Event not written because the recorder's queue was full. */
  countDroppedEvent(): void;
  setLeader(identity: string, leading: boolean): void;
  /** One request to the Kubernetes API; `code` is the HTTP status, or "error" when none came back. */
  countApiRequest(method: string, code: number | 'error', resource?: string): void;
  /** The request maintenance holds on Instance `key` (reason Paused or AwaitingWindow), or none. */
  setHeld(key: string, reason: string | undefined): void;
  /** A schedule tick handled: Started, Forbidden, Waiting, Held, Missed, Suspended or Refused. */
  countScheduleTick(outcome: string): void;
  /** A governed request's outcome: Approved (started with approvals), Rejected, Expired or BreakGlass (passed a freeze). */
  countGovernance?(outcome: 'Approved' | 'Rejected' | 'Expired' | 'BreakGlass'): void;
  /** A FleetRollout's targets by state (counts from its status), or none when it is gone. */
  setFleetTargets(rollout: string, counts: Record<string, number> | undefined): void;
  /** Report `count()` — the objects an informer caches — for `resource` on every scrape. */
  trackCachedObjects?(resource: string, count: () => number): void;
}

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, GC); on by default. */
  defaultMetrics?: boolean;
}

// Plans and steps run from seconds to tens of minutes.
const PLAN_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200];
// A reconcile is a few API round trips.
const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createControllerMetrics({ defaultMetrics = true }: MetricsOptions = {}): ControllerMetrics {
  const registry = new Registry();
  if (defaultMetrics) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const informerRestarts = new Counter({
    name: 'planwarden_informer_restarts_total',
    help: 'Times an informer list/watch failed and was restarted with backoff, by resource.',
    labelNames: ['resource'] as const,
    registers,
  });
  const depthSources = new Map<string, () => number>();
  new Gauge({
    name: 'planwarden_workqueue_depth',
    help: 'Keys waiting in a work queue (not counting those being processed or delayed).',
    labelNames: ['name'] as const,
    registers,
    collect() {
      for (const [name, depth] of depthSources) this.set({ name }, depth());
    },
  });
  const reconcileDuration = new Histogram({
    name: 'planwarden_reconcile_duration_seconds',
    help: 'Time spent in one reconcile, by queue and result.',
    labelNames: ['name', 'result'] as const,
    buckets: RECONCILE_BUCKETS,
    registers,
  });
  const queueRetries = new Counter({
    name: 'planwarden_workqueue_retries_total',
    help: 'Keys re-queued with per-key exponential backoff after a failed reconcile, by queue.',
    labelNames: ['name'] as const,
    registers,
  });
  const planDuration = new Histogram({
    name: 'planwarden_plan_duration_seconds',
    help: 'Time from a plan starting to reaching a terminal state, by plan and result.',
    labelNames: ['plan', 'result'] as const,
    buckets: PLAN_BUCKETS,
    registers,
  });
  const stepDuration = new Histogram({
    name: 'planwarden_step_duration_seconds',
    help: 'Time from a step starting to reaching a terminal state, by plan and result.',
    labelNames: ['plan', 'result'] as const,
    buckets: PLAN_BUCKETS,
    registers,
  });
  const stepRetries = new Counter({
    name: 'planwarden_step_retries_total',
    help: 'Step attempts that failed transiently and were scheduled again, by plan.',
    labelNames: ['plan'] as const,
    registers,
  });
  const droppedEvents = new Counter({
    name: 'planwarden_events_dropped_total',
    help: 'Kubernetes Events not written because more than 1,000 were waiting (the status is the record).',
    registers,
  });
  const leader = new Gauge({
    name: 'planwarden_leader',
    help: '1 while this replica holds the leader Lease, else 0.',
    labelNames: ['identity'] as const,
    registers,
  });
  const apiRequests = new Counter({
    name: 'planwarden_api_requests_total',
    help: 'Requests to the Kubernetes API, by method (WATCH for watches), HTTP status code and resource (e.g. instances/status, leases).',
    labelNames: ['method', 'code', 'resource'] as const,
    registers,
  });

  /** Instance key → the reason its request is held; the gauge counts them by reason on scrape. */
  const held = new Map<string, string>();
  new Gauge({
    name: 'planwarden_held_requests',
    help: 'Plan requests maintenance holds (PENDING until a window opens or a pause ends), by reason (Paused, AwaitingWindow).',
    labelNames: ['reason'] as const,
    registers,
    collect() {
      this.reset();
      const counts = new Map<string, number>([
        ['Paused', 0],
        ['AwaitingWindow', 0],
      ]);
      for (const reason of held.values()) counts.set(reason, (counts.get(reason) ?? 0) + 1);
      for (const [reason, n] of counts) this.set({ reason }, n);
    },
  });
  const scheduleTicks = new Counter({
    name: 'planwarden_schedule_ticks_total',
    help: 'Schedule ticks handled, by outcome (Started, Forbidden, Waiting, Held, Missed, Suspended, Refused).',
    labelNames: ['outcome'] as const,
    registers,
  });
  // Every outcome from 0, so a rate exists before the first tick of each kind.
  for (const outcome of ['Started', 'Forbidden', 'Waiting', 'Held', 'Missed', 'Suspended', 'Refused']) scheduleTicks.inc({ outcome }, 0);

  const governance = new Counter({
    name: 'planwarden_governed_runs_total',
    help: 'Requests a PlanPolicy governed, by outcome: Approved (started with the approvals it needed), Rejected, Expired, BreakGlass (started past a freeze by break-glass).',
    labelNames: ['outcome'] as const,
    registers,
  });
  for (const outcome of ['Approved', 'Rejected', 'Expired', 'BreakGlass']) governance.inc({ outcome }, 0);

  const fleets = new Map<string, Record<string, number>>();
  new Gauge({
    name: 'planwarden_fleet_targets',
    help: 'Targets of each FleetRollout by state (pending, waiting, running, completed, failed, skipped).',
    labelNames: ['rollout', 'state'] as const,
    registers,
    collect() {
      this.reset();
      for (const [rollout, counts] of fleets) {
        for (const state of ['pending', 'waiting', 'running', 'completed', 'failed', 'skipped'])
          this.set({ rollout, state }, counts[state] ?? 0);
      }
    },
  });

  const cachedSources = new Map<string, () => number>();
  new Gauge({
    name: 'planwarden_informer_cached_objects',
    help: 'Objects each informer caches, by resource (labelled Deployments, StatefulSets, DaemonSets and Jobs are cached as their key and label only).',
    labelNames: ['resource'] as const,
    registers,
    collect() {
      this.reset();
      for (const [resource, count] of cachedSources) this.set({ resource }, count());
    },
  });

  return {
    registry,
    trackCachedObjects: (resource, count) => void cachedSources.set(resource, count),
    setFleetTargets: (rollout, counts) => void (counts === undefined ? fleets.delete(rollout) : fleets.set(rollout, counts)),
    setHeld: (key, reason) => void (reason === undefined ? held.delete(key) : held.set(key, reason)),
    countScheduleTick: (outcome) => scheduleTicks.inc({ outcome }),
    countGovernance: (outcome) => governance.inc({ outcome }),
    countInformerRestart: (resource) => informerRestarts.inc({ resource }),
    trackQueueDepth: (queue, depth) => void depthSources.set(queue, depth),
    observeReconcile: (name, result, seconds) => reconcileDuration.observe({ name, result }, seconds),
    countQueueRetry: (name) => queueRetries.inc({ name }),
    observePlan: (plan, result, seconds) => planDuration.observe({ plan, result }, seconds),
    observeStep: (plan, result, seconds) => stepDuration.observe({ plan, result }, seconds),
    countStepRetry: (plan) => stepRetries.inc({ plan }),
    countDroppedEvent: () => droppedEvents.inc(),
    setLeader: (identity, leading) => leader.set({ identity }, leading ? 1 : 0),
    countApiRequest: (method, code, resource = 'unknown') => apiRequests.inc({ method, code: String(code), resource }),
  };
}
