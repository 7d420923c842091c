// Reconciles one Instance the way controller-runtime shapes a reconciler: one pass per call
// — read the facts (the Instance, its OperatorVersion, governance's policies and approvals,
// how the applied objects are, the impersonation grant, what the last pass observed), let
// the pure pass (pass.ts planPass) decide, persist the status it returns (optimistic
// concurrency, before any side effect, so a restart never repeats a finished step), record
// its Events only after that write succeeded, perform its actions — and return "again now /
// after N / done". Actions that write nothing (a Dummy, a Wait, a target list) are performed
// in memory before the write, the pass going on with what they observed (continuePass).
// What the executors observed is kept for the next pass; the pass after a write does not
// wait for the watch to bring that write back (the written object is used until the cache has it).
import { randomBytes } from 'node:crypto';
import type {
  Instance,
  InstanceStatus,
  LabelSelector,
  OperatorVersion,
  PlanApproval,
  PlanPolicy,
  SecretKeyRef,
} from '../../shared/api/schema.ts';
import { jsonEqual } from '../../shared/json.ts';
import { apiErrorMessage, classifyApiError, type KubeClient } from '../../shared/kube/client.ts';
import { objectKey, type ObjectCache } from '../../shared/kube/informer.ts';
import type { WorkerResult } from '../../shared/kube/queue.ts';
import { effectiveParameters, isRunning, runParameters } from '../../shared/plan/triggers.ts';
import { Redactor, runSecretRefs, secretParameterNames, type ResolvedSecret } from '../../shared/params/secrets.ts';
import type { SecretReader, SecretsRead } from '../executors/secrets.ts';
import { selectorQuery } from '../../shared/labelSelector.ts';
import type { Action, Observations, TaskObservation, TargetsResolution } from '../engine/types.ts';
import type { EventRecorder } from '../events.ts';
import type { Executors } from '../executors/index.ts';
import type { Logger } from '../log.ts';
import type { ControllerMetrics } from '../metrics.ts';
import type { AppliedHealth, AppliedObjectsInput } from '../executors/applied.ts';
import type { Report } from './decide.ts';
import {
  completedPlans,
  continuePass,
  DEFAULT_IN_PROGRESS_RECHECK_MS,
  DEFAULT_PULSES,
  planPass,
  progressed,
  type PassEvent,
  type PassFacts,
  type PulseSettings,
  type StatusPass,
} from './pass.ts';
import { replaceInstanceStatus } from './statusWrite.ts';
import { mapBounded } from '../concurrency.ts';

export { DEFAULT_PULSES, type PulseSettings };

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
  /** Executor calls in flight at once for one Instance (parallel steps, fanned-out targets). */
  parallelism?: number;
  /**
   * Before a plan starts: a refusal when the Instance's namespace did not grant the
   * controller impersonation of the plan's ServiceAccount (absent: not checked).
   */
  impersonationGrant?: (input: { instance: Instance; operatorVersion: OperatorVersion; plan: string }) => Promise<Report | undefined>;
  /** Between plans: judges the objects the last completed plan applied (absent: not judged). */
  judgeApplied?: (input: AppliedObjectsInput) => Promise<AppliedHealth | undefined>;
  /** Reads secret parameters' Secrets as the plan's ServiceAccount (absent: a run that names one fails). */
  readSecrets?: SecretReader;
  /** PlanPolicies, namespace labels and PlanApprovals from the caches (absent: nothing is governed). */
  governance?: GovernanceSource;
}

/** What change governance reads, from watch-backed caches. */
export interface GovernanceSource {
  policies(): PlanPolicy[];
  namespaceLabels(namespace: string): Record<string, string> | undefined;
  /** The PlanApprovals of the namespace that name the Instance. */
  approvals(namespace: string, instance: string): PlanApproval[];
}

