// The updates controller's decisions as pure passes, in the Instance controller's idiom
// (instances/pass.ts planPass): from what the worker read (the caches' objects, discovery as
// last read, and what this reconcile has read so far from the informers) and `now`, either
// `{kind: 'need'}` — the informer I/O still needed: discovery reads, hook queries with their
// body — or the result: the status to write, each informer's status to write, the discovery
// to keep, the Events to record once the write succeeded, and when to come back. The worker
// (worker.ts) performs the needs and plans again with their answers; a pass never asks for
// what this reconcile already read, so the loop ends.
//
// Three passes, one per worker:
// - updatePlanPass: an UpdatePlan against the UpdateInformers. An informer's answer is due
//   when it has none for the plan's generation, or when its last one has aged: Wait after
//   5 s (the seed), Failure or a degradation after 30 s, Success after 5 minutes (informers
//   may learn new risks). So a pass that finds nothing due asks nobody and returns the same
//   status — the status write of the first does not start a query loop — and
//   `requeueAfterMs` says when the next answer falls due. Wait is honoured for `waitBoundMs`
//   (default 5 minutes); after that the informer is degraded (a risk to fix or accept) and
//   asked every 30 s until it answers. An UpdatePlan whose target an older one holds (two
//   creates raced past the webhook) is marked DuplicateTarget and nobody is asked about it.
// - upgradeStatusPass: while an Instance's upgrade runs, the informers' updateInsights
//   hooks on the pulse, folded into status.updateStatus with UpdatePending / UpdateActive.
// - discoveryPass: an UpdateInformer's discovery, read when due, whether or not anything
//   asks it about a plan: its handlers, Discovered, and Online where discovery tells something.
//
// Discovery (GET …/discovery) is read before an informer is asked when it was never read,
// when the informer's generation changed, after DISCOVERY_REFRESH_MS, or after it failed.
// It is advice, and when in doubt the hook is asked: an informer is left out of a round only
// when its discovery clearly lists hooks and not this one (answers.ts discoveryAsks) — that
// decision is made here, and the informer then counts as answering Success with nothing to
// say. A discovery that fails (unreachable, an HTTP error, not JSON, no handlers) or is
// ambiguous (an empty list, only unknown names) is shown on the informer — its Discovered
// condition, and a Warning Event when it turns False — and is no risk: only what the hook
// itself answers, or fails to answer, decides the informer's say.
//
// Disabled and deleted informers have no entry in status (their insights no longer block an
// upgrade); a disabled informer's Online is Unknown (Disabled).
import type {
  Condition,
  InformerCondition,
  InformerStatus,
  Instance,
  OperatorVersion,
  PlanState,
  UpdateInformer,
  UpdateInformerStatus,
  UpdatePlan,
  UpdatePlanStatus,
  UpdateStatus,
} from '../../shared/api/schema.ts';
import { findCondition, setCondition } from '../../shared/conditions/conditions.ts';
import { jsonEqual } from '../../shared/json.ts';
import { runsOf } from '../../shared/plan/history.ts';
import { isRunning } from '../../shared/plan/triggers.ts';
import { objectRef } from '../../shared/refusal.ts';
import { DUPLICATE_TARGET_REASON, heldByAnother } from '../../shared/updatePlanHolder.ts';
import { discoveryAsks, type DiscoveryResponse, type InsightsHook } from './answers.ts';
import type { QueryError, QueryErrorReason } from './client.ts';
import {
  isDegraded,
  isInformerActive,
  mergeInformerResponse,
  updateInsightsRequest,
  updatePlanConditions,
  updatePlanInsightsRequest,
  type InformerOutcome,
} from './insights.ts';

/** The seed: "Wait … will cause the UpdateStatusController to check back after 5 seconds". */
export const WAIT_RETRY_MS = 5000;
export const FAILURE_RETRY_MS = 30_000;
export const REANALYZE_AFTER_MS = 5 * 60_000;
/** How long Wait is honoured by default before the informer counts as degraded. */
export const DEFAULT_WAIT_BOUND_MS = 5 * 60_000;
export const DISCOVERY_REFRESH_MS = 5 * 60_000;
/** Informers asked at once for one plan. */
export const QUERY_CONCURRENCY = 4;
/** How often the informers are asked while an upgrade runs (the controller's not-Ready pulse). */
export const UPGRADE_PULSE_MS = 10_000;

