// One evaluation of the active plan run, in the manner of KUDO's workflow.Execute and k0s
// autopilot's command states: (OperatorVersion, status, observations, now) → (status,
// actions). No clock, no client, no I/O; executors perform the actions and report back.
//
// Contract with the caller: persist the returned status (optimistic concurrency) BEFORE
// performing the actions; if the write fails, drop the actions and evaluate again. The
// engine may record a task done and ask for the next one in the same evaluation, so this
// ordering is what makes a restarted controller resume after completed tasks and never
// run a COMPLETE step again.
import type {
  Instance,
  InstanceStatus,
  OperatorVersion,
  PhaseStatus,
  Plan,
  PlanStatus,
  Step,
  StepStatus,
  Task,
  TargetStatus,
} from '../../shared/api/schema.ts';
import { isRunning } from '../../shared/plan/triggers.ts';
import { ensurePlanStatusEntries, isInFlight, pendingPhases, isPlanTerminal, recordHistory, rollUp, stopRunningSteps } from './status.ts';
import { formatDuration, millisOf } from '../../shared/time.ts';
import { jsonEqual } from '../../shared/json.ts';
import { addMillis, backoffMs, toTimestamp } from './time.ts';
import {
  engineOptions,
  type Action,
  type EngineOptions,
  type EventAction,
  type EventReason,
  type ExecuteTaskAction,
  type Observations,
  type TaskOutcome,
} from './types.ts';

export interface AdvancePlanInput {
  ov: OperatorVersion;
  instance: Pick<Instance, 'status'>;
  now: string | Date;
  /** What executors reported since the previous evaluation. */
  observations?: Observations;
  /** Stop the active run: in-flight phases, steps and targets become ABORTED. */
  abort?: boolean;
  options?: Partial<EngineOptions>;
}

export interface Evaluation {
  status: InstanceStatus;
  /** Events first-to-last in the order things happened; executeTask/resolveTargets to perform. */
  actions: Action[];
  /** Evaluate again after this long even if nothing is observed: a retry or a timer is due. */
  requeueAfterMs?: number;
}

/** Evaluates the active run once and says what to do next. */
export function advancePlan(input: AdvancePlanInput): Evaluation {
  const now = toTimestamp(input.now);
  const options = engineOptions(input.options);
  const status = ensurePlanStatusEntries(input.ov, input.instance.status);
  const active = status.activePlan;
  if (!active) return { status, actions: [] };

  const runs = status.planStatus!;
  let run = runs[active.name];
  if (!run || run.id !== active.id) {
    if (!isRunning(active.status)) return { status, actions: [] };
    // The active run's status is gone (hand edit, restore): nothing can be resumed safely.
    if (run) recordHistory(status, active.name, run, options);
    run = {
      status: 'PENDING',
      id: active.id,
      message: 'waiting to start',
      phases: [],
      ...(active.startedAt !== undefined ? { startedAt: active.startedAt } : {}),
    };
    runs[active.name] = run;
    return conclude(newContext(input, now, options, active.name, run), status, structuredClone(run), {
      state: 'FATAL_ERROR',
      message: `the status of run ${active.id} of plan "${active.name}" is missing; trigger the plan again`,
    });
  }
  if (isPlanTerminal(run.status)) {
    active.status = run.status;
    return { status, actions: [] };
  }

  const before = structuredClone(run);
  const ctx = newContext(input, now, options, active.name, run);
  // Stopping needs nothing from the spec, so an abort works even when the spec changed.
  if (input.abort) return conclude(ctx, status, before, { state: 'ABORTED', message: 'aborted on request' });
  const plan = Object.hasOwn(input.ov.spec.plans ?? {}, active.name) ? input.ov.spec.plans[active.name] : undefined;
  if (!plan) {
    return conclude(ctx, status, before, {
      state: 'FATAL_ERROR',
      message: `OperatorVersion "${input.ov.metadata.name ?? ''}" no longer has plan "${active.name}"`,
    });
  }
  // Nothing ran yet, so a missing tree can be built afresh without repeating any work.
  if (run.status === 'PENDING' && run.phases === undefined) run.phases = pendingPhases(plan);
  const mismatch = misalignment(plan, run);
  if (mismatch) {
    return conclude(ctx, status, before, {
      state: 'FATAL_ERROR',
      message: `OperatorVersion "${input.ov.metadata.name ?? ''}" changed under the running plan: ${mismatch}; trigger the plan again to run the new spec`,
    });
  }
  evaluatePhases(ctx, plan, run.phases!);
  return conclude(ctx, status, before);
}

