// The FleetRollout decision: (the rollout's spec and status, its targets' Instances, now) →
// the triggers to write and the status to record. Pure; the reconciler (reconciler.ts) loads
// the inputs, asks the API server whether the author may patch each target, writes, and
// feeds what happened back through recordOutcomes.
//
// Restart safety: the targets are resolved once and kept in status (names by namespace; one
// state letter each). A target's progress is read from its Instance (the run with the
// rollout's run id), and a state that ended (Completed, Failed, Skipped) is never read again.
// A target is recorded Running in status *before* its trigger is written; a Running target
// whose Instance shows no sign of the trigger after TRIGGER_GRACE_MS gets the same write again
// (same id: the Instance's trigger policy never runs one id twice), so a crash between the
// status write and the trigger write neither loses nor doubles a run.
//
// Bounded status: `resolved` holds the names (about 25 bytes a target), `states` one letter a
// target, `targets` the details of at most MAX_LISTED_TARGETS (every target while there are
// no more; past that, Failed, Waiting, Running and Skipped ones, failed first). 10,000 targets
// come to about 300 KB, far below etcd's 1.5 MiB.
import {
  MAX_LISTED_TARGETS,
  type Condition,
  type FleetCounts,
  type FleetRollout,
  type FleetRolloutStatus,
  type FleetTarget,
  type FleetTargetState,
  type Instance,
} from '../../shared/api/schema.ts';
import { findCondition, setCondition } from '../../shared/conditions/conditions.ts';
import { counted } from '../../shared/text.ts';
import { fleetAction, fleetRunId, parseAuthor, waveEnds, waveOf, AUTHOR_ANNOTATION, type FleetMark } from '../../shared/fleet.ts';

/** A Running target with no sign of its trigger on the Instance after this long is written again. */
export const TRIGGER_GRACE_MS = 30_000;
/** Backoff of a trigger refused for now: 5 s, doubling, at most 5 min. */
export const RETRY_BASE_MS = 5_000;
export const RETRY_MAX_MS = 5 * 60_000;
/** Reasons of an Instance's PlanRunning condition while its plan is held (issue 23: maintenance windows, pause). */
export const HELD_REASONS: readonly string[] = ['Paused', 'AwaitingWindow', 'AwaitingApproval', 'Frozen'];

const LETTER: Record<FleetTargetState, string> = { Pending: 'P', Waiting: 'W', Running: 'R', Completed: 'C', Failed: 'F', Skipped: 'S' };
const STATE_OF: Record<string, FleetTargetState> = Object.fromEntries(Object.entries(LETTER).map(([s, l]) => [l, s as FleetTargetState]));
const ENDED: readonly FleetTargetState[] = ['Completed', 'Failed', 'Skipped'];

export interface TriggerWrite {
  namespace: string;
  name: string;
  /** plan: a manual trigger with this id; upgrade: spec.operatorVersion. */
  plan?: { name: string; parameters?: Record<string, string> };
  upgrade?: { operatorVersion: string };
  runId: string;
  mark: FleetMark;
  /** The author, for the SubjectAccessReview before the write. */
  author: { username: string; groups: string[] };
}

export interface FleetDecision {
  status: FleetRolloutStatus;
  /** Triggers to write now, each after a SubjectAccessReview for the author. */
  writes: TriggerWrite[];
  /** When to look again (a retry or the grace of a trigger), if nothing else happens first. */
  requeueAfterMs?: number;
}

/** What happened to a write: written, the author may not, refused by admission (for now or for good), or an API error to retry. */
export type WriteOutcome =
  | { namespace: string; name: string; kind: 'written' }
  | { namespace: string; name: string; kind: 'forbidden'; message: string }
  | { namespace: string; name: string; kind: 'refused'; wait: boolean; message: string }
  | { namespace: string; name: string; kind: 'error'; message: string };

export interface FleetInputs {
  rollout: FleetRollout;
  /** The Instance of `namespace/name` as the cache has it (undefined: gone). */
  instance: (namespace: string, name: string) => Instance | undefined;
  /** Every Instance the selectors match now; read only when the targets are not resolved yet. */
  matching: () => Instance[];
  now: Date;
}

