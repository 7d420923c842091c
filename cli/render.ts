// What the CLI prints, as pure functions of API objects and a reference time: the status
// tree (the engine's summarizeTree, with terminal colors and local clock times), the history
// table, the one-line progress of a run, and an UpdatePlan's insights.
import { stringify as stringifyYaml } from 'yaml';
import { kubeScalarTags } from '../shared/template/kubeScalars.ts';
import { formatDuration } from '../shared/time.ts';
import { DEFAULT_TIME_ZONE, type HoldReason } from '../shared/calendar.ts';
import { REASON_AWAITING_APPROVAL, REASON_FROZEN } from '../shared/plan/governance.ts';
import { offsetMinutes } from '../shared/wallClock.ts';
import { summarizeTree } from './tree.ts';
import { unacceptedRisks } from '../shared/insights.ts';
import type {
  Condition,
  HistoryEntry,
  Insight,
  InsightResource,
  Instance,
  PlanState,
  PlanStatus,
  TargetState,
  UpdatePlan,
} from '../shared/api/schema.ts';
import { isAccepted, isOpenRisk } from '../shared/insights.ts';
import { inTimeOrder, isRun, isSkippedTick } from '../shared/plan/history.ts';
import { isRunning } from '../shared/plan/triggers.ts';

export interface RenderOptions {
  /** The reference time: durations of running things, and which dates are "today". */
  now: Date;
  /** ANSI colors for states. */
  color?: boolean;
  /** Write times in UTC instead of the local time zone (tests, or TZ-independent output). */
  utc?: boolean;
}

const ANSI = {
  reset: '\x1b[0m',
  bold: '\x1b[1m',
  dim: '\x1b[2m',
  red: '\x1b[31m',
  green: '\x1b[32m',
  yellow: '\x1b[33m',
  magenta: '\x1b[35m',
  cyan: '\x1b[36m',
};

const STATE_COLORS: Record<PlanState | TargetState, string> = {
  COMPLETE: ANSI.green,
  Completed: ANSI.green,
  IN_PROGRESS: ANSI.cyan,
  SignalSent: ANSI.cyan,
  PENDING: ANSI.dim,
  Pending: ANSI.dim,
  NEVER_RUN: ANSI.dim,
  ERROR: ANSI.yellow,
  FATAL_ERROR: ANSI.bold + ANSI.red,
  Failed: ANSI.bold + ANSI.red,
  ABORTED: ANSI.magenta,
  Aborted: ANSI.magenta,
  REJECTED: ANSI.bold + ANSI.red,
  EXPIRED: ANSI.yellow,
};

/** `label` in the color of `state` when colors are on. */
export function paintState(state: PlanState | TargetState, label: string, color: boolean | undefined): string {
  return color ? `${STATE_COLORS[state] ?? ''}${label}${ANSI.reset}` : label;
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/**
 * A timestamp as a person reads it: `13:15:45` today, `2026-11-21 13:15:45` otherwise (or
 * always with `full`).
 */
export function formatClock(iso: string, options: Pick<RenderOptions, 'now' | 'utc'> & { full?: boolean }): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const parts = (x: Date) =>
    options.utc
      ? [x.getUTCFullYear(), x.getUTCMonth() + 1, x.getUTCDate(), x.getUTCHours(), x.getUTCMinutes(), x.getUTCSeconds()]
      : [x.getFullYear(), x.getMonth() + 1, x.getDate(), x.getHours(), x.getMinutes(), x.getSeconds()];
  const [y, mo, day, h, mi, s] = parts(d) as [number, number, number, number, number, number];
  const [ny, nmo, nday] = parts(options.now);
  const clock = `${pad2(h)}:${pad2(mi)}:${pad2(s)}`;
  const today = y === ny && mo === nmo && day === nday;
  return today && !options.full ? clock : `${y}-${pad2(mo)}-${pad2(day)} ${clock}`;
}

/**
 * `iso` as the wall clock of `zone` reads it, with the offset: `2026-11-28 02:30:00 +01:00`.
 * A schedule's ticks are shown so: its cron names times in its own zone, and the offset
 * says the same instant to a reader anywhere (and which side of a DST change it is on).
 */
