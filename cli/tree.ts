// A plan run as a plain-text tree (plan → phases → steps → targets), for the CLI's
// `plan status` and the demo: state, strategy, progress, last update and message per node.
import { formatDuration } from '../shared/time.ts';
import type { PhaseStatus, PlanState, PlanStatus, StepStatus, TargetState, TargetStatus } from '../shared/api/schema.ts';

export interface TreeOptions {
  /** The plan's name; a PlanStatus does not carry it. */
  name?: string;
  /** Decorates a state label such as `[COMPLETE]` (the CLI colors it on a terminal). */
  paintState?: (state: PlanState | TargetState, label: string) => string;
  /** Writes a timestamp; the stored ISO string when absent. */
  formatTime?: (iso: string) => string;
  /**
   * The reference time. When given, runs and steps show how long they took (`took 2.0s`)
   * or, while in flight, how long they have been running (`running for 5s`).
   */
  now?: string;
}

export interface Node {
  line: string;
  children: Node[];
}

/**
 * ```
 * Plan deploy [IN_PROGRESS] serial, run r1, trigger create, started 2026-01-01T00:00:00Z, updated 2026-01-01T00:00:05Z
 *   phase main step app: waiting for rollout
 * ├── Phase main [IN_PROGRESS] parallel: step app: waiting for rollout
 * │   ├── Step app [IN_PROGRESS] tasks done 0, updated 2026-01-01T00:00:05Z: waiting for rollout
 * │   │   └── Target worker0 [SignalSent] updated 2026-01-01T00:00:05Z
 * │   └── Step db [COMPLETE] tasks done 1, finished 2026-01-01T00:00:03Z
 * └── Phase post [PENDING] serial
 * ```
 */
export function summarizeTree(run: PlanStatus, options: TreeOptions = {}): string {
  const s = style(options);
  const head = [`Plan${options.name ? ` ${options.name}` : ''} ${s.state(run.status)}`];
  const facts = [
    run.strategy,
    run.id !== undefined ? `run ${run.id}` : undefined,
    run.trigger !== undefined ? `trigger ${run.trigger}` : undefined,
    run.operatorVersion !== undefined ? `operatorVersion ${run.operatorVersion}` : undefined,
    run.startedAt !== undefined ? `started ${s.time(run.startedAt)}` : undefined,
    run.finishedAt !== undefined ? `finished ${s.time(run.finishedAt)}` : undefined,
    s.took(run.startedAt, run.finishedAt, run.status),
    run.lastUpdatedTimestamp !== undefined ? `updated ${s.time(run.lastUpdatedTimestamp)}` : undefined,
  ].filter((f): f is string => f !== undefined);
  if (facts.length > 0) head.push(facts.join(', '));
  const lines = [head.join(' ')];
  if (run.message !== undefined) lines.push(`  ${run.message}`);
  lines.push(
    ...render(
      (run.phases ?? []).map((phase) => phaseNode(phase, s)),
      '',
    ),
  );
  return lines.join('\n');
}

interface Style {
  state(state: PlanState | TargetState): string;
  time(iso: string): string;
  took(startedAt: string | undefined, finishedAt: string | undefined, state: PlanState): string | undefined;
}

function style(options: TreeOptions): Style {
  const now = options.now !== undefined ? Date.parse(options.now) : Number.NaN;
  return {
    state: (state) => (options.paintState ? options.paintState(state, `[${state}]`) : `[${state}]`),
    time: options.formatTime ?? ((iso) => iso),
    took: (startedAt, finishedAt, state) => {
      const start = Date.parse(startedAt ?? '');
      if (Number.isNaN(now) || Number.isNaN(start)) return undefined;
      if (finishedAt !== undefined) {
        const end = Date.parse(finishedAt);
        return Number.isNaN(end) ? undefined : `took ${formatDuration(end - start)}`;
      }
      const inFlight = state === 'PENDING' || state === 'IN_PROGRESS' || state === 'ERROR';
      return inFlight ? `running for ${formatDuration(now - start)}` : undefined;
    },
  };
}

function phaseNode(phase: PhaseStatus, s: Style): Node {
  const strategy = phase.strategy !== undefined ? ` ${phase.strategy}` : '';
  return {
    line: `Phase ${phase.name} ${s.state(phase.status)}${strategy}${note(phase.message)}`,
    children: phase.steps.map((step) => stepNode(step, s)),
  };
}

function stepNode(step: StepStatus, s: Style): Node {
  const facts = [
    step.tasksDone !== undefined ? `tasks done ${step.tasksDone}` : undefined,
    step.attempts ? `failed attempts ${step.attempts}` : undefined,
    step.retryAt !== undefined ? `retry at ${s.time(step.retryAt)}` : undefined,
    step.finishedAt !== undefined ? `finished ${s.time(step.finishedAt)}` : undefined,
    s.took(step.startedAt, step.finishedAt, step.status),
    step.finishedAt === undefined && step.lastUpdatedTimestamp !== undefined ? `updated ${s.time(step.lastUpdatedTimestamp)}` : undefined,
  ].filter((f): f is string => f !== undefined);
  return {
    line: `Step ${step.name} ${s.state(step.status)}${facts.length > 0 ? ` ${facts.join(', ')}` : ''}${note(step.message)}`,
    children: (step.targets ?? []).map((target) => targetNode(target, s)),
  };
}

function targetNode(target: TargetStatus, s: Style): Node {
  const facts = [
    target.tasksDone !== undefined ? `tasks done ${target.tasksDone}` : undefined,
    target.lastUpdatedTimestamp !== undefined ? `updated ${s.time(target.lastUpdatedTimestamp)}` : undefined,
  ].filter((f): f is string => f !== undefined);
  return {
    line: `Target ${target.name} ${s.state(target.state)}${facts.length > 0 ? ` ${facts.join(', ')}` : ''}${note(target.message)}`,
    children: [],
  };
}

const note = (message: string | undefined) => (message !== undefined && message !== '' ? `: ${message}` : '');

/** Nodes as tree lines (├── / └──), each child indented under its parent. */
export function render(nodes: Node[], indent = ''): string[] {
  return nodes.flatMap((node, i) => {
    const last = i === nodes.length - 1;
    return [`${indent}${last ? '└── ' : '├── '}${node.line}`, ...render(node.children, `${indent}${last ? '    ' : '│   '}`)];
  });
}