// --- evaluation context ---

interface Context {
  ov: OperatorVersion;
  planName: string;
  run: PlanStatus;
  now: string;
  nowMs: number;
  options: EngineOptions;
  maxAttempts: number;
  actions: Action[];
  /** The first step that failed for good in this evaluation: everything else stops. */
  failed?: StepRef;
  outcomeOf(phase: number, step: number, taskIndex: number, target?: string): TaskOutcome | undefined;
  resolvedTargets(phase: number, step: number): readonly string[] | undefined;
}

interface StepRef {
  phase: number;
  step: number;
  phaseName: string;
  spec: Step;
  status: StepStatus;
}

function newContext(input: AdvancePlanInput, now: string, options: EngineOptions, planName: string, run: PlanStatus): Context {
  const key = (phase: number, step: number, taskIndex: number, target?: string) => JSON.stringify([phase, step, taskIndex, target ?? null]);
  const outcomes = new Map<string, TaskOutcome>();
  for (const o of input.observations?.tasks ?? []) outcomes.set(key(o.phase, o.step, o.taskIndex, o.target), o.outcome);
  const resolved = new Map<string, readonly string[]>();
  for (const r of input.observations?.targetsResolved ?? []) resolved.set(key(r.phase, r.step, -1), r.names);
  const plan = input.ov.spec.plans?.[planName];
  return {
    ov: input.ov,
    planName,
    run,
    now,
    nowMs: millisOf(now),
    options,
    maxAttempts: plan?.maxAttempts ?? options.maxAttempts,
    actions: [],
    outcomeOf: (phase, step, taskIndex, target) => outcomes.get(key(phase, step, taskIndex, target)),
    resolvedTargets: (phase, step) => resolved.get(key(phase, step, -1)),
  };
}

function emit(ctx: Context, reason: EventReason, message: string, warning = false): void {
  const event: EventAction = { type: 'event', reason, message: `plan ${ctx.planName}: ${message}` };
  if (warning) event.warning = true;
  ctx.actions.push(event);
}

const stepLabel = (at: Pick<StepRef, 'phaseName' | 'status'>) => `phase ${at.phaseName} step ${at.status.name}`;

// --- spec / status alignment ---

/** Why the status of a run no longer lines up with the plan's spec, if it does not. */
function misalignment(plan: Plan, run: PlanStatus): string | undefined {
  const phases = run.phases ?? [];
  if (phases.length !== plan.phases.length) {
    return `plan has ${plan.phases.length} phases but the run's status has ${phases.length}`;
  }
  for (const [i, phaseSpec] of plan.phases.entries()) {
    const phase = phases[i]!;
    if (phase.name !== phaseSpec.name) return `phase ${i} is "${phaseSpec.name}" in the spec but "${phase.name}" in the status`;
    if (phase.steps.length !== phaseSpec.steps.length) {
      return `phase ${phase.name} has ${phaseSpec.steps.length} steps in the spec but ${phase.steps.length} in the status`;
    }
    for (const [j, stepSpec] of phaseSpec.steps.entries()) {
      const step = phase.steps[j]!;
      const at = `phase ${phase.name} step ${j}`;
      if (step.name !== stepSpec.name) return `${at} is "${stepSpec.name}" in the spec but "${step.name}" in the status`;
      if ((step.tasksDone ?? 0) > stepSpec.tasks.length) {
        return `${at} has ${stepSpec.tasks.length} tasks in the spec but ${step.tasksDone} are recorded done`;
      }
      if (step.targets !== undefined && stepSpec.targets === undefined) return `${at} no longer fans out over targets`;
      for (const target of step.targets ?? []) {
        if ((target.tasksDone ?? 0) > stepSpec.tasks.length) {
          return `${at} has ${stepSpec.tasks.length} tasks in the spec but ${target.tasksDone} are recorded done on target ${target.name}`;
        }
      }
    }
  }
  return undefined;
}

// --- phases and steps ---

const isParallel = (strategy: string | undefined) => strategy === 'parallel';