export function formatInZone(iso: string, zone: string): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  let offset: number;
  try {
    offset = offsetMinutes(zone, at);
  } catch {
    return iso;
  }
  const d = new Date(at + offset * 60_000);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return (
    `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ` +
    `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())} ${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`
  );
}

/** The plan `plan status` shows when none is named: the active one. */
export function shownPlan(instance: Instance, named?: string): string | undefined {
  return named ?? instance.status?.activePlan?.name;
}

/**
 * `plan status`: the run of `plan` as a tree, followed by notes on what else holds the
 * Instance (another active plan, a trigger the controller has not started).
 */
export function renderStatus(instance: Instance, plan: string, run: PlanStatus, options: RenderOptions): string {
  const tree = summarizeTree(run, {
    name: plan,
    now: options.now.toISOString(),
    formatTime: (iso) => formatClock(iso, options),
    paintState: (state, label) => paintState(state, label, options.color),
  });
  return [tree, ...statusNotes(instance, plan, run), ...updateStatusLines(instance, plan, run, options)].join('\n') + '\n';
}

/** The informers' insights about this upgrade run (status.updateStatus, the seed's UpdateStatus). */
function updateStatusLines(instance: Instance, plan: string, run: PlanStatus, options: RenderOptions): string[] {
  const section = instance.status?.updateStatus;
  if (section === undefined || section.plan !== plan || section.id !== run.id) return [];
  const active = condition(section.conditions, 'UpdateActive');
  const to = section.operatorVersion ? ` to ${section.operatorVersion}` : '';
  const lines = [
    `update status${to}: UpdateActive ${active?.status ?? 'Unknown'}${active?.reason ? ` (${active.reason})` : ''}${active?.message ? `: ${active.message}` : ''}`,
  ];
  for (const informer of section.informers ?? []) {
    lines.push(`  informer ${informer.name}: ${informer.response}${informer.message ? `: ${informer.message}` : ''}`);
    for (const i of informer.insights ?? []) {
      const details = [describeScope(i.scope), describeRemediation(i, options)].filter((d) => d !== undefined);
      const resolved = i.remediation?.resolved === true ? ' (resolved)' : '';
      lines.push(`    ${i.uid} ${i.impact.level}: ${i.impact.summary}${resolved}${details.length > 0 ? ` [${details.join('; ')}]` : ''}`);
    }
  }
  return lines;
}

function statusNotes(instance: Instance, plan: string, run: PlanStatus): string[] {
  const notes: string[] = [];
  const active = instance.status?.activePlan;
  if (active && active.name !== plan && isRunning(active.status)) {
    notes.push(`note: plan "${active.name}" is ${active.status} (run ${active.id})`);
  }
  const planRunning = condition(instance.status?.conditions, 'PlanRunning');
  // Not again when the run shown is the held one: its message is already under the tree's head.
  if (planRunning && isHoldOrRefusal(planRunning.reason) && planRunning.message !== run.message) {
    notes.push(`note: ${planRunning.message ?? planRunning.reason}`);
  }
  return notes;
}

/** Whether a PlanRunning reason says a request is refused or held (NOTED_REASONS). */
const isHoldOrRefusal = (reason: string | undefined): boolean => reason !== undefined && NOTED_REASONS.has(reason);

/**
 * Why a requested run has not started, for the progress of --wait: the PlanRunning message
 * while another plan runs, or while maintenance or a PlanPolicy holds the request.
 */
export function whyNotStarted(instance: Instance): string | undefined {
  const planRunning = condition(instance.status?.conditions, 'PlanRunning');
  return isRunning(instance.status?.activePlan?.status) || isHoldOrRefusal(planRunning?.reason) ? planRunning?.message : undefined;
}

/**
 * The PlanRunning reasons that say a request is refused or held — by maintenance, a
 * PlanPolicy's approvals or freeze — which `plan status` notes under any plan it shows.
 */
const NOTED_REASONS = new Set<string>([
  'TriggerRefused',
  'PlanBusy',
  ...(['Paused', 'AwaitingWindow'] satisfies HoldReason[]),
  REASON_AWAITING_APPROVAL,
  REASON_FROZEN,
]);

