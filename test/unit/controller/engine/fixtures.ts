// Builders for OperatorVersions and Instances, and a deterministic simulated controller
// loop (evaluate → persist → execute → observe) that drives the engine with a fake clock.
import type {
  Instance,
  InstanceStatus,
  OperatorVersion,
  Phase,
  Plan,
  PlanStatus,
  Step,
  Strategy,
  Targets,
  Task,
} from '../../../../shared/api/schema.ts';
import type { PlanRequest } from '../../../../shared/plan/triggers.ts';
import {
  advancePlan,
  isPlanTerminal,
  startPlan,
  type Action,
  type EngineOptions,
  type EventAction,
  type ExecuteTaskAction,
  type Observations,
  type TaskObservation,
  type TaskOutcome,
} from '../../../../controller/engine/index.ts';

export const T0 = '2026-01-01T00:00:00.000Z';
export const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

export const step = (name: string, tasks: string[] = [name], targets?: Targets): Step =>
  targets ? { name, tasks, targets } : { name, tasks };
export const phase = (name: string, steps: Step[], strategy?: Strategy): Phase => (strategy ? { name, strategy, steps } : { name, steps });
export const plan = (phases: Phase[], extra: Partial<Plan> = {}): Plan => ({ ...extra, phases });
export const nodes = (names: string[], concurrency?: number): Targets =>
  concurrency ? { discovery: { static: { nodes: names } }, concurrency } : { discovery: { static: { nodes: names } } };
export const selected = (labels: Record<string, string>, concurrency?: number): Targets =>
  concurrency ? { discovery: { selector: { matchLabels: labels } }, concurrency } : { discovery: { selector: { matchLabels: labels } } };

/** An OperatorVersion whose plans' tasks are Dummy tasks unless `tasks` defines them. */
export function operatorVersion(plans: Record<string, Plan>, tasks: Task[] = [], name = 'app-1.0.0'): OperatorVersion {
  const defined = new Map(tasks.map((t) => [t.name, t]));
  for (const p of Object.values(plans)) {
    for (const ph of p.phases) {
      for (const st of ph.steps) for (const t of st.tasks) if (!defined.has(t)) defined.set(t, { name: t, kind: 'Dummy' });
    }
  }
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'OperatorVersion',
    metadata: { name, namespace: 'shop' },
    spec: { version: '1.0.0', tasks: [...defined.values()], plans },
  };
}

export function instance(ov: OperatorVersion, status?: InstanceStatus, spec: Partial<Instance['spec']> = {}): Instance {
  const out: Instance = {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'app', namespace: 'shop', generation: 3 },
    spec: { operatorVersion: { name: ov.metadata.name! }, ...spec },
  };
  if (status) out.status = status;
  return out;
}

export const deployRequest: PlanRequest = { plan: 'deploy', kind: 'create', id: 'create' };

/** A fresh run of `planName` started at T0 as run "r1". */
export function started(ov: OperatorVersion, planName = 'deploy', options?: Partial<EngineOptions>): InstanceStatus {
  const request: PlanRequest = planName === 'deploy' ? deployRequest : { plan: planName, kind: 'manual', id: 'm1' };
  return startPlan({ ov, instance: instance(ov), request, now: T0, id: 'r1', ...(options ? { options } : {}) });
}

export const runOf = (status: InstanceStatus, planName = 'deploy'): PlanStatus => status.planStatus![planName]!;
export const tasksAsked = (actions: readonly Action[]): ExecuteTaskAction[] =>
  actions.filter((a): a is ExecuteTaskAction => a.type === 'executeTask');
export const eventsOf = (actions: readonly Action[]): EventAction[] => actions.filter((a): a is EventAction => a.type === 'event');
/** "phase/step:task[@target]" of each executeTask. */
export const asked = (actions: readonly Action[]): string[] =>
  tasksAsked(actions).map((a) => `${a.phase}/${a.step}:${a.taskName}${a.target ? `@${a.target}` : ''}`);

export const report = (phase: number, stepIndex: number, taskIndex: number, outcome: TaskOutcome, target?: string): TaskObservation =>
  target === undefined ? { phase, step: stepIndex, taskIndex, outcome } : { phase, step: stepIndex, taskIndex, target, outcome };
export const done: TaskOutcome = { kind: 'done' };

/** How the fake executor answers for a task (keyed "task@target" or "task"). */
export type Behaviour =
  | { kind: 'done' }
  | { kind: 'progress'; times: number; message?: string }
  | { kind: 'transient'; times: number; message?: string }
  | { kind: 'fatal'; message?: string }
  | { kind: 'silent' };