function evaluatePhases(ctx: Context, plan: Plan, phases: PhaseStatus[]): void {
  if (ctx.run.status === 'PENDING') {
    emit(
      ctx,
      'PlanStarted',
      `run ${ctx.run.id ?? ''} started${ctx.run.trigger ? ` (trigger: ${ctx.run.trigger})` : ''}${ctx.run.requestedBy ? `, requested by ${ctx.run.requestedBy}` : ''}`,
    );
  }
  for (const [i, phaseSpec] of plan.phases.entries()) {
    if (ctx.failed) break;
    const phase = phases[i]!;
    const mayRun = isParallel(plan.strategy) || phases.slice(0, i).every((p) => p.status === 'COMPLETE');
    if (!mayRun) continue;
    for (const [j, stepSpec] of phaseSpec.steps.entries()) {
      if (ctx.failed) break;
      const mayStart = isParallel(phaseSpec.strategy) || phase.steps.slice(0, j).every((s) => s.status === 'COMPLETE');
      if (!mayStart) continue;
      evaluateStep(ctx, { phase: i, step: j, phaseName: phase.name, spec: stepSpec, status: phase.steps[j]! });
    }
    phase.status = rollUp(phase.steps.map((s) => s.status));
  }
  if (ctx.failed) {
    const failed = ctx.failed;
    stopRunningSteps(ctx.run, ctx.now, `stopped: ${stepLabel(failed)} failed`);
  }
  for (const phase of phases) phase.status = rollUp(phase.steps.map((s) => s.status));
  ctx.run.status = rollUp(phases.map((p) => p.status));
}

function evaluateStep(ctx: Context, at: StepRef): void {
  const step = at.status;
  // Observations only concern a step that was already running before this evaluation:
  // a step that starts or retries now has been asked nothing yet.
  let fresh = true;
  switch (step.status) {
    case 'COMPLETE':
    case 'FATAL_ERROR':
    case 'ABORTED':
      return;
    case 'ERROR':
      if (step.retryAt !== undefined && millisOf(step.retryAt) > ctx.nowMs) return;
      step.status = 'IN_PROGRESS';
      delete step.retryAt;
      delete step.message;
      // A retry is a new attempt: task timers start over.
      if (!at.spec.targets) step.taskStartedAt = ctx.now;
      for (const target of step.targets ?? []) if (target.state === 'SignalSent') target.taskStartedAt = ctx.now;
      break;
    case 'IN_PROGRESS':
      fresh = false;
      break;
    default:
      startStep(ctx, at);
  }
  if (at.spec.targets) evaluateTargets(ctx, at, fresh);
  else evaluateTasks(ctx, at, fresh);
}

function startStep(ctx: Context, at: StepRef): void {
  const step = at.status;
  step.status = 'IN_PROGRESS';
  step.startedAt = ctx.now;
  step.attempts = 0;
  delete step.finishedAt;
  delete step.retryAt;
  delete step.message;
  delete step.targets;
  if (at.spec.targets) {
    delete step.tasksDone;
    delete step.taskStartedAt;
  } else {
    step.tasksDone = 0;
    step.taskStartedAt = ctx.now;
  }
  // No Event: a phase or step that starts is in status (startedAt); Events are for the run's
  // start and end and for what needs a reader (a retry, a failure, an abort).
}

/** "running task app" / "running task app (2/3), attempt 2 of 5". */
function runningMessage(ctx: Context, at: StepRef, taskIndex: number): string {
  const attempt = (at.status.attempts ?? 0) > 0 ? `, attempt ${(at.status.attempts ?? 0) + 1} of ${ctx.maxAttempts}` : '';
  return `running ${taskLabel(at.spec, taskIndex)}${attempt}`;
}

function taskLabel(spec: Step, taskIndex: number): string {
  const name = spec.tasks[taskIndex] ?? `#${taskIndex}`;
  return spec.tasks.length > 1 ? `task ${name} (${taskIndex + 1}/${spec.tasks.length})` : `task ${name}`;
}

/** An executor's progress note, naming the task when the step has several. */
function progressMessage(spec: Step, taskIndex: number, message: string): string {
  return spec.tasks.length > 1 ? `${taskLabel(spec, taskIndex)}: ${message}` : message;
}