export function condition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Steps of `run` that are COMPLETE, and all of them. */
function stepCounts(run: PlanStatus): { complete: number; total: number } {
  const steps = (run.phases ?? []).flatMap((p) => p.steps);
  return { complete: steps.filter((s) => s.status === 'COMPLETE').length, total: steps.length };
}

/**
 * One line on where a run is, for the progress display of --wait: its state, steps done
 * and what it is doing now. `run` undefined: it has not started.
 */
export function progressText(plan: string, run: PlanStatus | undefined, waitingFor?: string): string {
  if (!run) return `waiting for plan "${plan}" to start${waitingFor ? `: ${waitingFor}` : ''}`;
  const { complete, total } = stepCounts(run);
  const steps = total > 0 ? `, ${complete}/${total} steps complete` : '';
  return `plan ${plan} ${run.status}${steps}${run.message ? `: ${run.message}` : ''}`;
}

/** The closing line of a followed run. */
export function outcomeText(plan: string, run: Pick<PlanStatus, 'status' | 'id' | 'startedAt' | 'finishedAt' | 'message'>): string {
  const start = Date.parse(run.startedAt ?? '');
  const end = Date.parse(run.finishedAt ?? '');
  const took = Number.isNaN(start) || Number.isNaN(end) ? '' : ` in ${formatDuration(end - start)}`;
  const message = run.message && run.status !== 'COMPLETE' ? `: ${run.message}` : '';
  return `plan ${plan} ${run.status}${took} (run ${run.id ?? '?'})${message}`;
}

/**
 * Left-aligned columns two spaces apart, kubectl style; the last column is not padded.
 * `paint` decorates a laid-out body cell (escape codes must not count as width).
 */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  paint?: (row: number, column: number, padded: string) => string,
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[], row?: number) =>
    cells
      .map((c, i) => {
        const padded = i === cells.length - 1 ? c : c.padEnd(widths[i]!);
        return row !== undefined && paint ? paint(row, i, padded) : padded;
      })
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map((r, i) => line(r, i))].join('\n') + '\n';
}

/**
 * `plan history`: the runs and skipped schedule ticks in status.history and the active run
 * when it is still in flight (history records runs when they end), in the order they
 * happened: a run by its start, a skipped tick by its tick time.
 */
export function historyRows(instance: Instance, plan?: string): HistoryEntry[] {
  const status = instance.status;
  const rows = [...(status?.history ?? [])];
  const active = status?.activePlan;
  if (active && isRunning(active.status) && !rows.some((h) => h.plan === active.name && h.id === active.id)) {
    const run = status?.planStatus?.[active.name];
    rows.push({
      plan: active.name,
      id: active.id,
      status: run?.id === active.id ? run.status : active.status,
      trigger: run?.id === active.id ? run.trigger : undefined,
      requestedBy: run?.id === active.id ? run.requestedBy : undefined,
      parameters: run?.id === active.id ? run.parameters : undefined,
      parametersFrom: run?.id === active.id ? run.parametersFrom : undefined,
      startedAt: active.startedAt ?? (run?.id === active.id ? run.startedAt : undefined),
    });
  }
  return inTimeOrder(plan === undefined ? rows : rows.filter((h) => h.plan === plan));
}

export function renderHistory(rows: readonly HistoryEntry[], options: RenderOptions): string {
  if (rows.length === 0) return 'no runs recorded\n';
  const time = (iso: string | undefined) => (iso === undefined ? '-' : formatClock(iso, { ...options, full: true }));
  const duration = (h: HistoryEntry) => {
    const start = Date.parse(h.startedAt ?? '');
    if (Number.isNaN(start)) return '-';
    const end =
      h.finishedAt !== undefined ? Date.parse(h.finishedAt) : isRun(h) && isRunning(h.status) ? options.now.getTime() : Number.NaN;
    return Number.isNaN(end) ? '-' : formatDuration(end - start);
  };
  // A skipped tick never started: its message says which tick and why, after the reason.
  const message = (h: HistoryEntry) => (isSkippedTick(h) && h.tick ? `${h.tick.reason}: ${h.message ?? ''}` : (h.message ?? ''));
  const header = ['PLAN', 'ID', 'STATUS', 'TRIGGER', 'REQUESTED BY', 'STARTED', 'FINISHED', 'DURATION', 'MESSAGE'];
  const body = rows.map((h) => [
    h.plan,
    h.id,
    h.status,
    h.trigger ?? '-',
    h.requestedBy ?? '-',
    time(h.startedAt),
    time(h.finishedAt),
    duration(h),
    message(h),
  ]);
  const statusColumn = header.indexOf('STATUS');
  return table(header, body, (row, column, padded) => {
    const h = rows[row]!;
    if (column !== statusColumn) return padded;
    return isRun(h) ? paintState(h.status, padded, options.color) : options.color ? `${ANSI.yellow}${padded}${ANSI.reset}` : padded;
  });
}