/** What an informer's discovery said, as last read (kept by the caller between rounds). */
export interface DiscoveryRecord {
  /** The informer's metadata.generation it was read for. */
  generation?: number;
  checkedAt: string;
  /** The handler names it listed (unknown ones too). */
  handlers?: string[];
  apiLevel?: string;
  /** The insights hooks it names, by any of their names. */
  serves?: InsightsHook[];
  /** Why its list does not decide which hooks are asked (then all are). */
  doubt?: string;
  error?: string;
  reason?: QueryErrorReason;
}

/** A hook's answer as the client returned it. */
export type HookAnswer = InformerOutcome & { reason?: QueryErrorReason };

/** What this reconcile has read from the informers so far, by informer name. */
export interface ReadSoFar {
  /** Discovery read in this reconcile (never asked again in it). */
  discovery: ReadonlyMap<string, DiscoveryRecord>;
  /** Hook answers received in this reconcile (one hook per informer and pass). */
  answers: ReadonlyMap<string, HookAnswer>;
}

export const NOTHING_READ: ReadSoFar = { discovery: new Map(), answers: new Map() };

/** Informer I/O a pass needs before it can decide: perform it all, then plan again. */
export interface Needs {
  kind: 'need';
  /** Informers whose discovery to read. */
  discovery: UpdateInformer[];
  /** Hooks to ask, with the request body. */
  queries: { informer: UpdateInformer; hook: InsightsHook; body: unknown }[];
}

/** An Event to record once the write it belongs to succeeded. */
export interface UpdateEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** An informer's status to write (it differs from the stored one), and the Events to record after. */
export interface InformerWrite {
  informer: UpdateInformer;
  status: UpdateInformerStatus;
  events: UpdateEvent[];
}

/** The record of a discovery read at `now` for `informer`'s current generation. */
export function discoveryRecord(informer: UpdateInformer, answer: DiscoveryResponse | QueryError, now: string): DiscoveryRecord {
  const generation = informer.metadata.generation;
  return 'error' in answer
    ? { generation, checkedAt: now, error: answer.error, ...(answer.reason ? { reason: answer.reason } : {}) }
    : { generation, checkedAt: now, ...answer };
}

function retryAfterMs(entry: InformerStatus, successMs: number): number {
  if (isDegraded(entry) || entry.response === 'Failure') return FAILURE_RETRY_MS;
  if (entry.response === 'Wait') return WAIT_RETRY_MS;
  return successMs;
}

/**
 * Milliseconds until `entry` is due again (≤ 0: due now); a Success is asked again after
 * `successMs`, a Wait after 5 s, a Failure or a degradation after 30 s.
 */
export function dueInMs(entry: InformerStatus | undefined, fresh: boolean, nowMs: number, successMs = REANALYZE_AFTER_MS): number {
  if (entry === undefined || !fresh) return 0;
  const last = Date.parse(entry.lastQueryTime ?? '');
  if (Number.isNaN(last)) return 0;
  // A lastQueryTime in the future (skewed or hand-written) must not postpone the next query.
  const after = retryAfterMs(entry, successMs);
  return Math.min(after, last + after - nowMs);
}

const UNREACHABLE: ReadonlySet<QueryErrorReason | undefined> = new Set<QueryErrorReason | undefined>([
  'ConnectionFailed',
  'Timeout',
  'TLSError',
  'InvalidClientConfig',
]);

/** The seed's Online reason for a query that got no answer. */
function offlineReason(reason: QueryErrorReason | undefined): string {
  if (reason === 'InvalidClientConfig') return 'InvalidClientConfig';
  return UNREACHABLE.has(reason) ? 'Unreachable' : 'Degraded';
}

/** Whether `informer`'s discovery is to be read again: never read, failed, another generation, stale. */
export function discoveryDue(record: DiscoveryRecord | undefined, informer: UpdateInformer, nowMs: number): boolean {
  if (record === undefined || record.error !== undefined) return true;
  if (record.generation !== informer.metadata.generation) return true;
  const checked = Date.parse(record.checkedAt);
  return Number.isNaN(checked) || nowMs - checked >= DISCOVERY_REFRESH_MS || checked > nowMs;
}

const INSIGHTS_HOOKS: readonly InsightsHook[] = ['updatePlanInsights', 'updateInsights'];