/** A step without targets: its tasks in order, resuming after `tasksDone`. */
function evaluateTasks(ctx: Context, at: StepRef, fresh: boolean): void {
  const step = at.status;
  const total = at.spec.tasks.length;
  let done = step.tasksDone ?? 0;
  const outcome = fresh || done >= total ? undefined : ctx.outcomeOf(at.phase, at.step, done);
  switch (outcome?.kind) {
    case 'done':
      done += 1;
      step.tasksDone = done;
      step.taskStartedAt = ctx.now;
      delete step.message;
      break;
    case 'inProgress':
      if (outcome.message) step.message = progressMessage(at.spec, done, outcome.message);
      break;
    case 'transientError':
      failTransiently(ctx, at, `${taskLabel(at.spec, done)} failed: ${outcome.message}`);
      return;
    case 'fatalError':
      failStep(ctx, at, `${taskLabel(at.spec, done)} failed: ${outcome.message}`);
      return;
    case undefined:
      break;
  }
  if (done >= total) {
    completeStep(ctx, at);
    return;
  }
  step.taskStartedAt ??= ctx.now;
  step.message ??= runningMessage(ctx, at, done);
  ctx.actions.push(executeTask(ctx, at, done, step.taskStartedAt));
}

/** A fanned-out step: each target runs the tasks in order, `concurrency` targets at a time. */
function evaluateTargets(ctx: Context, at: StepRef, fresh: boolean): void {
  const step = at.status;
  const spec = at.spec;
  const discovery = spec.targets!.discovery;
  const total = spec.tasks.length;

  if (step.targets === undefined) {
    let names: readonly string[] | undefined;
    if (discovery.static) names = discovery.static.nodes;
    else if (discovery.selector) {
      names = fresh ? undefined : ctx.resolvedTargets(at.phase, at.step);
      if (names === undefined) {
        step.message = 'resolving targets';
        ctx.actions.push({ type: 'resolveTargets', plan: ctx.planName, phase: at.phase, step: at.step, selector: discovery.selector });
        return;
      }
    } else {
      failStep(ctx, at, 'targets.discovery names neither static nodes nor a selector');
      return;
    }
    step.targets = [...new Set(names)].map((name): TargetStatus => ({ name, state: 'Pending' }));
    delete step.message;
  }
  const targets = step.targets;
  if (targets.length === 0) {
    completeStep(ctx, at, 'no targets to run on');
    return;
  }

  let failed: TargetStatus | undefined;
  const erring: TargetStatus[] = [];
  for (const target of fresh ? [] : targets) {
    if (target.state !== 'SignalSent') continue;
    const done = target.tasksDone ?? 0;
    const outcome = ctx.outcomeOf(at.phase, at.step, done, target.name);
    switch (outcome?.kind) {
      case 'done':
        target.tasksDone = done + 1;
        delete target.message;
        if (done + 1 >= total) {
          target.state = 'Completed';
          delete target.taskStartedAt;
        } else target.taskStartedAt = ctx.now;
        break;
      case 'inProgress':
        if (outcome.message) target.message = progressMessage(spec, done, outcome.message);
        break;
      case 'transientError':
        target.message = `${taskLabel(spec, done)} failed: ${outcome.message}`;
        erring.push(target);
        break;
      case 'fatalError':
        target.message = `${taskLabel(spec, done)} failed: ${outcome.message}`;
        target.state = 'Failed';
        delete target.taskStartedAt;
        failed ??= target;
        break;
      case undefined:
        break;
    }
  }
  const stopOthers = (culprit: TargetStatus) => {
    for (const t of targets) {
      if (t.state !== 'SignalSent') continue;
      t.state = 'Aborted';
      t.message = `stopped: target ${culprit.name} failed`;
      delete t.taskStartedAt;
    }
  };
  if (failed) {
    stopOthers(failed);
    failStep(ctx, at, `target ${failed.name}: ${failed.message ?? 'failed'}`);
    return;
  }
  const first = erring[0];
  if (first) {
    const more = erring.length > 1 ? ` (and ${erring.length - 1} more targets)` : '';
    if (failTransiently(ctx, at, `target ${first.name}: ${first.message ?? 'failed'}${more}`) === 'exhausted') {
      for (const t of erring) {
        t.state = 'Failed';
        delete t.taskStartedAt;
      }
      stopOthers(first);
    }
    return;
  }

  // Fill the free slots, in target order.
  const limit = spec.targets!.concurrency ?? 1;
  let inFlight = targets.filter((t) => t.state === 'SignalSent').length;
  for (const target of targets) {
    if (inFlight >= limit) break;
    if (target.state !== 'Pending') continue;
    delete target.message;
    target.tasksDone = 0;
    if (total === 0) {
      target.state = 'Completed';
      continue;
    }
    target.state = 'SignalSent';
    target.taskStartedAt = ctx.now;
    inFlight += 1;
  }
  if (targets.every((t) => t.state === 'Completed')) {
    completeStep(ctx, at);
    return;
  }
  for (const target of targets) {
    if (target.state !== 'SignalSent') continue;
    target.taskStartedAt ??= ctx.now;
    ctx.actions.push(executeTask(ctx, at, target.tasksDone ?? 0, target.taskStartedAt, target.name));
  }
  step.message = targetsMessage(ctx, at, targets);
}