/** One row per schedule: name, plan, cron and zone, next tick, last tick and what it did. */
export function scheduleRows(
  inst: Instance,
): { name: string; plan: string; schedule: string; timeZone: string; next?: string; last?: string; lastResult: string }[] {
  const states = new Map((inst.status?.schedules ?? []).map((s) => [s.name, s]));
  return (inst.spec.schedules ?? []).map((s) => {
    const st = states.get(s.name);
    const timeZone = s.timeZone ?? DEFAULT_TIME_ZONE;
    const skipped =
      st?.lastSkip && st.lastSkip.time === st.lastScheduleTime ? `${st.lastSkip.reason}: ${st.lastSkip.message ?? ''}` : undefined;
    const lastResult =
      s.suspend === true
        ? 'suspended'
        : (skipped ?? (st?.lastRunId ? `started ${st.lastRunId}` : st?.lastScheduleTime ? '-' : 'no tick yet'));
    return {
      name: s.name,
      plan: s.plan,
      schedule: `${s.schedule} ${timeZone}`,
      timeZone,
      ...(st?.nextScheduleTime ? { next: st.nextScheduleTime } : {}),
      ...(st?.lastScheduleTime ? { last: st.lastScheduleTime } : {}),
      lastResult: st?.waitingTick ? `${lastResult} (tick ${st.waitingTick} waits)` : lastResult,
    };
  });
}

/** The schedules as a table; NEXT and LAST in each schedule's own zone, with the offset (the same whatever the reader's zone). */
export function renderSchedules(rows: ReturnType<typeof scheduleRows>): string {
  if (rows.length === 0) return 'no schedules (spec.schedules)\n';
  return table(
    ['NAME', 'PLAN', 'SCHEDULE', 'NEXT', 'LAST', 'LAST RESULT'],
    rows.map((r) => {
      const time = (iso: string | undefined) => (iso === undefined ? '-' : formatInZone(iso, r.timeZone));
      return [r.name, r.plan, r.schedule, time(r.next), time(r.last), r.lastResult];
    }),
  );
}

function describeScope(scope: Insight['scope']): string | undefined {
  if (scope === undefined) return undefined;
  const ref = (r: InsightResource) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
  const parts = [...(scope.workerPool ?? []).map((r) => `pool ${ref(r)}`), ...(scope.resources ?? []).map(ref)];
  return `${scope.type}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`;
}