export interface SimulationOptions {
  ov: OperatorVersion;
  planName?: string;
  script?: Record<string, Behaviour>;
  /** Names a selector-based step resolves to, by step name. */
  selections?: Record<string, string[]>;
  /** Start from this status instead of a fresh startPlan at T0. */
  status?: InstanceStatus;
  /** Evaluation number (0-based) at which to abort. */
  abortAt?: number;
  /** Clock step after an evaluation that asked for work. */
  tickMs?: number;
  maxEvaluations?: number;
  options?: Partial<EngineOptions>;
}

export interface EvaluationRecord {
  now: string;
  actions: Action[];
  requeueAfterMs?: number;
  status: InstanceStatus;
}

export interface Simulation {
  status: InstanceStatus;
  run: PlanStatus;
  evaluations: EvaluationRecord[];
  /** Every executeTask performed, with the clock at the time. */
  executed: (ExecuteTaskAction & { now: string })[];
  events: EventAction[];
}

/**
 * The controller loop as the engine expects it: evaluate, keep the status (as if written),
 * perform the actions, feed what they reported into the next evaluation. The clock moves
 * by tickMs after an evaluation that asked for work, else by requeueAfterMs; the loop ends
 * when the run is terminal or nothing is left to wait for.
 */
export function simulate(o: SimulationOptions): Simulation {
  const planName = o.planName ?? 'deploy';
  const tickMs = o.tickMs ?? 100;
  let nowMs = Date.parse(T0);
  let status = o.status ?? started(o.ov, planName, o.options);
  let observations: Observations = {};
  const calls = new Map<string, number>();
  const sim: Simulation = { status, run: runOf(status, planName), evaluations: [], executed: [], events: [] };
  for (let n = 0; n < (o.maxEvaluations ?? 500); n++) {
    const now = new Date(nowMs).toISOString();
    const result = advancePlan({
      ov: o.ov,
      instance: instance(o.ov, status),
      now,
      observations,
      ...(o.abortAt === n ? { abort: true } : {}),
      ...(o.options ? { options: o.options } : {}),
    });
    status = result.status;
    sim.evaluations.push({
      now,
      actions: result.actions,
      status,
      ...(result.requeueAfterMs !== undefined ? { requeueAfterMs: result.requeueAfterMs } : {}),
    });
    sim.events.push(...eventsOf(result.actions));
    if (isPlanTerminal(runOf(status, planName).status)) break;
    observations = perform(o, result.actions, calls, now, sim);
    const work = result.actions.some((a) => a.type !== 'event');
    if (work) nowMs += tickMs;
    else if (result.requeueAfterMs !== undefined) nowMs += result.requeueAfterMs;
    else if (o.abortAt !== undefined && o.abortAt > n) nowMs += tickMs;
    else break;
  }
  sim.status = status;
  sim.run = runOf(status, planName);
  return sim;
}

function perform(o: SimulationOptions, actions: readonly Action[], calls: Map<string, number>, now: string, sim: Simulation): Observations {
  const tasks: TaskObservation[] = [];
  const targetsResolved: { phase: number; step: number; names: string[] }[] = [];
  for (const action of actions) {
    if (action.type === 'resolveTargets') {
      const stepName = o.ov.spec.plans[action.plan]!.phases[action.phase]!.steps[action.step]!.name;
      targetsResolved.push({ phase: action.phase, step: action.step, names: o.selections?.[stepName] ?? [] });
    }
    if (action.type !== 'executeTask') continue;
    sim.executed.push({ ...action, now });
    const key = `${action.phase}/${action.step}/${action.taskIndex}/${action.target ?? ''}`;
    const n = (calls.get(key) ?? 0) + 1;
    calls.set(key, n);
    const behaviour =
      (action.target !== undefined ? o.script?.[`${action.taskName}@${action.target}`] : undefined) ??
      o.script?.[action.taskName] ??
      ({ kind: 'done' } as const);
    const outcome = outcomeFor(behaviour, n);
    if (outcome) tasks.push(report(action.phase, action.step, action.taskIndex, outcome, action.target));
  }
  return { tasks, targetsResolved };
}

function outcomeFor(b: Behaviour, call: number): TaskOutcome | undefined {
  switch (b.kind) {
    case 'done':
      return { kind: 'done' };
    case 'progress':
      return call <= b.times ? { kind: 'inProgress', message: b.message ?? 'working' } : { kind: 'done' };
    case 'transient':
      return call <= b.times ? { kind: 'transientError', message: b.message ?? 'flaky' } : { kind: 'done' };
    case 'fatal':
      return { kind: 'fatalError', message: b.message ?? 'broken' };
    case 'silent':
      return undefined;
  }
}

/** "phase/step" of each step in the order it first got asked to execute. */
export function firstExecutionOrder(sim: Simulation): string[] {
  const seen: string[] = [];
  for (const e of sim.executed) {
    const key = `${e.phase}/${e.step}`;
    if (!seen.includes(key)) seen.push(key);
  }
  return seen;
}