function clip(text: string, max = 1000): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * The informer's Discovered condition after `discovery`: True (Listed) when its list
 * decides which hooks are asked; False when it does not — Unreachable, InvalidClientConfig,
 * Unreadable (an HTTP error, not JSON, no handlers), Ambiguous — and every hook is asked.
 * Shown, never a risk.
 */
export function discoveryCondition(
  discovery: DiscoveryRecord,
  generation: number | undefined,
): Omit<InformerCondition, 'lastTransitionTime'> {
  const base = { type: 'Discovered', ...(generation === undefined ? {} : { observedGeneration: generation }) };
  const asked = "every hook is asked (when in doubt, ask); only the hooks' own answers decide the informer's say";
  if (discovery.error !== undefined) {
    const reason =
      discovery.reason === 'InvalidClientConfig' ? 'InvalidClientConfig' : UNREACHABLE.has(discovery.reason) ? 'Unreachable' : 'Unreadable';
    return { ...base, status: 'False', reason, message: clip(`discovery: ${discovery.error}: ${asked}`) };
  }
  if (discovery.doubt !== undefined) {
    return { ...base, status: 'False', reason: 'Ambiguous', message: clip(`discovery: ${discovery.doubt}: ${asked}`) };
  }
  const level = discovery.apiLevel === undefined ? '' : ` (apiLevel ${discovery.apiLevel})`;
  const serves = INSIGHTS_HOOKS.filter((h) => discoveryAsks(discovery, h));
  return {
    ...base,
    status: 'True',
    reason: 'Listed',
    message: clip(`discovery lists ${(discovery.handlers ?? []).join(', ')}${level}: asked ${serves.join(' and ') || 'about nothing'}`),
  };
}

/** `conditions` with `online` set; Online carries the seed's lastHeartbeatTime. */
export function withOnline(
  conditions: readonly InformerCondition[],
  online: Omit<InformerCondition, 'lastTransitionTime'>,
  now: string,
): InformerCondition[] {
  return setCondition(conditions, online, now);
}

/** Whether Online was last set by a hook's answer (not by discovery, nor Disabled): discovery then leaves it alone. */
function judgedByHooks(conditions: readonly InformerCondition[]): boolean {
  const online = conditions.find((c) => c.type === 'Online');
  return (
    online !== undefined &&
    online.reason !== 'Disabled' &&
    online.reason !== 'Discovered' &&
    !(online.message ?? '').startsWith('discovery: ')
  );
}

/** One informer's round: discovery when due, then the hook unless discovery clearly leaves it out. */
export interface InformerRound {
  discovery: DiscoveryRecord;
  outcome: HookAnswer;
}

/**
 * What an informer's Online condition learns from a round, with the seed's reasons:
 * InformerUpdating (answered Wait), Degraded (Failure, findings, Wait beyond the bound, an
 * answer that is not one), Unreachable (no connection, TLS, deadline), InvalidClientConfig;
 * undefined when the informer was not asked.
 */
export function onlineCondition(
  informer: UpdateInformer,
  round: InformerRound | undefined,
  entry: InformerStatus | undefined,
  now: string,
): Omit<InformerCondition, 'lastTransitionTime'> | undefined {
  const generation = informer.metadata.generation;
  const base = generation === undefined ? { type: 'Online' } : { type: 'Online', observedGeneration: generation };
  if (!isInformerActive(informer)) {
    return { ...base, status: 'Unknown', reason: 'Disabled', message: 'spec.enabled is false: the informer is not queried' };
  }
  if (round === undefined) return undefined;
  const heartbeat = { lastHeartbeatTime: now };
  const outcome = round.outcome;
  if ('error' in outcome) {
    return { ...base, ...heartbeat, status: 'False', reason: offlineReason(outcome.reason), message: clip(outcome.error) };
  }
  if (isDegraded(entry)) {
    return { ...base, ...heartbeat, status: 'False', reason: 'Degraded', message: clip((entry?.findings ?? []).join('; ')) };
  }
  if (outcome.response === 'Wait') {
    const message = `the informer answered Wait${outcome.message ? ` (${outcome.message})` : ''}: asked again every ${WAIT_RETRY_MS / 1000} s`;
    return { ...base, ...heartbeat, status: 'False', reason: 'InformerUpdating', message: clip(message) };
  }
  return {
    ...base,
    ...heartbeat,
    status: 'True',
    reason: 'Answered',
    message: 'the informer answers its hooks with well-formed responses',
  };
}