function describeRemediation(insight: Insight, options: Pick<RenderOptions, 'now' | 'utc'>): string | undefined {
  const r = insight.remediation;
  const parts = [
    r?.reference,
    r?.estimatedFinish === undefined ? undefined : `estimated finish ${formatClock(r.estimatedFinish, options)}`,
  ].filter((p): p is string => p !== undefined && p !== '');
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/**
 * An UpdatePlan's analysis: the Analyzed condition, then each informer's findings and
 * insights — level, whether it blocks the upgrade, summary, scope and remediation.
 */
export function renderPreChecks(plan: UpdatePlan, options: Pick<RenderOptions, 'now' | 'utc'>): string {
  const out: string[] = [];
  const name = plan.metadata.name ?? '';
  const analyzed = condition(plan.status?.conditions, 'Analyzed');
  out.push(
    `UpdatePlan ${name} (target ${plan.spec.targetRelease}): Analyzed ${analyzed?.status ?? 'Unknown'}` +
      `${analyzed?.reason ? ` (${analyzed.reason})` : ''}${analyzed?.message ? `: ${analyzed.message}` : ''}`,
  );
  const informers = plan.status?.informers ?? [];
  if (informers.length === 0) out.push('no informer has reported on this target');
  for (const informer of informers) {
    out.push('');
    out.push(`informer ${informer.name}: ${informer.response}${informer.message ? `: ${informer.message}` : ''}`);
    for (const finding of informer.findings ?? []) out.push(`  finding: ${finding}`);
    const insights = informer.insights ?? [];
    if (insights.length === 0) {
      out.push('  no insights');
      continue;
    }
    const rows = insights.map((i) => {
      const blocks = !isOpenRisk(i) ? 'no' : isAccepted(plan.spec.acceptedInsights, informer.name, i) ? 'accepted' : 'yes';
      const level = i.impact.reportedLevel ? `${i.impact.level} (${i.impact.reportedLevel})` : i.impact.level;
      const summary = `${i.impact.summary}${i.remediation?.resolved === true ? ' (resolved)' : ''}`;
      return [i.uid, level, blocks, summary];
    });
    out.push(
      ...table(['UID', 'LEVEL', 'BLOCKS', 'SUMMARY'], rows)
        .trimEnd()
        .split('\n')
        .map((l) => `  ${l}`),
    );
    for (const i of insights) {
      const scope = describeScope(i.scope);
      const remediation = describeRemediation(i, options);
      if (scope !== undefined) out.push(`  ${i.uid} scope: ${scope}`);
      if (remediation !== undefined) out.push(`  ${i.uid} remediation: ${remediation}`);
    }
  }
  out.push('');
  const pending = unacceptedRisks(plan).map((r) => `${r.informer}/${r.insight.uid} (${r.insight.impact.level})`);
  out.push(
    pending.length === 0
      ? 'no insight blocks the upgrade: every unresolved risk is accepted'
      : `${pending.length} ${pending.length === 1 ? 'insight needs' : 'insights need'} acceptance before the upgrade: ${pending.join(', ')}`,
  );
  return out.join('\n') + '\n';
}

/** One task of a plan as `render` prints it: where it runs, and what it applies or deletes. */
export interface RenderedTask {
  phase: string;
  step: string;
  task: string;
  kind: string;
  target?: string;
  objects: readonly { template: string; object: Record<string, unknown> }[];
  waitFor?: { apiVersion: string; kind: string; name: string; namespace?: string };
}

const objectName = (o: Record<string, unknown>) => {
  const meta = (o.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  return `${String(o.kind)} ${typeof meta.namespace === 'string' ? `${meta.namespace}/` : ''}${typeof meta.name === 'string' ? meta.name : '?'}`;
};

/**
 * `render`: a plan's objects as YAML documents in the order the plan applies them, each
 * under a comment naming its template and task (as `helm template` names its Source). What
 * a Delete task removes and what a Wait task awaits are comments, not documents: piping the
 * output to `kubectl apply -f -` applies exactly what the plan's Apply tasks would.
 */
export function renderPlanYaml(plan: string, tasks: readonly RenderedTask[], header: readonly string[] = []): string {
  const out: string[] = header.map((h) => `# ${h}`);
  for (const t of tasks) {
    const where = `plan ${plan}, phase ${t.phase}, step ${t.step}, task ${t.task} (${t.kind})${t.target !== undefined ? `, target ${t.target}` : ''}`;
    if (t.kind === 'Delete') {
      out.push(`# ${where} deletes:`, ...t.objects.map((o) => `#   ${objectName(o.object)} (template ${o.template})`));
      continue;
    }
    if (t.kind === 'Wait') {
      const w = t.waitFor;
      out.push(`# ${where} waits for ${w ? `${w.kind} ${w.namespace ? `${w.namespace}/` : ''}${w.name}` : 'an object'}`);
      continue;
    }
    if (t.objects.length === 0) out.push(`# ${where}: no objects`);
    for (const o of t.objects) {
      out.push('---', `# Source: ${o.template} (${where})`, toYamlText(o.object).trimEnd());
    }
  }
  return `${out.join('\n')}\n`;
}

/** YAML that kubectl reads back as the same value: a string "yes" or "0755" is quoted (see kubeScalars.ts). */
function toYamlText(value: unknown): string {
  return stringifyYaml(value, { lineWidth: 0, customTags: kubeScalarTags });
}