interface Target {
  namespace: string;
  name: string;
  index: number;
  wave: number;
  detail: FleetTarget;
}

const key = (namespace: string, name: string) => `${namespace}/${name}`;

/** The resolved targets in rollout order, with their recorded state and details. */
function targetsOf(status: FleetRolloutStatus, ends: readonly number[]): Target[] {
  const details = new Map((status.targets ?? []).map((t) => [key(t.namespace, t.name), t]));
  const states = status.states ?? '';
  const out: Target[] = [];
  for (const ns of status.resolved ?? []) {
    for (const name of ns.names) {
      const index = out.length;
      const wave = waveOf(index, ends);
      const state = STATE_OF[states[index] ?? 'P'] ?? 'Pending';
      const known = details.get(key(ns.namespace, name));
      out.push({ namespace: ns.namespace, name, index, wave, detail: { ...known, namespace: ns.namespace, name, wave, state } });
    }
  }
  return out;
}

/** Resolves the targets once: the matching Instances, not being deleted, ordered namespace then name. */
export function resolveTargets(matching: readonly Instance[]): { namespace: string; names: string[] }[] {
  const byNs = new Map<string, string[]>();
  for (const i of matching) {
    if (i.metadata.deletionTimestamp) continue;
    const ns = i.metadata.namespace ?? '';
    byNs.set(ns, [...(byNs.get(ns) ?? []), i.metadata.name ?? '']);
  }
  return [...byNs.keys()].sort().map((namespace) => ({ namespace, names: [...new Set(byNs.get(namespace))].sort() }));
}

/** The rollout's run id for an upgrade target (the controller's id of an upgrade run). */
const upgradeRunId = (ov: string) => `upgrade/${ov}`;

function readyAtGeneration(inst: Instance): boolean {
  const ready = findCondition(inst.status?.conditions, 'Ready');
  return ready?.status === 'True' && (ready.observedGeneration === undefined || ready.observedGeneration === inst.metadata.generation);
}

/** Whether the Instance holds the run (maintenance window or pause): the condition's message. */
function heldMessage(inst: Instance): string | undefined {
  const c = findCondition(inst.status?.conditions, 'PlanRunning');
  return c && c.reason && HELD_REASONS.includes(c.reason) ? (c.message ?? c.reason) : undefined;
}

type Observed = { state: FleetTargetState; message?: string } | { state: 'untouched' };

/** What the Instance says about the rollout's run on it. */
export function observeTarget(rollout: FleetRollout, runId: string, inst: Instance | undefined): Observed {
  if (!inst) return { state: 'Skipped', message: 'the Instance is gone' };
  if (inst.metadata.deletionTimestamp) return { state: 'Skipped', message: 'the Instance is being deleted' };
  const spec = rollout.spec;
  const runs = Object.entries(inst.status?.planStatus ?? {});
  if (spec.plan) {
    const ps = inst.status?.planStatus?.[spec.plan.name];
    const run = ps?.id === runId ? ps : undefined;
    const past = (inst.status?.history ?? []).find((h) => h.plan === spec.plan!.name && h.id === runId);
    const status = run?.status ?? past?.status;
    if (status === 'COMPLETE') return { state: 'Completed' };
    if (status === 'FATAL_ERROR' || status === 'ABORTED')
      return { state: 'Failed', message: `plan ${spec.plan.name} ${status}${(run ?? past)?.message ? `: ${(run ?? past)!.message}` : ''}` };
    const ours = run !== undefined || inst.spec.planExecution?.id === runId;
    // A held request is PENDING without an id until it starts (maintenance: pause or window).
    if (ours && (run ?? ps)?.status === 'PENDING' && heldMessage(inst)) return { state: 'Waiting', message: heldMessage(inst) };
    if (ours) return { state: 'Running' };
    return { state: 'untouched' };
  }
  const ov = spec.upgrade!.operatorVersion;
  if (inst.spec.operatorVersion.name !== ov) return { state: 'untouched' };
  // The controller gives an upgrade's run an id of its own (e.g. update-20261125-…); it is
  // known by its trigger and the OperatorVersion it ran with.
  const run = runs.find(([, ps]) => ps.trigger === 'upgrade' && ps.operatorVersion === ov);
  if (run && (run[1].status === 'FATAL_ERROR' || run[1].status === 'ABORTED')) {
    return {
      state: 'Failed',
      message: `upgrade to ${ov} (plan ${run[0]}, run ${run[1].id ?? '?'}) ${run[1].status}${run[1].message ? `: ${run[1].message}` : ''}`,
    };
  }
  if (inst.status?.applied?.operatorVersion !== ov && heldMessage(inst)) return { state: 'Waiting', message: heldMessage(inst) };
  const active = inst.status?.activePlan;
  const busy = active !== undefined && (active.status === 'PENDING' || active.status === 'IN_PROGRESS' || active.status === 'ERROR');
  if (inst.status?.applied?.operatorVersion === ov && !busy && readyAtGeneration(inst)) return { state: 'Completed' };
  return {
    state: 'Running',
    message:
      inst.status?.applied?.operatorVersion === ov && !busy
        ? `on ${ov}, waiting for Ready=True at generation ${inst.metadata.generation}`
        : undefined,
  };
}