function targetsMessage(ctx: Context, at: StepRef, targets: TargetStatus[]): string {
  const completed = targets.filter((t) => t.state === 'Completed').length;
  const running = targets.filter((t) => t.state === 'SignalSent');
  const noted = running.find((t) => t.message !== undefined);
  const detail = noted ? `${noted.name}: ${noted.message}` : `running on ${running.map((t) => t.name).join(', ')}`;
  const attempts = at.status.attempts ?? 0;
  const attempt = attempts > 0 ? `, attempt ${attempts + 1} of ${ctx.maxAttempts}` : '';
  return `${completed}/${targets.length} targets completed; ${detail}${attempt}`;
}

function executeTask(ctx: Context, at: StepRef, taskIndex: number, taskStartedAt: string, target?: string): ExecuteTaskAction {
  const action: ExecuteTaskAction = {
    type: 'executeTask',
    plan: ctx.planName,
    phase: at.phase,
    step: at.step,
    taskIndex,
    taskName: at.spec.tasks[taskIndex]!,
    taskStartedAt,
  };
  if (target !== undefined) action.target = target;
  return action;
}

function completeStep(ctx: Context, at: StepRef, message?: string): void {
  const step = at.status;
  step.status = 'COMPLETE';
  step.finishedAt = ctx.now;
  delete step.retryAt;
  delete step.taskStartedAt;
  if (message === undefined) delete step.message;
  else step.message = message;
}

function failStep(ctx: Context, at: StepRef, message: string): void {
  const step = at.status;
  step.status = 'FATAL_ERROR';
  step.finishedAt = ctx.now;
  step.message = message;
  delete step.retryAt;
  delete step.taskStartedAt;
  ctx.failed ??= at;
  emit(ctx, 'StepFailed', `${stepLabel(at)} failed: ${message}`, true);
}

/** Counts a failed attempt: ERROR with a backoff, or FATAL_ERROR once attempts run out. */
function failTransiently(ctx: Context, at: StepRef, message: string): 'retry' | 'exhausted' {
  const step = at.status;
  const attempts = (step.attempts ?? 0) + 1;
  step.attempts = attempts;
  if (attempts >= ctx.maxAttempts) {
    failStep(ctx, at, `${message}; retries exhausted after ${attempts} attempts`);
    return 'exhausted';
  }
  const delay = backoffMs(attempts, ctx.options);
  step.status = 'ERROR';
  step.retryAt = addMillis(ctx.now, delay);
  step.message = `${message}; attempt ${attempts} of ${ctx.maxAttempts} failed, retrying in ${formatDuration(delay)}`;
  emit(ctx, 'StepRetrying', `${stepLabel(at)}: ${step.message}`, true);
  return 'retry';
}

// --- concluding an evaluation ---

interface Stop {
  state: 'FATAL_ERROR' | 'ABORTED';
  message: string;
}

/** Messages, terminal bookkeeping, timestamps and the requeue hint shared by every path. */
function conclude(ctx: Context, status: InstanceStatus, before: PlanStatus, stop?: Stop): Evaluation {
  const run = ctx.run;
  if (stop) {
    stopRunningSteps(run, ctx.now, stop.state === 'ABORTED' ? stop.message : `stopped: ${stop.message}`);
    run.status = stop.state;
    run.message = stop.message;
  } else {
    summarize(run);
  }
  summarizePhases(run);
  const terminal = isPlanTerminal(run.status);
  if (terminal) {
    run.finishedAt = ctx.now;
    // A finished run asks nothing more of anyone, whatever this pass had queued before.
    ctx.actions = ctx.actions.filter((a) => a.type === 'event');
    if (run.status === 'COMPLETE') emit(ctx, 'PlanFinished', `run ${run.id ?? ''} completed`);
    else if (run.status === 'ABORTED') emit(ctx, 'PlanAborted', `run ${run.id ?? ''} aborted: ${run.message ?? ''}`, true);
    else emit(ctx, 'PlanFinished', `run ${run.id ?? ''} failed: ${run.message ?? ''}`, true);
  }
  stampChanges(before, run, ctx.now);
  status.activePlan!.status = run.status;
  if (terminal) recordHistory(status, ctx.planName, run, ctx.options);
  const evaluation: Evaluation = { status, actions: ctx.actions };
  const requeue = terminal ? undefined : requeueAfter(ctx, ctx.actions);
  if (requeue !== undefined) evaluation.requeueAfterMs = requeue;
  return evaluation;
}