const INSTANCES = { apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance' };
const DEFAULT_PARALLELISM = 8;
/** A bound on in-memory evaluations in one pass (a plan has far fewer steps; the CRD caps them). */
const MAX_IN_MEMORY_ROUNDS = 1_000;
/** Facts only I/O answers are asked for one at a time (the applied objects, then the grant): a bound on planning rounds. */
const MAX_PLANNING_ROUNDS = 4;

/** What executors observed in a pass, for the next one: valid while the Instance is unchanged. */
interface Carried {
  resourceVersion: string | undefined;
  observations: Observations;
}

export class InstanceReconciler {
  private readonly pulses: PulseSettings;
  private readonly clock: () => Date;
  /** Per key: observations of the last pass, fed to the engine in the next. */
  private readonly carried = new Map<string, Carried>();
  /** Per key: the object as last written or read, and the version the cache had then. */
  private readonly newer = new Map<string, { cachedVersion: string | undefined; object: Instance }>();

  constructor(private readonly deps: InstanceReconcilerDeps) {
    this.pulses = deps.pulses ?? DEFAULT_PULSES;
    this.clock = deps.clock ?? (() => new Date());
  }

  /** The work-queue worker: one Instance key in, "done / requeue after N" out. */
  async reconcile(key: string): Promise<WorkerResult> {
    const inst = this.current(key);
    if (!inst) {
      this.carried.delete(key);
      this.deps.metrics?.setHeld(key, undefined);
      return;
    }
    const outcome = await this.pass(key, inst);
    if (outcome !== 'conflict') return outcome;
    // Someone else wrote first (or our cache was behind): read the latest, go again now.
    this.carried.delete(key);
    const fresh = await this.deps.kube.get<Instance>({ ...INSTANCES, namespace: inst.metadata.namespace, name: inst.metadata.name ?? '' });
    if (fresh) this.remember(key, fresh);
    return { requeue: true };
  }

  /** The Instance to act on: the cache's, unless it has not caught up with what we wrote or read. */
  private current(key: string): Instance | undefined {
    const cached = this.deps.instances.get(key);
    const newer = this.newer.get(key);
    if (newer && cached && cached.metadata.resourceVersion === newer.cachedVersion) return newer.object;
    this.newer.delete(key);
    return cached;
  }

  private remember(key: string, object: Instance): void {
    this.newer.set(key, { cachedVersion: this.deps.instances.get(key)?.metadata.resourceVersion, object });
  }

  private log(inst: Instance): Logger {
    return this.deps.logger.child({ instance: objectKey(inst) });
  }

  /** One pass: read the facts, plan, persist, record, perform. */
  private async pass(key: string, inst: Instance): Promise<WorkerResult | 'conflict'> {
    const now = this.clock();
    const facts = this.facts(key, inst);
    let plan = planPass(facts, now);
    for (let round = 1; plan.kind === 'need'; round++) {
      if (round >= MAX_PLANNING_ROUNDS) throw new Error(`planPass asked for ${plan.need.fact} again after ${round} rounds`);
      if (plan.need.fact === 'applied')
        facts.applied = { health: await this.judgeApplied(inst, facts.operatorVersion!, inst.status ?? {}) };
      else {
        const refusal = this.deps.impersonationGrant
          ? await this.deps.impersonationGrant({ instance: inst, operatorVersion: facts.operatorVersion!, plan: plan.need.plan })
          : undefined;
        facts.grant = { plan: plan.need.plan, refusal };
      }
      plan = planPass(facts, now);
    }
    this.log(inst).debug({ pass: plan.kind }, 'reconcile');
    switch (plan.kind) {
      case 'none':
        return undefined;
      case 'finalizers': {
        const patched = await this.patchFinalizers(key, inst, plan.finalizers, plan.goOn);
        if (patched !== 'conflict') this.record(inst, inst, plan.events);
        return patched;
      }
      case 'status':
        return this.apply(key, inst, facts, plan, now);
    }
  }

  /** What one pass decides from: the caches' objects and what the last pass observed. */
  private facts(key: string, inst: Instance): PassFacts {
    const ns = inst.metadata.namespace ?? '';
    const source = this.deps.governance;
    const carried = this.carried.get(key);
    this.carried.delete(key);
    return {
      instance: inst,
      operatorVersion: this.deps.operatorVersions.get(`${ns}/${inst.spec.operatorVersion.name}`),
      ...(source
        ? {
            governance: {
              policies: source.policies(),
              namespaceLabels: source.namespaceLabels(ns),
              approvals: source.approvals(ns, inst.metadata.name ?? ''),
            },
          }
        : {}),
      observations: carried && carried.resourceVersion === inst.metadata.resourceVersion ? carried.observations : {},
      runIdSuffix: randomBytes(2).toString('hex'),
      writesNothing: (kind) => this.deps.executors.writesNothing?.(kind) ?? false,
      pulses: this.pulses,
      inProgressRecheckMs: this.deps.inProgressRecheckMs ?? DEFAULT_IN_PROGRESS_RECHECK_MS,
    };
  }

  /** Performs what writes nothing in memory, persists the status, records the Events, performs the rest. */
  private async apply(key: string, inst: Instance, facts: PassFacts, first: StatusPass, now: Date): Promise<WorkerResult | 'conflict'> {
    const ov = facts.operatorVersion!;
    if (first.held !== undefined) this.deps.metrics?.setHeld(key, first.held ?? undefined);
    if (first.started) this.log(inst).info(first.started, 'plan started');
    // Through every outcome that needs no write to learn, so a run of such steps costs one
    // status write instead of one per step; stopped before the first action that writes and
    // when nothing progressed (what that observed is carried as if performed after the write).
    let plan = first;
    let performed: Observations | undefined;
    for (let round = 0; plan.inMemory && round < MAX_IN_MEMORY_ROUNDS; round++) {
      const seen = await this.perform(plan.performOn, ov, plan.actions, now);
      if (!progressed(seen)) {
        performed = seen;
        break;
      }
      plan = continuePass(plan, seen, now);
    }
    const written = await this.writeStatus(key, inst, plan.status, now.toISOString());
    if (written === 'conflict') return 'conflict';
    this.record(inst, written, plan.events);
    for (const outcome of plan.counts.governance) this.deps.metrics?.countGovernance?.(outcome);
    for (const outcome of plan.counts.scheduleTicks) this.deps.metrics?.countScheduleTick(outcome);
    this.observeTransitions(inst.status ?? {}, plan.status);

    if (plan.actions.length === 0) return { requeueAfterMs: plan.requeueAfterMs };
    let observed = performed;
    if (!observed) {
      // Nothing was written, so optimistic concurrency did not check that our copy is current;
      // a stale cache (another replica's write not seen yet) would repeat a task already done.
      if (written === inst && plan.writes && !(await this.isCurrent(inst))) return 'conflict';
      observed = await this.perform(written, ov, plan.actions, now);
    }
    this.carried.set(key, { resourceVersion: written.metadata.resourceVersion, observations: observed });
    // Progress: evaluate it now; else when a watch, a timer or the recheck interval says.
    if (progressed(observed)) return { requeueAfterMs: 0 };
    return { requeueAfterMs: plan.requeueAfterMs };
  }

  /** The pass's Events, after its write: the engine's about the Instance as written, the others as read. */
  private record(read: Instance, written: Instance, events: PassEvent[]): void {
    for (const e of events) this.deps.events.record(e.ofWritten ? written : read, e.type, e.reason, e.message);
  }

  /** Sets the finalizers; after adding ours, goes on at once with the patched object. */
  private async patchFinalizers(key: string, inst: Instance, finalizers: string[], goOn: boolean): Promise<WorkerResult | 'conflict'> {
    try {
      const patched = await this.deps.kube.patch<Instance>(
        { ...INSTANCES, namespace: inst.metadata.namespace, name: inst.metadata.name! },
        { metadata: { finalizers, resourceVersion: inst.metadata.resourceVersion } },
        'merge',
      );
      if (goOn && !patched?.metadata.deletionTimestamp) {
        this.remember(key, patched);
        return { requeueAfterMs: 0 };
      }
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
  private async writeStatus(key: string, inst: Instance, status: InstanceStatus, now: string): Promise<Instance | 'conflict'> {
    if (jsonEqual(inst.status ?? {}, status)) return inst; // key order differs from the apiserver's
    try {
      const written = await replaceInstanceStatus(this.deps.kube, inst, status, now);
      this.remember(key, written);
      return written;
    } catch (e) {
      if (classifyApiError(e) === 'conflict') return 'conflict';
      throw e;
    }
  }

  /**
   * Between plans, how the objects applied by the plans whose latest run is COMPLETE are (a
   * backup after a deploy does not hide the deploy's Deployment); watch events and pulses
   * bring us here.
   */
  private async judgeApplied(inst: Instance, ov: OperatorVersion, status: InstanceStatus): Promise<AppliedHealth | undefined> {
    if (!this.deps.judgeApplied || status.activePlan?.status !== 'COMPLETE') return undefined;
    // Rendered again with the same references, read the same way as a run reads them; a
    // Secret that is gone makes the verdict unknown, saying which.
    const secrets = await this.readSecrets(inst, ov, runSecretRefs(ov.spec, inst.spec.parametersFrom, undefined));
    if (!secrets.ok) return { state: 'unknown', message: secrets.outcome.message ?? 'a secret parameter could not be read', objects: 0 };
    const redactor = new Redactor(secrets.secrets);
    const health = await this.deps.judgeApplied({
      instance: inst,
      operatorVersion: ov,
      plans: completedPlans(status),
      parameters: withSecrets(ov, effectiveParameters(ov.spec, inst.spec.parameters), secrets.secrets),
      signal: this.deps.signal,
    });
    return health === undefined ? undefined : redactor.deep(health);
  }

  /** The run's secret parameters, read as its ServiceAccount (nothing to read: none). */
  private async readSecrets(inst: Instance, ov: OperatorVersion, refs: [string, SecretKeyRef][]): Promise<SecretsRead> {
    if (refs.length === 0) return { ok: true, secrets: [] };
    if (!this.deps.readSecrets)
      return {
        ok: false,
        outcome: {
          kind: 'fatalError',
          message: `OperatorVersion ${ov.metadata.name ?? ''} has secret parameters, and this controller cannot read Secrets`,
        },
      };
    return this.deps.readSecrets(inst, refs, this.deps.signal);
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
    // The run's own per-run values (recorded when it started) over the Instance's.
    const active = inst.status?.activePlan;
    const perRun = active ? inst.status?.planStatus?.[active.name]?.parameters : undefined;
    const perRunFrom = active ? inst.status?.planStatus?.[active.name]?.parametersFrom : undefined;
    // Secret parameters: read only when a task runs, as the plan's ServiceAccount; every
    // message the tasks report goes through the redactor before it is kept anywhere.
    const refs = runSecretRefs(ov.spec, inst.spec.parametersFrom, perRunFrom);
    const secrets = actions.some((a) => a.type === 'executeTask')
      ? await this.readSecrets(inst, ov, refs)
      : ({ ok: true, secrets: [] } as SecretsRead);
    const unreadable = secrets.ok ? undefined : secrets.outcome;
    const redactor = new Redactor(secrets.ok ? secrets.secrets : []);
    const parameters = withSecrets(ov, runParameters(ov.spec, inst.spec.parameters, perRun), secrets.ok ? secrets.secrets : []);
    // A target is a Node (k0s autopilot's signal node): one that does not exist, or no longer
    // does while its step runs, fails that target for good (MissingSignalNode) instead of
    // running a task for nobody; a Node that cannot be read is a transient error.
    const nodes = new Map<string, Promise<TaskObservation['outcome'] | undefined>>();
    const targetProblem = (name: string) => {
      let p = nodes.get(name);
      if (!p) {
        p = this.deps.kube.get({ apiVersion: 'v1', kind: 'Node', name }, this.deps.signal).then(
          (node) =>
            node ? undefined : { kind: 'fatalError' as const, message: `target Node "${name}" does not exist (MissingSignalNode)` },
          (err: unknown) => ({ kind: 'transientError' as const, message: `cannot read target Node "${name}": ${apiErrorMessage(err)}` }),
        );
        nodes.set(name, p);
      }
      return p;
    };
    await mapBounded(actions, this.deps.parallelism ?? DEFAULT_PARALLELISM, async (a) => {
      if (a.type === 'resolveTargets') {
        const resolved = await this.resolveTargets(inst, a.phase, a.step, a.selector);
        if (resolved) targetsResolved.push(resolved);
      } else if (a.type === 'executeTask') {
        const task = (ov.spec.tasks ?? []).find((t) => t.name === a.taskName);
        const missing = unreadable ?? (a.target === undefined ? undefined : await targetProblem(a.target));
        const outcome = missing
          ? missing
          : task
            ? await this.deps.executors.executorFor(task.kind).execute({
                instance: inst,
                operatorVersion: ov,
                plan: a.plan,
                ...runPlace(ov, inst, a),
                task,
                parameters,
                target: a.target,
                taskStartedAt: a.taskStartedAt,
                now,
                signal: this.deps.signal,
              })
            : { kind: 'fatalError' as const, message: `task "${a.taskName}" is not defined in OperatorVersion ${ov.metadata.name ?? ''}` };
        // In the order the calls end, as observed.
        tasks.push({ phase: a.phase, step: a.step, taskIndex: a.taskIndex, target: a.target, outcome: redactor.deep(outcome) });
      }
    });
    return { tasks, targetsResolved };
  }

  /**
   * The Nodes a step's selector matches. A failed list is logged and observed as nothing yet:
   * the step keeps waiting for its targets and the pass comes back after the recheck interval.
   */
  private async resolveTargets(
    inst: Instance,
    phase: number,
    step: number,
    selector: LabelSelector,
  ): Promise<TargetsResolution | undefined> {
    try {
      const list = await this.deps.kube.list<{ metadata: { name: string } }>('/api/v1/nodes', { labelSelector: selectorQuery(selector) });
      return { phase, step, names: list.items.map((n) => n.metadata.name).sort() };
    } catch (err) {
      this.log(inst).warn({ phase, step, error: apiErrorMessage(err) }, 'could not list the target Nodes; retrying');
      return undefined;
    }
  }
}

/** Where in its run a task executes: the names of its phase and step, and the run's id. */
function runPlace(
  ov: OperatorVersion,
  inst: Instance,
  a: { plan: string; phase: number; step: number },
): { phase?: string; step?: string; runId?: string } {
  const phase = ov.spec.plans?.[a.plan]?.phases?.[a.phase];
  const step = phase?.steps?.[a.step];
  const runId = inst.status?.planStatus?.[a.plan]?.id;
  return { ...(phase ? { phase: phase.name } : {}), ...(step ? { step: step.name } : {}), ...(runId ? { runId } : {}) };
}

/**
 * The values a run renders with, secret parameters taken only from what was read from their
 * Secrets: a value written for one in spec.parameters (before the blueprint declared it
 * secret) is never used.
 */
function withSecrets(ov: OperatorVersion, values: Record<string, string>, secrets: readonly ResolvedSecret[]): Record<string, string> {
  const out = { ...values };
  for (const name of secretParameterNames(ov.spec)) delete out[name];
  for (const s of secrets) out[s.parameter] = s.value;
  return out;
}