function countsOf(targets: readonly Target[]): FleetCounts {
  const c: FleetCounts = { total: targets.length, pending: 0, waiting: 0, running: 0, completed: 0, failed: 0, skipped: 0 };
  for (const t of targets) c[t.detail.state.toLowerCase() as Exclude<keyof FleetCounts, 'total'>]++;
  return c;
}

/** The details to keep: all while few; else the ones a person looks for, failed first. */
function listed(targets: readonly Target[]): FleetTarget[] {
  if (targets.length <= MAX_LISTED_TARGETS) return targets.map((t) => t.detail);
  const rank: Partial<Record<FleetTargetState, number>> = { Failed: 0, Waiting: 1, Running: 2, Skipped: 3 };
  return targets
    .filter((t) => rank[t.detail.state] !== undefined)
    .sort((a, b) => rank[a.detail.state]! - rank[b.detail.state]! || a.index - b.index)
    .slice(0, MAX_LISTED_TARGETS)
    .map((t) => t.detail);
}

const clean = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

function finish(
  rollout: FleetRollout,
  base: FleetRolloutStatus,
  targets: Target[],
  now: string,
  extra: { waiting?: boolean } = {},
): FleetRolloutStatus {
  const spec = rollout.spec;
  const counts = countsOf(targets);
  const maxFailures = spec.maxFailures ?? 0;
  const ends = base.waveEnds ?? [];
  const settled = (t: Target) => ENDED.includes(t.detail.state);
  const firstOpen = targets.find((t) => !settled(t));
  const currentWave = firstOpen ? firstOpen.wave : Math.max(0, ends.length - 1);
  const failed = counts.failed > maxFailures;
  const done = !firstOpen;
  const firstFailed = targets.find((t) => t.detail.state === 'Failed');
  let conditions: Condition[] | undefined = base.conditions;
  const set = (c: Omit<Condition, 'lastTransitionTime'>) =>
    (conditions = setCondition(conditions, { ...c, observedGeneration: rollout.metadata.generation }, now));
  set(
    failed
      ? {
          type: 'Failed',
          status: 'True',
          reason: 'FailureBudgetExceeded',
          message: `${counted(counts.failed, 'target')} failed, ${maxFailures} tolerated; first: ${firstFailed!.namespace}/${firstFailed!.name}: ${firstFailed!.detail.message ?? 'failed'}`,
        }
      : { type: 'Failed', status: 'False', reason: 'WithinBudget', message: `${counts.failed} failed, ${maxFailures} tolerated` },
  );
  set(
    done && !failed
      ? {
          type: 'Complete',
          status: 'True',
          reason: 'AllTargetsDone',
          message: `${counts.completed} completed, ${counts.failed} failed, ${counts.skipped} skipped of ${counts.total}`,
        }
      : {
          type: 'Complete',
          status: 'False',
          reason: failed ? 'Failed' : 'InProgress',
          message: `${counts.completed}/${counts.total} completed`,
        },
  );
  set(
    spec.paused
      ? { type: 'Paused', status: 'True', reason: 'Paused', message: 'spec.paused: nothing new starts; runs in flight finish' }
      : { type: 'Paused', status: 'False', reason: 'Running', message: 'not paused' },
  );
  const inFlight = counts.running + counts.waiting;
  set(
    done || (failed && inFlight === 0)
      ? {
          type: 'Progressing',
          status: 'False',
          reason: failed ? 'Failed' : 'Complete',
          message: failed ? 'stopped: failure budget exceeded' : 'every target is done',
        }
      : {
          type: 'Progressing',
          status: spec.paused && inFlight === 0 ? 'False' : 'True',
          reason: failed ? 'Stopping' : spec.paused ? 'Paused' : extra.waiting ? 'Waiting' : 'Rolling',
          message: `wave ${currentWave + 1} of ${ends.length}: ${counts.running} running, ${counts.waiting} waiting, ${counts.pending} pending`,
        },
  );
  return clean({
    ...base,
    observedGeneration: rollout.metadata.generation,
    action: fleetAction(spec),
    progress: `${counts.completed}/${counts.total}`,
    states: targets.map((t) => LETTER[t.detail.state]).join(''),
    currentWave,
    wave: `${currentWave + 1}/${ends.length}`,
    counts,
    targets: listed(targets),
    conditions,
  });
}

