// The plan engine: a pure state machine over Instance status. startPlan consumes a
// trigger, advancePlan evaluates the active run and returns the actions executors perform.
export { advancePlan, type AdvancePlanInput, type Evaluation } from './advance.ts';
export { startPlan, type StartPlanInput } from './start.ts';
export { ensurePlanStatusEntries, isPlanTerminal } from './status.ts';
export { backoffMs } from './time.ts';
export {
  DEFAULT_ENGINE_OPTIONS,
  EVENT_REASONS,
  type Action,
  type EngineOptions,
  type EventAction,
  type EventReason,
  type ExecuteTaskAction,
  type Observations,
  type ResolveTargetsAction,
  type TargetsResolution,
  type TaskObservation,
  type TaskOutcome,
} from './types.ts';