/**
 * The informer's status once `conditions` and what `discovery` said (Discovered, handlers,
 * apiLevel) are set, and a Warning Event when Discovered turns False (or changes reason):
 * it is no risk, so no UpdatePlan shows it. The write is left out when nothing changed.
 */
export function informerStatusAfter(
  informer: UpdateInformer,
  conditions: InformerCondition[],
  discovery: DiscoveryRecord | undefined,
  now: string,
): InformerWrite | undefined {
  let next: UpdateInformerStatus = { ...informer.status, conditions };
  const events: UpdateEvent[] = [];
  if (discovery !== undefined) {
    const read = discoveryCondition(discovery, informer.metadata.generation);
    next = { ...next, conditions: setCondition(conditions, read, now) };
    if (discovery.error === undefined) {
      const { apiLevel: _, ...rest } = next;
      next = { ...rest, handlers: discovery.handlers ?? [], ...(discovery.apiLevel === undefined ? {} : { apiLevel: discovery.apiLevel }) };
    }
    const before = findCondition(informer.status?.conditions, 'Discovered');
    if (read.status === 'False' && (before?.status !== 'False' || before.reason !== read.reason)) {
      events.push({ type: 'Warning', reason: `Discovery${read.reason}`, message: read.message ?? '' });
    }
  }
  return jsonEqual(informer.status ?? {}, next) ? undefined : { informer, status: next, events };
}

/** The next step for one informer in a round about `hook`: a read still needed, or its round. */
type InformerStep = { need: 'discovery' } | { need: 'hook' } | { round: InformerRound };

function informerStep(
  informer: UpdateInformer,
  hook: InsightsHook,
  known: DiscoveryRecord | undefined,
  read: ReadSoFar,
  nowMs: number,
): InformerStep {
  const name = informer.metadata.name ?? '';
  const readNow = read.discovery.get(name);
  const discovery = readNow ?? known;
  if (discovery === undefined || (readNow === undefined && discoveryDue(discovery, informer, nowMs))) return { need: 'discovery' };
  if (!discoveryAsks(discovery, hook)) {
    const message = `does not serve ${hook} (its discovery lists: ${(discovery.handlers ?? []).join(', ') || 'nothing'})`;
    return { round: { discovery, outcome: { response: 'Success', message, insights: [], findings: [] } } };
  }
  const answer = read.answers.get(name);
  return answer === undefined ? { need: 'hook' } : { round: { discovery, outcome: answer } };
}

/**
 * The rounds of `due` about `hook`: each informer's round once everything it needs was read,
 * or the reads still needed (all of them at once).
 */
function rounds(
  due: readonly UpdateInformer[],
  hook: InsightsHook,
  body: unknown,
  known: ReadonlyMap<string, DiscoveryRecord>,
  read: ReadSoFar,
  nowMs: number,
): Needs | Map<string, InformerRound> {
  const needs: Needs = { kind: 'need', discovery: [], queries: [] };
  const done = new Map<string, InformerRound>();
  for (const informer of due) {
    const name = informer.metadata.name ?? '';
    const step = informerStep(informer, hook, known.get(name), read, nowMs);
    if ('round' in step) done.set(name, step.round);
    else if (step.need === 'discovery') needs.discovery.push(informer);
    else needs.queries.push({ informer, hook, body });
  }
  return needs.discovery.length + needs.queries.length > 0 ? needs : done;
}

/**
 * One informer asked about `hook` with `body`, its discovery read first when due: the
 * reads still needed, or its round (a hook discovery leaves out counts as Success, saying so).
 */
export function askPass(
  informer: UpdateInformer,
  hook: InsightsHook,
  body: unknown,
  facts: { discovery?: DiscoveryRecord; read?: ReadSoFar },
  now: string,
): Needs | InformerRound {
  const name = informer.metadata.name ?? '';
  const known = new Map(facts.discovery === undefined ? [] : [[name, facts.discovery]]);
  const result = rounds([informer], hook, body, known, facts.read ?? NOTHING_READ, Date.parse(now));
  return result instanceof Map ? result.get(name)! : result;
}

const byName = (a: UpdateInformer, b: UpdateInformer) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');