function setState(t: Target, state: FleetTargetState, now: string, message?: string): void {
  const ended = ENDED.includes(state) && !ENDED.includes(t.detail.state);
  t.detail = clean({
    ...t.detail,
    state,
    message,
    finishedAt: ended ? now : t.detail.finishedAt,
    retryAt: state === 'Waiting' ? t.detail.retryAt : undefined,
  });
}

export function decideFleet(inputs: FleetInputs): FleetDecision {
  const { rollout, now } = inputs;
  const nowText = now.toISOString();
  const spec = rollout.spec;
  let base: FleetRolloutStatus = rollout.status ?? {};
  if (!base.resolved) {
    const resolved = resolveTargets(inputs.matching());
    const total = resolved.reduce((n, r) => n + r.names.length, 0);
    base = {
      ...base,
      resolved,
      runId: fleetRunId(rollout.metadata.name ?? '', rollout.metadata.uid ?? ''),
      startedAt: nowText,
      states: 'P'.repeat(total),
      waveEnds: waveEnds(spec.waves, total),
      targets: [],
    };
  }
  const runId = spec.upgrade ? upgradeRunId(spec.upgrade.operatorVersion) : base.runId!;
  const ends = base.waveEnds ?? waveEnds(spec.waves, (base.states ?? '').length);
  const targets = targetsOf(base, ends);

  // 1. What the Instances say, for every target that has not ended.
  let requeue: number | undefined;
  const later = (ms: number) => (requeue = requeue === undefined ? ms : Math.min(requeue, ms));
  const resend: Target[] = [];
  for (const t of targets) {
    if (ENDED.includes(t.detail.state)) continue;
    const seen = observeTarget(rollout, runId, inputs.instance(t.namespace, t.name));
    if (seen.state === 'untouched') {
      // Recorded Running but no sign of the trigger: written again after the grace (same id).
      if (t.detail.state === 'Running') {
        const since = now.getTime() - Date.parse(t.detail.startedAt ?? nowText);
        if (since >= TRIGGER_GRACE_MS) resend.push(t);
        else later(TRIGGER_GRACE_MS - since);
      }
      continue;
    }
    if (seen.state === 'Skipped' || seen.state === 'Completed' || seen.state === 'Failed' || seen.state === 'Running') {
      setState(t, seen.state, nowText, seen.message);
    } else if (seen.state === 'Waiting') {
      setState(t, 'Waiting', nowText, seen.message);
      t.detail = clean({ ...t.detail, retryAt: undefined });
    }
  }

  // 2. What may start: nothing while paused, being deleted, or over the failure budget.
  const writes: TriggerWrite[] = [];
  const failed = targets.filter((t) => t.detail.state === 'Failed').length;
  const stopped = spec.paused === true || rollout.metadata.deletionTimestamp !== undefined || failed > (spec.maxFailures ?? 0);
  const author = parseAuthor(rollout.metadata.annotations?.[AUTHOR_ANNOTATION]);
  const write = (t: Target): TriggerWrite => ({
    namespace: t.namespace,
    name: t.name,
    runId,
    ...(spec.plan
      ? { plan: clean({ name: spec.plan.name, parameters: spec.plan.parameters }) }
      : { upgrade: { operatorVersion: spec.upgrade!.operatorVersion } }),
    mark: {
      rollout: rollout.metadata.name ?? '',
      author: author?.username ?? '',
      id: spec.plan ? runId : upgradeRunId(spec.upgrade!.operatorVersion),
    },
    author: author ?? { username: '', groups: [] },
  });
  if (!stopped && author) {
    for (const t of resend) writes.push(write(t));
    // Waiting on a refusal whose retry is due (held ones have no retryAt: the Instance holds them).
    for (const t of targets) {
      if (t.detail.state !== 'Waiting' || !t.detail.retryAt) continue;
      const due = Date.parse(t.detail.retryAt) - now.getTime();
      if (due <= 0) writes.push(write(t));
      else later(due);
    }
    const settled = (t: Target) => ENDED.includes(t.detail.state);
    const firstOpen = targets.find((t) => !settled(t));
    const wave = firstOpen?.wave;
    let slots = (spec.maxConcurrent ?? 1) - targets.filter((t) => t.detail.state === 'Running' || t.detail.state === 'Waiting').length;
    for (const t of targets) {
      if (slots <= 0 || wave === undefined) break;
      if (t.wave > wave) break;
      if (t.detail.state !== 'Pending') continue;
      setState(t, 'Running', nowText);
      t.detail = clean({ ...t.detail, runId, startedAt: nowText });
      writes.push(write(t));
      slots--;
    }
  }
  const status = finish(rollout, base, targets, nowText, { waiting: targets.some((t) => t.detail.state === 'Waiting') });
  if (!author && !stopped && targets.some((t) => t.detail.state === 'Pending')) {
    status.conditions = setCondition(
      status.conditions,
      {
        type: 'Progressing',
        status: 'False',
        reason: 'NoAuthor',
        message: `annotation ${AUTHOR_ANNOTATION} is missing or unreadable: nothing starts (the webhook records it at creation)`,
        observedGeneration: rollout.metadata.generation,
      },
      nowText,
    );
  }
  return clean({ status, writes, requeueAfterMs: requeue });
}

