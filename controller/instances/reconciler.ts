// Reconciles one Instance: loads it and its OperatorVersion, lets `decide` and the plan
// engine compute the next status, writes that status (optimistic concurrency, before any
// side effect, so a restart never repeats a finished step), then performs the engine's
// actions and feeds what the executors observed back into the engine.
import { jsonEqual } from '../../shared/json.ts';
import { FINALIZER } from '../../shared/api/names.ts';
import { randomBytes } from 'node:crypto';
import type { Instance, InstanceStatus, LabelSelector, OperatorVersion } from '../../shared/api/schema.ts';
import { effectiveParameters, isRunning } from '../../shared/plan/triggers.ts';
import { advancePlan } from '../engine/advance.ts';
import { startPlan } from '../engine/start.ts';
import { ensurePlanStatusEntries } from '../engine/status.ts';
import type { Action, Observations, TaskObservation, TargetsResolution } from '../engine/types.ts';
import type { Executors } from '../executors/index.ts';
import { objectKey, type ObjectCache } from '../../shared/kube/informer.ts';
import { classifyApiError, type KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../log.ts';
import type { ControllerMetrics } from '../metrics.ts';
import type { WorkerResult } from '../../shared/kube/queue.ts';
import type { EventRecorder } from '../events.ts';
import { consumeAbort, decide, finalizeStatus, type Decision } from './decide.ts';

export interface PulseSettings {
  /** Re-check an Instance this long after its last report while it is not Ready. */
  notReadyMs: number;
  /** … and this long while it is Ready. */
  readyMs: number;
}

export const DEFAULT_PULSES: PulseSettings = { notReadyMs: 10_000, readyMs: 30 * 60_000 };

export interface InstanceReconcilerDeps {
  kube: KubeClient;
  instances: ObjectCache<Instance>;
  operatorVersions: ObjectCache<OperatorVersion>;
  executors: Executors;
  events: EventRecorder;
  logger: Logger;
  metrics?: ControllerMetrics;
  pulses?: PulseSettings;
  clock?: () => Date;
  /** Poll interval for tasks in progress that no watch reports on (e.g. kinds not watched). */
  inProgressRecheckMs?: number;
  /** Aborted when leadership is lost: executors stop their calls. */
  signal?: AbortSignal;
}

const INSTANCES = { apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance' };
const MAX_ROUNDS = 25;


export function runId(plan: string, now: Date): string {
  return `${plan}-${now.toISOString().replace(/[-:.]/g, '').replace('T', '-').slice(0, 15)}-${randomBytes(2).toString('hex')}`;
}

export function labelSelectorString(sel: LabelSelector): string {
  const parts = Object.entries(sel.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) {
    if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${e.operator.toLowerCase()} (${(e.values ?? []).join(',')})`);
  }
  return parts.join(',');
}

export class InstanceReconciler {
  private readonly pulses: PulseSettings;
  private readonly clock: () => Date;

  constructor(private readonly deps: InstanceReconcilerDeps) {
    this.pulses = deps.pulses ?? DEFAULT_PULSES;
    this.clock = deps.clock ?? (() => new Date());
  }

  /** The work-queue worker: one Instance key in, "done / requeue after N" out. */
  async reconcile(key: string): Promise<WorkerResult> {
    const cached = this.deps.instances.get(key);
    if (!cached) return;
    let inst: Instance = cached;
    for (let attempt = 0; attempt < 3; attempt++) {
      const outcome = await this.reconcileOnce(inst);
      if (outcome !== 'conflict') return outcome;
      // Our cache was behind: read the latest and decide again.
      const fresh: Instance | undefined = await this.deps.kube.get<Instance>({
        ...INSTANCES,
        namespace: inst.metadata.namespace,
        name: inst.metadata.name ?? '',
      });
      if (!fresh) return;
      inst = fresh;
    }
    return { requeue: true };
  }

  private log(inst: Instance): Logger {
    return this.deps.logger.child({ instance: objectKey(inst) });
  }

  private async reconcileOnce(inst: Instance): Promise<WorkerResult | 'conflict'> {
    const ns = inst.metadata.namespace ?? '';
    const ov = this.deps.operatorVersions.get(`${ns}/${inst.spec.operatorVersion.name}`);
    const decision = decide(ov, inst);
    const log = this.log(inst);
    log.debug({ decision: decision.kind }, 'reconcile');
    switch (decision.kind) {
      case 'addFinalizer':
        return this.patchFinalizers(inst, [...(inst.metadata.finalizers ?? []), FINALIZER]);
      case 'removeFinalizer': {
        this.deps.events.record(inst, 'Normal', 'FinalizerRemoved', `deleting: ${decision.reason}`);
        return this.patchFinalizers(inst, (inst.metadata.finalizers ?? []).filter((f) => f !== FINALIZER));
      }
      case 'missingOperatorVersion':
        return this.writeOnly(inst, inst.status ?? {}, { reason: 'OperatorVersionNotFound', message: decision.message });
      case 'refuse':
        // A failed cleanup may outlive its OperatorVersion: report it all the same.
        return ov ? this.run(inst, ov, decision) : this.writeOnly(inst, inst.status ?? {}, decision.report);
      case 'idle':
        return ov ? this.run(inst, ov, decision) : undefined;
      default:
        return this.run(inst, ov!, decision);
    }
  }

  private async patchFinalizers(inst: Instance, finalizers: string[]): Promise<WorkerResult | 'conflict'> {
    try {
      await this.deps.kube.patch(
        { ...INSTANCES, namespace: inst.metadata.namespace, name: inst.metadata.name! },
        { metadata: { finalizers, resourceVersion: inst.metadata.resourceVersion } },
        'merge',
      );
      return;
    } catch (e) {
      if (classifyApiError(e) === 'conflict') return 'conflict';
      if (classifyApiError(e) === 'notFound') return;
      throw e;
    }
  }

  /** Whether `inst` is still the stored version (same resourceVersion). */
  private async isCurrent(inst: Instance): Promise<boolean> {
    const stored = await this.deps.kube.get<Instance>({ ...INSTANCES, namespace: inst.metadata.namespace, name: inst.metadata.name ?? '' });
    return stored?.metadata.resourceVersion === inst.metadata.resourceVersion;
  }

  /** Writes status when it changed; 'conflict' when someone else wrote first. */
  private async writeStatus(inst: Instance, status: InstanceStatus): Promise<Instance | 'conflict'> {
    if (jsonEqual(inst.status ?? {}, status)) return inst; // key order differs from the apiserver's
    try {
      return await this.deps.kube.replace<Instance>({ ...inst, status }, { subresource: 'status' });
    } catch (e) {
      if (classifyApiError(e) === 'conflict') return 'conflict';
      throw e;
    }
  }

  private async writeOnly(inst: Instance, status: InstanceStatus, refusal: { reason: string; message: string }) {
    const now = this.clock().toISOString();
    const previous = inst.status?.conditions?.find((c) => c.type === 'PlanRunning');
    const next = finalizeStatus({ inst, status, now, nothingDue: false, refusal });
    const written = await this.writeStatus(inst, next);
    if (written === 'conflict') return 'conflict';
    if (previous?.message !== refusal.message) this.deps.events.record(inst, 'Warning', refusal.reason, refusal.message);
    return { requeueAfterMs: this.pulses.notReadyMs };
  }

  /** Starts/aborts/advances the plan in rounds until nothing more happens right now. */
  private async run(inst: Instance, ov: OperatorVersion, decision: Decision): Promise<WorkerResult | 'conflict'> {
    const log = this.log(inst);
    let current = inst;
    let now = this.clock();
    let status: InstanceStatus = ensurePlanStatusEntries(ov, inst.status);
    let abort = false;
    const refusal = 'report' in decision ? decision.report : undefined;
    if (decision.kind === 'start') {
      const request = decision.request;
      const id = request.kind === 'manual' && request.id ? request.id : runId(request.plan, now);
      status = startPlan({ ov, instance: { ...inst, status }, request, now, id });
      log.info({ plan: request.plan, id, trigger: request.kind }, 'plan started');
    }
    if (decision.kind === 'abort') abort = true;
    status = consumeAbort(status, inst);

    let observations: Observations = {};
    let requeueAfterMs: number | undefined;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const wasActive = status.activePlan;
      const before = current.status ?? {};
      let actions: Action[] = [];
      if (wasActive && (isRunning(wasActive.status) || abort)) {
        const evaluation = advancePlan({ ov, instance: { status }, now, observations, abort });
        status = evaluation.status;
        actions = evaluation.actions;
        requeueAfterMs = evaluation.requeueAfterMs;
        abort = false;
      }
      const nothingDue =
        decision.kind === 'idle' || (decision.kind !== 'refuse' && decision.kind !== 'hold' && !isRunning(status.activePlan?.status));
      const next = finalizeStatus({ inst: current, status, now: now.toISOString(), nothingDue, refusal });
      const previousRefusal = current.status?.conditions?.find((c) => c.type === 'PlanRunning')?.message;
      const previousCurrent = current;
      const written = await this.writeStatus(current, next);
      if (written === 'conflict') return 'conflict';
      current = written;
      status = next;
      if (round === 0 && refusal && previousRefusal !== refusal.message) {
        this.deps.events.record(inst, 'Warning', refusal.reason, refusal.message);
      }
      this.recordEvents(current, actions);
      this.observeTransitions(before, status);

      const work = actions.filter((a) => a.type !== 'event');
      if (work.length === 0) break;
      // No write happened this round, so optimistic concurrency did not check that our
      // copy is current; a stale cache (our own last write not seen yet) would re-run a
      // task that is already done. Confirm before any side effect.
      if (written === previousCurrent && !(await this.isCurrent(current))) return 'conflict';
      observations = await this.perform(current, ov, work, now);
      const progressed =
        (observations.tasks ?? []).some((o) => o.outcome.kind !== 'inProgress') || (observations.targetsResolved ?? []).length > 0;
      now = this.clock();
      if (!progressed) {
        // Record in-progress messages once, then wait for a watch event or the recheck.
        const evaluation = advancePlan({ ov, instance: { status }, now, observations });
        const again = finalizeStatus({ inst: current, status: evaluation.status, now: now.toISOString(), nothingDue: false, refusal });
        const w = await this.writeStatus(current, again);
        if (w === 'conflict') return 'conflict';
        requeueAfterMs = Math.min(evaluation.requeueAfterMs ?? Infinity, this.deps.inProgressRecheckMs ?? 5_000);
        break;
      }
    }
    return { requeueAfterMs: requeueAfterMs ?? this.pulseFor(status) };
  }

  private pulseFor(status: InstanceStatus): number {
    const ready = status.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    return ready ? this.pulses.readyMs : this.pulses.notReadyMs;
  }

  private recordEvents(inst: Instance, actions: Action[]): void {
    for (const a of actions) {
      if (a.type === 'event') this.deps.events.record(inst, a.warning ? 'Warning' : 'Normal', a.reason, a.message);
    }
  }

  /** Plan and step durations and retries, from what changed between two statuses. */
  private observeTransitions(before: InstanceStatus, after: InstanceStatus): void {
    const metrics = this.deps.metrics;
    const a = after.activePlan;
    if (!metrics || !a) return;
    const seconds = (from?: string, to?: string) => (from && to ? (Date.parse(to) - Date.parse(from)) / 1000 : undefined);
    const run = after.planStatus?.[a.name];
    const previous = before.planStatus?.[a.name];
    const sameRun = previous?.id === run?.id;
    if (run && !isRunning(run.status) && (!sameRun || isRunning(previous?.status))) {
      const s = seconds(run.startedAt, run.finishedAt);
      if (s !== undefined) metrics.observePlan(a.name, run.status, s);
    }
    (run?.phases ?? []).forEach((phase, i) =>
      phase.steps.forEach((step, j) => {
        const old = sameRun ? previous?.phases?.[i]?.steps[j] : undefined;
        if (step.status === old?.status) return;
        if (step.status === 'ERROR') metrics.countStepRetry(a.name);
        if (step.status === 'COMPLETE' || step.status === 'FATAL_ERROR' || step.status === 'ABORTED') {
          const s = seconds(step.startedAt, step.finishedAt);
          if (s !== undefined) metrics.observeStep(a.name, step.status, s);
        }
      }),
    );
  }

  /** Runs the engine's actions (bounded parallelism) and collects what they observed. */
  private async perform(inst: Instance, ov: OperatorVersion, actions: Action[], now: Date): Promise<Observations> {
    const tasks: TaskObservation[] = [];
    const targetsResolved: TargetsResolution[] = [];
    const parameters = effectiveParameters(ov.spec, inst.spec.parameters);
    const limit = 8;
    const queue = [...actions];
    const workers = Array.from({ length: Math.min(limit, queue.length) }, async () => {
      for (let a = queue.shift(); a; a = queue.shift()) {
        if (a.type === 'resolveTargets') {
          const list = await this.deps.kube.list<{ metadata: { name: string } }>('/api/v1/nodes', {
            labelSelector: labelSelectorString(a.selector),
          });
          targetsResolved.push({ phase: a.phase, step: a.step, names: list.items.map((n) => n.metadata.name).sort() });
        } else if (a.type === 'executeTask') {
          const task = (ov.spec.tasks ?? []).find((t) => t.name === a.taskName);
          const outcome = task
            ? await this.deps.executors.executorFor(task.kind).execute({
                instance: inst,
                operatorVersion: ov,
                plan: a.plan,
                task,
                parameters,
                target: a.target,
                taskStartedAt: a.taskStartedAt,
                now,
                signal: this.deps.signal,
              })
            : { kind: 'fatalError' as const, message: `task "${a.taskName}" is not defined in OperatorVersion ${ov.metadata.name ?? ''}` };
          tasks.push({ phase: a.phase, step: a.step, taskIndex: a.taskIndex, target: a.target, outcome });
        }
      }
    });
    await Promise.all(workers);
    return { tasks, targetsResolved };
  }
}
