// The plan engine's vocabulary: what executors report back (observations), what the
// engine asks them to do (actions), and the knobs of its retry and history policy.
import type { LabelSelector } from '../../shared/api/schema.ts';
import { DEFAULT_HISTORY_LIMITS } from '../../shared/plan/history.ts';

/** What an executor saw of one task on one step (and target). */
export type TaskOutcome =
  | { kind: 'done'; message?: string }
  | { kind: 'inProgress'; message?: string }
  | { kind: 'transientError'; message: string }
  | { kind: 'fatalError'; message: string };

/**
 * The outcome of task `taskIndex` of step (phase, step), on `target` for a fanned-out step.
 * An observation whose taskIndex is not the task the status says is current is stale and
 * ignored, so re-delivering an old report can never skip a task.
 */
export interface TaskObservation {
  phase: number;
  step: number;
  taskIndex: number;
  target?: string;
  outcome: TaskOutcome;
}

/** The targets a selector-based step resolved to, answering a `resolveTargets` action. */
export interface TargetsResolution {
  phase: number;
  step: number;
  names: readonly string[];
}

/** Everything executors reported since the previous evaluation. */
export interface Observations {
  tasks?: readonly TaskObservation[];
  targetsResolved?: readonly TargetsResolution[];
}

/**
 * Run (or check on) one task. Executors must be idempotent — server-side apply, "is it
 * there yet" — because the engine asks again on every evaluation until it observes `done`.
 */
export interface ExecuteTaskAction {
  type: 'executeTask';
  plan: string;
  phase: number;
  step: number;
  taskIndex: number;
  taskName: string;
  target?: string;
  /** When this task started (reset on each retry): Wait timeouts and Dummy durations count from it. */
  taskStartedAt: string;
}

/** List the objects a step's selector matches; answer with a TargetsResolution. */
export interface ResolveTargetsAction {
  type: 'resolveTargets';
  plan: string;
  phase: number;
  step: number;
  selector: LabelSelector;
}

/**
 * The Events a run records: its start and end, and per step only what a reader must see (a
 * retry, a failure; an abort is PlanAborted). Phases and steps that start or complete are in
 * status alone: one Event per step would cost the API server a write each (issue 26).
 */
export const EVENT_REASONS = ['PlanStarted', 'StepFailed', 'StepRetrying', 'PlanFinished', 'PlanAborted'] as const;
export type EventReason = (typeof EVENT_REASONS)[number];

/** A Kubernetes Event to record on the Instance. */
export interface EventAction {
  type: 'event';
  reason: EventReason;
  message: string;
  warning?: boolean;
}

export type Action = ExecuteTaskAction | ResolveTargetsAction | EventAction;

export interface EngineOptions {
  /** Attempts per step when the plan does not set maxAttempts. */
  maxAttempts: number;
  /** Backoff after the n-th failed attempt: min(cap, base · 2^(n-1)). */
  backoffBaseMs: number;
  backoffCapMs: number;
  /** Finished runs kept in status.history per plan. */
  historyPerPlan: number;
  /** Entries (runs and skipped ticks) kept in status.history overall (the CRD allows 100). */
  historyTotal: number;
}

export const DEFAULT_ENGINE_OPTIONS: Readonly<EngineOptions> = {
  maxAttempts: 5,
  backoffBaseMs: 1_000,
  backoffCapMs: 60_000,
  historyPerPlan: DEFAULT_HISTORY_LIMITS.perPlan,
  historyTotal: DEFAULT_HISTORY_LIMITS.total,
};

export function engineOptions(overrides: Partial<EngineOptions> | undefined): EngineOptions {
  return { ...DEFAULT_ENGINE_OPTIONS, ...overrides };
}