/** Each phase's message from the step that matters most in it. */
function summarizePhases(run: PlanStatus): void {
  for (const phase of run.phases ?? []) {
    const focus = focusStep(phase.steps);
    if (focus && phase.status !== 'COMPLETE') {
      phase.message = `step ${focus.name}: ${focus.message ?? focus.status.toLowerCase()}`;
    } else delete phase.message;
  }
}

/** The run's message from the step that matters most: failed, retrying, else running. */
function summarize(run: PlanStatus): void {
  const phases = run.phases ?? [];
  if (run.status === 'COMPLETE') {
    run.message = 'completed';
    return;
  }
  if (run.status === 'PENDING') {
    run.message = 'waiting to start';
    return;
  }
  const located = phases.flatMap((phase) => phase.steps.map((step) => ({ phase, step })));
  const focus = focusStep(located.map((l) => l.step));
  const where = located.find((l) => l.step === focus);
  if (!focus || !where) return;
  const others = run.status === 'FATAL_ERROR' ? 0 : located.filter((l) => isInFlight(l.step.status)).length - 1;
  const more = others > 0 ? ` (+${others} more step${others > 1 ? 's' : ''} running)` : '';
  run.message = `phase ${where.phase.name} step ${focus.name}: ${focus.message ?? focus.status.toLowerCase()}${more}`;
}

function focusStep(steps: StepStatus[]): StepStatus | undefined {
  return (
    steps.find((s) => s.status === 'FATAL_ERROR') ??
    steps.find((s) => s.status === 'ERROR') ??
    steps.find((s) => s.status === 'IN_PROGRESS') ??
    steps.find((s) => s.status === 'ABORTED')
  );
}

/** lastUpdatedTimestamp = now on the run, steps and targets whose content changed. */
function stampChanges(before: PlanStatus, after: PlanStatus, now: string): void {
  const beforeSteps = new Map<string, StepStatus>();
  for (const [i, phase] of (before.phases ?? []).entries()) {
    for (const [j, step] of phase.steps.entries()) beforeSteps.set(`${i}/${j}`, step);
  }
  for (const [i, phase] of (after.phases ?? []).entries()) {
    for (const [j, step] of phase.steps.entries()) {
      const old = beforeSteps.get(`${i}/${j}`);
      if (!old || !sameContent(old, step)) step.lastUpdatedTimestamp = now;
      const oldTargets = new Map((old?.targets ?? []).map((t) => [t.name, t]));
      for (const target of step.targets ?? []) {
        const was = oldTargets.get(target.name);
        if (!was || !sameContent(was, target)) target.lastUpdatedTimestamp = now;
      }
    }
  }
  if (!sameContent(before, after)) after.lastUpdatedTimestamp = now;
}

/** Deep equality ignoring key order and lastUpdatedTimestamp. */
function sameContent(a: unknown, b: unknown): boolean {
  return jsonEqual(a, b, ['lastUpdatedTimestamp']);
}

/** The earliest of: a retry falling due, a Dummy task's duration ending, a Wait timing out. */
function requeueAfter(ctx: Context, actions: readonly Action[]): number | undefined {
  const due: number[] = [];
  for (const phase of ctx.run.phases ?? []) {
    for (const step of phase.steps) {
      if (step.status === 'ERROR' && step.retryAt !== undefined) due.push(millisOf(step.retryAt));
    }
  }
  const tasks = new Map<string, Task>((ctx.ov.spec.tasks ?? []).map((t) => [t.name, t]));
  for (const action of actions) {
    if (action.type !== 'executeTask') continue;
    const seconds = timerSeconds(tasks.get(action.taskName));
    if (seconds !== undefined) due.push(millisOf(action.taskStartedAt) + seconds * 1_000);
  }
  const waits = due.map((at) => at - ctx.nowMs).filter((ms) => ms > 0);
  return waits.length > 0 ? Math.min(...waits) : undefined;
}

function timerSeconds(task: Task | undefined): number | undefined {
  if (task?.kind === 'Dummy' && task.spec?.done !== false) return task.spec?.durationSeconds;
  if (task?.kind === 'Wait') return task.spec?.timeoutSeconds;
  return undefined;
}
