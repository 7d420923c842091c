// Status bookkeeping shared by the engine's transitions: building a run's status tree,
// rolling step states up to phases and plans, stopping a run, and the bounded history.
// Pure: functions either return new values or edit only the value they are handed.
import { TERMINAL_STATES } from '../../shared/api/schema.ts';
import type {
  HistoryEntry,
  InstanceStatus,
  OperatorVersion,
  PhaseStatus,
  Plan,
  PlanState,
  PlanStatus,
  StepStatus,
} from '../../shared/api/schema.ts';
import { boundHistory, DEFAULT_HISTORY_LIMITS } from '../../shared/plan/history.ts';
import type { EngineOptions } from './types.ts';

/** Nothing left to do for a run in this state: it finished (or never started). */
export function isPlanTerminal(state: PlanState | undefined): boolean {
  return state !== undefined && TERMINAL_STATES.includes(state);
}

/** A step, phase or plan that has started and not finished. */
export function isInFlight(state: PlanState): boolean {
  return state === 'IN_PROGRESS' || state === 'ERROR';
}

/**
 * The state of a parent from its children's: a failure or abort wins, then completion of
 * all, then a pending retry, then "something started".
 */
export function rollUp(states: readonly PlanState[]): PlanState {
  if (states.includes('FATAL_ERROR')) return 'FATAL_ERROR';
  if (states.includes('ABORTED')) return 'ABORTED';
  if (states.every((s) => s === 'COMPLETE')) return 'COMPLETE';
  if (states.includes('ERROR')) return 'ERROR';
  if (states.some((s) => s === 'IN_PROGRESS' || s === 'COMPLETE')) return 'IN_PROGRESS';
  return 'PENDING';
}

/** Phases and steps of a fresh run, index-aligned with the plan's spec, all PENDING. */
export function pendingPhases(plan: Plan): PhaseStatus[] {
  return plan.phases.map((phase) => ({
    name: phase.name,
    strategy: phase.strategy ?? 'serial',
    status: 'PENDING',
    steps: phase.steps.map((step): StepStatus => ({ name: step.name, status: 'PENDING', attempts: 0 })),
  }));
}

/**
 * Every running step of `run` becomes ABORTED with `message`, and its in-flight targets
 * Aborted; COMPLETE, failed and never-started steps keep their state. Phases roll up again.
 */
export function stopRunningSteps(run: PlanStatus, now: string, message: string): void {
  for (const phase of run.phases ?? []) {
    for (const step of phase.steps) {
      if (!isInFlight(step.status)) continue;
      step.status = 'ABORTED';
      step.finishedAt = now;
      step.message = message;
      delete step.retryAt;
      delete step.taskStartedAt;
      for (const target of step.targets ?? []) {
        if (target.state !== 'SignalSent') continue;
        target.state = 'Aborted';
        target.message = message;
        delete target.taskStartedAt;
      }
    }
    phase.status = rollUp(phase.steps.map((s) => s.status));
  }
}

/**
 * status.planStatus with exactly one entry per plan of the OperatorVersion (NEVER_RUN for
 * plans never run). Entries of plans the OperatorVersion no longer has are dropped, except
 * the active plan's, so a stale running entry cannot block other plans forever.
 */
export function ensurePlanStatusEntries(ov: OperatorVersion, status: InstanceStatus | undefined): InstanceStatus {
  const out: InstanceStatus = structuredClone(status ?? {});
  const previous = out.planStatus ?? {};
  const entries: Record<string, PlanStatus> = {};
  for (const name of Object.keys(ov.spec.plans ?? {}).sort()) {
    entries[name] = Object.hasOwn(previous, name) ? previous[name]! : { status: 'NEVER_RUN' };
  }
  const active = out.activePlan?.name;
  if (active !== undefined && !Object.hasOwn(entries, active) && Object.hasOwn(previous, active)) {
    entries[active] = previous[active]!;
  }
  out.planStatus = entries;
  return out;
}

/** The history line of a run; undefined for a run without identity (never started). */
export function historyEntryOf(plan: string, run: PlanStatus): HistoryEntry | undefined {
  if (run.id === undefined || run.status === 'NEVER_RUN') return undefined;
  const entry: HistoryEntry = { plan, id: run.id, status: run.status };
  if (run.trigger !== undefined) entry.trigger = run.trigger;
  if (run.operatorVersion !== undefined) entry.operatorVersion = run.operatorVersion;
  if (run.startedAt !== undefined) entry.startedAt = run.startedAt;
  if (run.finishedAt !== undefined) entry.finishedAt = run.finishedAt;
  if (run.message !== undefined) entry.message = run.message;
  if (run.parameters !== undefined) entry.parameters = { ...run.parameters };
  if (run.parametersFrom !== undefined) entry.parametersFrom = structuredClone(run.parametersFrom);
  if (run.requestedBy !== undefined) entry.requestedBy = run.requestedBy;
  if (run.approvedBy !== undefined) entry.approvedBy = [...run.approvedBy];
  if (run.breakGlass !== undefined) entry.breakGlass = run.breakGlass;
  return entry;
}

const sameRun = (a: HistoryEntry, b: HistoryEntry) => a.plan === b.plan && a.id === b.id && a.startedAt === b.startedAt;

/**
 * Records a run in status.history (oldest first), replacing an entry of the same run, and
 * keeps the last `historyPerPlan` runs of each plan and `historyTotal` entries overall
 * (skipped schedule ticks count against their schedule, not the plan: shared/plan/history.ts).
 */
export function recordHistory(status: InstanceStatus, plan: string, run: PlanStatus, options: EngineOptions): void {
  const entry = historyEntryOf(plan, run);
  if (!entry) return;
  const history = status.history ?? [];
  const at = history.findIndex((h) => sameRun(h, entry));
  if (at >= 0) history[at] = entry;
  else history.push(entry);
  status.history = boundHistory(history, { ...DEFAULT_HISTORY_LIMITS, perPlan: options.historyPerPlan, total: options.historyTotal });
}
