// Reconciles one UpdatePlan against the UpdateInformers: reads each informer's discovery
// when it is due, asks the informers whose answer is due for their insights on the plan's
// target, folds the answers into status, and computes the plan's conditions and each
// informer's Online condition. Pure apart from `query`.
//
// An informer's answer is due when it has none for the plan's current generation, or when
// its last one has aged: Wait after 5 s (the seed), Failure or a degradation after 30 s,
// Success after 5 minutes (informers may learn new risks; re-analysis keeps the plan
// honest). So reconciling twice in a row asks nobody the second time and returns the same
// status — the status write the first reconcile causes does not start a query loop — and
// `requeueAfterMs` says when the next answer falls due. Wait is honoured for `waitBoundMs`
// (default 5 minutes); after that the informer is degraded (a risk to fix or accept) and
// asked every 30 s until it answers.
//
// Discovery (GET …/discovery) is read before an informer is asked when it was never read,
// when the informer's generation changed, after DISCOVERY_REFRESH_MS, or after it failed.
// It is advice, and when in doubt the hook is asked: an informer is left out of a round
// only when its discovery clearly lists hooks and not this one (answers.ts, discoveryAsks).
// A discovery that fails (unreachable, an HTTP error, not JSON, no handlers) or is
// ambiguous (an empty list, only unknown names) is shown on the informer — its Discovered
// condition, and an Event — and is no risk: only what the hook itself answers, or fails to
// answer, decides the informer's say.
//
// Disabled and deleted informers have no entry in status (their insights no longer block
// an upgrade); a disabled informer's Online is Unknown (Disabled).
import type {
  InformerCondition,
  InformerStatus,
  OperatorVersion,
  UpdateInformer,
  UpdatePlan,
  UpdatePlanStatus,
} from '../../shared/api/schema.ts';
import { setCondition } from '../../shared/conditions/conditions.ts';
import { discoveryAsks, type InsightsHook } from './answers.ts';
import type { InformerQuery, QueryErrorReason } from './client.ts';
import { mapBounded } from '../concurrency.ts';
import {
  isDegraded,
  isInformerActive,
  mergeInformerResponse,
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

/** What a round of questions to the informers needs, whatever it asks about. */
export interface InformerRoundInput {
  /** Every UpdateInformer (the kind is cluster-scoped: all of them have a say on everything). */
  informers: UpdateInformer[];
  now: string;
  query: InformerQuery;
  /** What the request body says besides its subject, when the caller knows it. */
  context?: { clusterID?: string; current?: OperatorVersion; target?: OperatorVersion };
  /** Discovery as last read, by informer name. */
  discovery?: ReadonlyMap<string, DiscoveryRecord>;
  /** How long Wait is honoured (default 5 minutes). */
  waitBoundMs?: number;
}

export interface UpdatePlanReconcileInput extends InformerRoundInput {
  plan: UpdatePlan;
}

export interface UpdatePlanReconcileResult {
  status: UpdatePlanStatus;
  /** Each informer's conditions (Online set when something was learned); write where they differ. */
  informerConditions: Map<string, InformerCondition[]>;
  /** Discovery after this round, by informer name (keep it for the next round). */
  discovery: Map<string, DiscoveryRecord>;
  /** When the next informer answer falls due; absent when no informer is active. */
  requeueAfterMs?: number;
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

function discoveryDue(record: DiscoveryRecord | undefined, informer: UpdateInformer, nowMs: number): boolean {
  if (record === undefined || record.error !== undefined) return true;
  if (record.generation !== informer.metadata.generation) return true;
  const checked = Date.parse(record.checkedAt);
  return Number.isNaN(checked) || nowMs - checked >= DISCOVERY_REFRESH_MS || checked > nowMs;
}

async function readDiscovery(informer: UpdateInformer, query: InformerQuery, now: string): Promise<DiscoveryRecord> {
  const answer = await query(informer.spec, { kind: 'discovery' });
  const generation = informer.metadata.generation;
  return 'error' in answer
    ? { generation, checkedAt: now, error: answer.error, ...(answer.reason ? { reason: answer.reason } : {}) }
    : { generation, checkedAt: now, ...answer };
}

const INSIGHTS_HOOKS: readonly InsightsHook[] = ['updatePlanInsights', 'updateInsights'];

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

export interface DiscoverResult {
  /** The discovery to keep (undefined: forget it — the informer is disabled). */
  discovery?: DiscoveryRecord;
  conditions: InformerCondition[];
  handlers?: string[];
  requeueAfterMs?: number;
}

/**
 * An informer's discovery read when due (created, changed, stale, failed), whether or not
 * anything asks it about a plan: its handlers, and its Online condition where discovery
 * tells something — it failed (Unreachable, Degraded, InvalidClientConfig), or the informer
 * was never judged (True/Discovered); otherwise Online stays what the rounds said.
 */
export async function discoverInformer(input: {
  informer: UpdateInformer;
  now: string;
  query: InformerQuery;
  discovery?: DiscoveryRecord;
}): Promise<DiscoverResult> {
  const { informer, now } = input;
  const conditions = informer.status?.conditions ?? [];
  if (!isInformerActive(informer))
    return { conditions: withOnline(conditions, onlineCondition(informer, undefined, undefined, now)!, now) };
  const nowMs = Date.parse(now);
  if (!discoveryDue(input.discovery, informer, nowMs)) {
    const checked = Date.parse(input.discovery!.checkedAt);
    return {
      discovery: input.discovery!,
      conditions: [...conditions],
      requeueAfterMs: Math.max(1, checked + DISCOVERY_REFRESH_MS - nowMs),
    };
  }
  const discovery = await readDiscovery(informer, input.query, now);
  const generation = informer.metadata.generation;
  const base = { type: 'Online', ...(generation === undefined ? {} : { observedGeneration: generation }), lastHeartbeatTime: now };
  if (discovery.error !== undefined) {
    // Only a discovery that got no connection says the informer is off line; one that
    // answers badly says nothing about its hooks, which are asked anyway.
    if (judgedByHooks(conditions)) return { discovery, conditions: [...conditions], requeueAfterMs: FAILURE_RETRY_MS };
    const online = UNREACHABLE.has(discovery.reason)
      ? { ...base, status: 'False' as const, reason: offlineReason(discovery.reason), message: clip(`discovery: ${discovery.error}`) }
      : {
          ...base,
          status: 'Unknown' as const,
          reason: 'DiscoveryUnreadable',
          message: clip(`discovery: ${discovery.error}: its hooks are asked anyway, and their answers set Online`),
        };
    return { discovery, conditions: withOnline(conditions, online, now), requeueAfterMs: FAILURE_RETRY_MS };
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
  return { discovery, conditions: next, handlers, requeueAfterMs: DISCOVERY_REFRESH_MS };
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
  outcome: InformerOutcome & { reason?: QueryErrorReason };
}

/**
 * Asks `informer` for `hook` with `body`, reading its discovery first when due: the
 * outcome, and the discovery to keep. Shared by the UpdatePlan and the upgrade rounds.
 */
export async function askInformer(
  informer: UpdateInformer,
  hook: InsightsHook,
  body: unknown,
  input: { query: InformerQuery; now: string; discovery?: DiscoveryRecord },
): Promise<InformerRound> {
  let discovery = input.discovery;
  if (discovery === undefined || discoveryDue(discovery, informer, Date.parse(input.now)))
    discovery = await readDiscovery(informer, input.query, input.now);
  if (!discoveryAsks(discovery, hook)) {
    const message = `does not serve ${hook} (its discovery lists: ${(discovery.handlers ?? []).join(', ') || 'nothing'})`;
    return { discovery, outcome: { response: 'Success', message, insights: [], findings: [] } };
  }
  const outcome = await input.query(informer.spec, { kind: hook, body });
  return { discovery, outcome };
}

/**
 * The UpdatePlan's next status (informer entries in name order, observedGeneration,
 * Analyzed and RisksAccepted), every informer's conditions, and when to reconcile again.
 */
export async function reconcileUpdatePlan(input: UpdatePlanReconcileInput): Promise<UpdatePlanReconcileResult> {
  const { plan, now } = input;
  const nowMs = Date.parse(now);
  const waitBoundMs = input.waitBoundMs ?? DEFAULT_WAIT_BOUND_MS;
  const generation = plan.metadata.generation;
  const fresh = generation === undefined || plan.status?.observedGeneration === generation;
  const previous = new Map((plan.status?.informers ?? []).map((e) => [e.name, e]));
  const active = input.informers.filter(isInformerActive).sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  const due = active.filter((i) => dueInMs(previous.get(i.metadata.name ?? ''), fresh, nowMs) <= 0);

  // informerUpdate: only when a generation is first analysed, not on every Wait re-ask.
  const body = updatePlanInsightsRequest(plan, { ...input.context, informerUpdate: !fresh });
  const discovery = new Map(input.discovery ?? []);
  const rounds = new Map(
    await mapBounded(due, QUERY_CONCURRENCY, async (informer) => {
      const name = informer.metadata.name ?? '';
      const round = await askInformer(informer, 'updatePlanInsights', body, { query: input.query, now, discovery: discovery.get(name) });
      return [name, round] as const;
    }),
  );

  const entries: InformerStatus[] = [];
  for (const informer of active) {
    const name = informer.metadata.name ?? '';
    const round = rounds.get(name);
    const before = previous.get(name);
    if (round === undefined) {
      entries.push(before!);
      continue;
    }
    discovery.set(name, round.discovery);
    entries.push(mergeInformerResponse(name, before, round.outcome, now, { waitBoundMs }));
  }
  const informerConditions = new Map<string, InformerCondition[]>();
  for (const informer of input.informers) {
    if (informer.metadata.deletionTimestamp !== undefined) continue;
    const name = informer.metadata.name ?? '';
    const conditions = informer.status?.conditions ?? [];
    const entry = entries.find((e) => e.name === name);
    const online = onlineCondition(informer, rounds.get(name), entry, now);
    informerConditions.set(name, online === undefined ? [...conditions] : withOnline(conditions, online, now));
  }

  const status: UpdatePlanStatus = {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    informers: entries,
    conditions: plan.status?.conditions ?? [],
  };
  status.conditions = updatePlanConditions({ ...plan, status }, input.informers, now);
  if (active.length === 0) return { status, informerConditions, discovery };
  const requeueAfterMs = Math.max(1, Math.min(...entries.map((e) => dueInMs(e, true, nowMs))));
  return { status, informerConditions, discovery, requeueAfterMs };
}

/** `conditions` with `online` set; Online carries the seed's lastHeartbeatTime. */
export function withOnline(
  conditions: readonly InformerCondition[],
  online: Omit<InformerCondition, 'lastTransitionTime'>,
  now: string,
): InformerCondition[] {
  return setCondition(conditions, online, now);
}

function clip(text: string, max = 1000): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * What a round learned about an informer's Online state, with the seed's reasons:
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