/** The status after the writes of a decision: Failed (Forbidden or refused for good), Waiting with a retry, or unchanged. */
export function recordOutcomes(
  rollout: FleetRollout,
  status: FleetRolloutStatus,
  outcomes: readonly WriteOutcome[],
  now: Date,
): { status: FleetRolloutStatus; requeueAfterMs?: number } {
  const nowText = now.toISOString();
  const ends = status.waveEnds ?? [];
  const targets = targetsOf(status, ends);
  const byKey = new Map(targets.map((t) => [key(t.namespace, t.name), t]));
  let requeue: number | undefined;
  for (const o of outcomes) {
    const t = byKey.get(key(o.namespace, o.name));
    if (!t) continue;
    if (o.kind === 'written') {
      if (t.detail.state === 'Waiting') setState(t, 'Running', nowText);
    } else if (o.kind === 'forbidden') setState(t, 'Failed', nowText, `Forbidden: ${o.message}`);
    else if (o.kind === 'refused' && !o.wait) setState(t, 'Failed', nowText, o.message);
    else if (o.kind === 'refused') {
      const attempts = (t.detail.attempts ?? 0) + 1;
      const delay = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (attempts - 1));
      setState(t, 'Waiting', nowText, o.message);
      t.detail = { ...t.detail, attempts, retryAt: new Date(now.getTime() + delay).toISOString() };
      requeue = requeue === undefined ? delay : Math.min(requeue, delay);
    } else if (o.kind === 'error') {
      // Not known to be written: tried again after the grace, same id.
      t.detail = clean({ ...t.detail, message: `write failed, retried: ${o.message}` });
      requeue = requeue === undefined ? TRIGGER_GRACE_MS : Math.min(requeue, TRIGGER_GRACE_MS);
    }
  }
  return clean({ status: finish(rollout, status, targets, nowText), requeueAfterMs: requeue });
}