/** What a round of questions to the informers decides from, whatever it asks about. */
export interface InformerRoundFacts {
  /** Every UpdateInformer (the kind is cluster-scoped: all of them have a say on everything). */
  informers: UpdateInformer[];
  /** What the request body says besides its subject, when the caller knows it. */
  context?: { clusterID?: string; current?: OperatorVersion; target?: OperatorVersion };
  /** Discovery as last read before this reconcile, by informer name. */
  discovery?: ReadonlyMap<string, DiscoveryRecord>;
  /** What this reconcile has read from the informers so far (none: nothing yet). */
  read?: ReadSoFar;
  /** How long Wait is honoured (default 5 minutes). */
  waitBoundMs?: number;
}

/** Discovery to keep after a round: as last read, with what this reconcile read over it. */
function keptDiscovery(facts: InformerRoundFacts): Map<string, DiscoveryRecord> {
  return new Map([...(facts.discovery ?? []), ...(facts.read?.discovery ?? [])]);
}

export interface UpdatePlanFacts extends InformerRoundFacts {
  plan: UpdatePlan;
  /** The UpdatePlans of the plan's namespace, to find one holding its target first (absent: not judged). */
  siblings?: readonly UpdatePlan[];
}

/** The version the namespace runs now: the OperatorVersion most Instances of `namespace` name, other than `target` (ties: by name). */
export function currentVersionOf(instances: readonly Instance[], namespace: string, target: string): string | undefined {
  const counts = new Map<string, number>();
  for (const inst of instances) {
    const name = inst.metadata.namespace === namespace ? inst.spec.operatorVersion.name : undefined;
    if (name !== undefined && name !== target) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
}

export interface UpdatePlanPass {
  kind: 'status';
  /** The plan's next status (written when it differs from the stored one). */
  status: UpdatePlanStatus;
  /** Each informer's conditions (Online set when something was learned). */
  informerConditions: Map<string, InformerCondition[]>;
  /** The informers' statuses to write (those that changed), each with its Events. */
  informerWrites: InformerWrite[];
  /** Discovery after this round, by informer name (keep it for the next round). */
  discovery: Map<string, DiscoveryRecord>;
  /** Recorded about the plan, only after its status write succeeded. */
  events: UpdateEvent[];
  /** When the next informer answer falls due; absent when no informer is active. */
  requeueAfterMs?: number;
}

/**
 * The status of an UpdatePlan whose target an older one holds (two creates raced past the
 * webhook): Analyzed=False, reason DuplicateTarget, naming the holder; nothing else of its
 * status changes and no informer is asked about it.
 */
export function duplicateStatus(plan: UpdatePlan, holder: UpdatePlan, now: string): UpdatePlanStatus {
  const target = plan.spec.targetRelease;
  const message =
    `${objectRef('UpdatePlan', holder.metadata)} was created first and holds targetRelease "${target}" (one UpdatePlan per namespace and target): ` +
    `this one is not analysed and no upgrade is judged against it; delete it and use that one (kubectl planwarden update pre-checks --target ${target})`;
  return {
    ...plan.status,
    conditions: setCondition(plan.status?.conditions, { type: 'Analyzed', status: 'False', reason: DUPLICATE_TARGET_REASON, message }, now),
    observedGeneration: plan.metadata.generation,
  };
}

/**
 * One pass of an UpdatePlan: the reads still needed, or its next status (informer entries in
 * name order, observedGeneration, Analyzed and RisksAccepted), every informer's conditions
 * and status to write, the Events, and when to reconcile again.
 */
export function updatePlanPass(facts: UpdatePlanFacts, now: string): Needs | UpdatePlanPass {
  const { plan } = facts;
  const holder = facts.siblings === undefined ? undefined : heldByAnother(plan, facts.siblings);
  if (holder !== undefined) {
    const status = duplicateStatus(plan, holder, now);
    const analyzed = findCondition(status.conditions, 'Analyzed');
    const already = findCondition(plan.status?.conditions, 'Analyzed')?.reason === DUPLICATE_TARGET_REASON;
    return {
      kind: 'status',
      status,
      informerConditions: new Map(),
      informerWrites: [],
      discovery: keptDiscovery(facts),
      events: already ? [] : [{ type: 'Warning', reason: DUPLICATE_TARGET_REASON, message: analyzed?.message ?? '' }],
    };
  }
  const nowMs = Date.parse(now);
  const waitBoundMs = facts.waitBoundMs ?? DEFAULT_WAIT_BOUND_MS;
  const generation = plan.metadata.generation;
  const fresh = generation === undefined || plan.status?.observedGeneration === generation;
  const previous = new Map((plan.status?.informers ?? []).map((e) => [e.name, e]));
  const active = facts.informers.filter(isInformerActive).sort(byName);
  const due = active.filter((i) => dueInMs(previous.get(i.metadata.name ?? ''), fresh, nowMs) <= 0);

  // informerUpdate: only when a generation is first analysed, not on every Wait re-ask.
  const body = updatePlanInsightsRequest(plan, { ...facts.context, informerUpdate: !fresh });
  const asked = rounds(due, 'updatePlanInsights', body, facts.discovery ?? new Map(), facts.read ?? NOTHING_READ, nowMs);
  if (!(asked instanceof Map)) return asked;

  const entries: InformerStatus[] = active.map((informer) => {
    const name = informer.metadata.name ?? '';
    const round = asked.get(name);
    return round === undefined ? previous.get(name)! : mergeInformerResponse(name, previous.get(name), round.outcome, now, { waitBoundMs });
  });
  const discovery = keptDiscovery(facts);
  const informerConditions = new Map<string, InformerCondition[]>();
  const informerWrites: InformerWrite[] = [];
  for (const informer of facts.informers) {
    if (informer.metadata.deletionTimestamp !== undefined) continue;
    const name = informer.metadata.name ?? '';
    const conditions = informer.status?.conditions ?? [];
    const online = onlineCondition(
      informer,
      asked.get(name),
      entries.find((e) => e.name === name),
      now,
    );
    const next = online === undefined ? [...conditions] : withOnline(conditions, online, now);
    informerConditions.set(name, next);
    const write = informerStatusAfter(informer, next, discovery.get(name), now);
    if (write) informerWrites.push(write);
  }

  const status: UpdatePlanStatus = {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    informers: entries,
    conditions: plan.status?.conditions ?? [],
  };
  status.conditions = updatePlanConditions({ ...plan, status }, facts.informers, now);
  const result: UpdatePlanPass = { kind: 'status', status, informerConditions, informerWrites, discovery, events: [] };
  if (active.length === 0) return result;
  return { ...result, requeueAfterMs: Math.max(1, Math.min(...entries.map((e) => dueInMs(e, true, nowMs)))) };
}

// --- an upgrading Instance's UpdateStatus ---
//
// Choices where the seed is silent (it speaks of clusters and worker pools, planwarden of
// Instances): the upgrade is the Instance's last started run when its trigger is `upgrade`;
// UpdatePending is True until that run is terminal; UpdateActive is True while it can make
// progress (PENDING / IN_PROGRESS), False while a step waits to retry (AwaitingRetry) and
// once it ended; an Instance that never ran an upgrade has no section.

export interface UpgradeRun {
  plan: string;
  id: string;
  state: PlanState;
  target?: string;
  from?: string;
}

/** The Instance's upgrade run: its last started run, when an upgrade triggered it. */
export function upgradeRunOf(instance: Instance): UpgradeRun | undefined {
  const active = instance.status?.activePlan;
  if (active === undefined) return undefined;
  const run = instance.status?.planStatus?.[active.name];
  if (run === undefined || run.trigger !== 'upgrade' || run.id !== active.id) return undefined;
  const previous = [...runsOf(instance.status?.history)]
    .reverse()
    .find((h) => h.operatorVersion !== undefined && h.operatorVersion !== run.operatorVersion);
  return {
    plan: active.name,
    id: active.id,
    state: run.status,
    ...(run.operatorVersion === undefined ? {} : { target: run.operatorVersion }),
    ...(previous?.operatorVersion === undefined ? {} : { from: previous.operatorVersion }),
  };
}

/** Whether the upgrade section of `instance` still needs work: a run going on, or an end not yet recorded. */
export function needsUpgradeStatus(instance: Instance): boolean {
  const run = upgradeRunOf(instance);
  if (run === undefined) return false;
  const section = instance.status?.updateStatus;
  if (isRunning(run.state)) return true;
  return section?.id !== run.id || section.conditions?.find((c) => c.type === 'UpdateActive')?.reason !== endReason(run.state);
}

function endReason(state: PlanState): string {
  if (state === 'COMPLETE') return 'UpgradeComplete';
  if (state === 'ABORTED') return 'UpgradeAborted';
  return 'UpgradeFailed';
}

function upgradeConditions(previous: readonly Condition[] | undefined, run: UpgradeRun, now: string): Condition[] {
  const to = run.target ? ` to ${run.target}` : '';
  if (!isRunning(run.state)) {
    const pending = setCondition(
      previous,
      { type: 'UpdatePending', status: 'False', reason: 'UpgradeEnded', message: `the upgrade${to} ended ${run.state}` },
      now,
    );
    return setCondition(
      pending,
      {
        type: 'UpdateActive',
        status: 'False',
        reason: endReason(run.state),
        message: `the upgrade${to} is over (${run.state}): nobody is asked any more`,
      },
      now,
    );
  }
  const pending = setCondition(
    previous,
    {
      type: 'UpdatePending',
      status: 'True',
      reason: 'UpgradeNotReconciled',
      message: `the upgrade${to} (plan ${run.plan}) has not finished`,
    },
    now,
  );
  return run.state === 'ERROR'
    ? setCondition(
        pending,
        { type: 'UpdateActive', status: 'False', reason: 'AwaitingRetry', message: `a step of plan ${run.plan} waits to retry` },
        now,
      )
    : setCondition(
        pending,
        { type: 'UpdateActive', status: 'True', reason: 'UpgradeRunning', message: `plan ${run.plan} is ${run.state}` },
        now,
      );
}

export interface UpgradeStatusFacts extends InformerRoundFacts {
  instance: Instance;
  /** How often the informers are asked while the upgrade runs (default UPGRADE_PULSE_MS). */
  pulseMs?: number;
}

export interface UpgradeStatusPass {
  kind: 'status';
  /** The Instance's next status.updateStatus (undefined: no section). */
  updateStatus?: UpdateStatus;
  /** Whether updateStatus differs from the stored one (then it is written). */
  changed: boolean;
  discovery: Map<string, DiscoveryRecord>;
  /** Recorded about the Instance, only after its status write succeeded (none so far). */
  events: UpdateEvent[];
  requeueAfterMs?: number;
}

/** One pass of an upgrading Instance: the reads still needed, or its next UpdateStatus section and when to ask again. */
export function upgradeStatusPass(facts: UpgradeStatusFacts, now: string): Needs | UpgradeStatusPass {
  const { instance } = facts;
  const discovery = keptDiscovery(facts);
  const stored = instance.status?.updateStatus;
  const done = (updateStatus: UpdateStatus | undefined, requeueAfterMs?: number): UpgradeStatusPass => ({
    kind: 'status',
    ...(updateStatus === undefined ? {} : { updateStatus }),
    changed: updateStatus !== undefined && !jsonEqual(stored ?? null, updateStatus),
    discovery,
    events: [],
    ...(requeueAfterMs === undefined ? {} : { requeueAfterMs }),
  });
  const run = upgradeRunOf(instance);
  if (run === undefined) return done(stored);
  const previous = stored?.id === run.id ? stored : undefined;
  const section: UpdateStatus = {
    plan: run.plan,
    id: run.id,
    ...(run.target === undefined ? {} : { operatorVersion: run.target }),
    ...(run.from === undefined ? {} : { fromOperatorVersion: run.from }),
    informers: previous?.informers ?? [],
  };
  section.conditions = upgradeConditions(previous?.conditions, run, now);
  if (!isRunning(run.state)) return done(section);

  const nowMs = Date.parse(now);
  const pulseMs = facts.pulseMs ?? UPGRADE_PULSE_MS;
  const entries = new Map((previous?.informers ?? []).map((e) => [e.name, e]));
  const dueIn = (name: string) => dueInMs(entries.get(name), true, nowMs, pulseMs);
  const active = facts.informers.filter(isInformerActive).sort(byName);
  const due = active.filter((i) => dueIn(i.metadata.name ?? '') <= 0);
  const body = updateInsightsRequest(
    { namespace: instance.metadata.namespace, name: instance.metadata.name, uid: instance.metadata.uid, plan: run.plan },
    { ...facts.context, informerUpdate: false },
  );
  const asked = rounds(due, 'updateInsights', body, facts.discovery ?? new Map(), facts.read ?? NOTHING_READ, nowMs);
  if (!(asked instanceof Map)) return asked;
  const waitBoundMs = facts.waitBoundMs ?? DEFAULT_WAIT_BOUND_MS;
  for (const [name, round] of asked) entries.set(name, mergeInformerResponse(name, entries.get(name), round.outcome, now, { waitBoundMs }));
  section.informers = active.map((i) => entries.get(i.metadata.name ?? '')).filter((e) => e !== undefined);
  return done(section, active.length === 0 ? pulseMs : Math.max(1, Math.min(...active.map((i) => dueIn(i.metadata.name ?? '')))));
}

// --- an UpdateInformer's own discovery ---

export interface DiscoveryFacts {
  informer: UpdateInformer;
  /** Its discovery as last read (absent: never). */
  discovery?: DiscoveryRecord;
  /** Its discovery as read in this reconcile (absent: not yet). */
  read?: DiscoveryRecord;
}

export interface DiscoveryPass {
  kind: 'status';
  /** The discovery to keep (undefined: forget it — the informer is disabled). */
  discovery?: DiscoveryRecord;
  conditions: InformerCondition[];
  handlers?: string[];
  /** The informer's status to write when it changed, with the Events to record after. */
  write?: InformerWrite;
  requeueAfterMs?: number;
}

/**
 * One pass of an informer's discovery, read when due (created, changed, stale, failed)
 * whether or not anything asks it about a plan: its handlers, and its Online condition where
 * discovery tells something — it failed (Unreachable, Degraded, InvalidClientConfig), or
 * the informer was never judged (True/Discovered); otherwise Online stays what the rounds said.
 */
export function discoveryPass(facts: DiscoveryFacts, now: string): Needs | DiscoveryPass {
  const { informer } = facts;
  const conditions = informer.status?.conditions ?? [];
  const done = (d: Omit<DiscoveryPass, 'kind' | 'write'>): DiscoveryPass => {
    const write = informerStatusAfter(informer, d.conditions, d.discovery, now);
    return { kind: 'status', ...d, ...(write ? { write } : {}) };
  };
  if (!isInformerActive(informer))
    return done({ conditions: withOnline(conditions, onlineCondition(informer, undefined, undefined, now)!, now) });
  const nowMs = Date.parse(now);
  if (facts.read === undefined) {
    if (!discoveryDue(facts.discovery, informer, nowMs)) {
      const checked = Date.parse(facts.discovery!.checkedAt);
      return done({
        discovery: facts.discovery!,
        conditions: [...conditions],
        requeueAfterMs: Math.max(1, checked + DISCOVERY_REFRESH_MS - nowMs),
      });
    }
    return { kind: 'need', discovery: [informer], queries: [] };
  }
  const discovery = facts.read;
  const generation = informer.metadata.generation;
  const base = { type: 'Online', ...(generation === undefined ? {} : { observedGeneration: generation }), lastHeartbeatTime: now };
  if (discovery.error !== undefined) {
    // Only a discovery that got no connection says the informer is off line; one that
    // answers badly says nothing about its hooks, which are asked anyway.
    if (judgedByHooks(conditions)) return done({ discovery, conditions: [...conditions], requeueAfterMs: FAILURE_RETRY_MS });
    const online = UNREACHABLE.has(discovery.reason)
      ? { ...base, status: 'False' as const, reason: offlineReason(discovery.reason), message: clip(`discovery: ${discovery.error}`) }
      : {
          ...base,
          status: 'Unknown' as const,
          reason: 'DiscoveryUnreadable',
          message: clip(`discovery: ${discovery.error}: its hooks are asked anyway, and their answers set Online`),
        };
    return done({ discovery, conditions: withOnline(conditions, online, now), requeueAfterMs: FAILURE_RETRY_MS });
  }
  const handlers = discovery.handlers ?? [];
  const next = judgedByHooks(conditions)
    ? [...conditions]
    : withOnline(
        conditions,
        {
          ...base,
          status: 'True',
          reason: 'Discovered',
          message: clip(`the informer answers discovery: ${handlers.join(', ') || 'no handlers'}`),
        },
        now,
      );
  return done({ discovery, conditions: next, handlers, requeueAfterMs: DISCOVERY_REFRESH_MS });
}
