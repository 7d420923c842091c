// Reconciles one UpdatePlan against the UpdateInformers: asks the informers whose answer is
// due for their insights on the plan's target, folds the answers into status, and computes
// the plan's conditions and each informer's Online condition. Pure apart from `query`.
//
// An informer's answer is due when it has none for the plan's current generation, or when
// its last one has aged: Wait after 5 s (the seed), Failure after 30 s, Success after
// 5 minutes (informers may learn new risks; re-analysis keeps the plan honest). So
// reconciling twice in a row asks nobody the second time and returns the same status —
// the status write the first reconcile causes does not start a query loop — and
// `requeueAfterMs` says when the next answer falls due.
//
// Disabled and deleted informers have no entry in status (their insights no longer block
// an upgrade); a disabled informer's Online is Unknown (Disabled).
import type {
  Condition,
  InformerStatus,
  OperatorVersion,
  UpdateInformer,
  UpdatePlan,
  UpdatePlanStatus,
} from '../../shared/api/schema.ts';
import { setCondition } from '../../shared/conditions/conditions.ts';
import type { InsightsQuery, QueryError } from './client.ts';
import {
  isInformerActive,
  mergeInformerResponse,
  updatePlanConditions,
  updatePlanInsightsRequest,
  type ParsedResponse,
} from './insights.ts';

/** The seed: "Wait … will cause the UpdateStatusController to check back after 5 seconds". */
export const WAIT_RETRY_MS = 5000;
export const FAILURE_RETRY_MS = 30_000;
export const REANALYZE_AFTER_MS = 5 * 60_000;
/** Informers asked at once for one plan. */
export const QUERY_CONCURRENCY = 4;

export interface UpdatePlanReconcileInput {
  plan: UpdatePlan;
  /** Every UpdateInformer (the kind is cluster-scoped: all of them have a say on every plan). */
  informers: UpdateInformer[];
  now: string;
  query: InsightsQuery;
  /** The OperatorVersions the request body names, when the caller knows them. */
  operatorVersions?: { current?: OperatorVersion; target?: OperatorVersion };
}

export interface UpdatePlanReconcileResult {
  status: UpdatePlanStatus;
  /** Each informer's conditions (Online set when something was learned); write where they differ. */
  informerConditions: Map<string, Condition[]>;
  /** When the next informer answer falls due; absent when no informer is active. */
  requeueAfterMs?: number;
}

function retryAfterMs(entry: InformerStatus): number {
  if (entry.response === 'Wait') return WAIT_RETRY_MS;
  if (entry.response === 'Failure') return FAILURE_RETRY_MS;
  return REANALYZE_AFTER_MS;
}

/** Milliseconds until `entry` is due again (≤ 0: due now). */
function dueInMs(entry: InformerStatus | undefined, fresh: boolean, nowMs: number): number {
  if (entry === undefined || !fresh) return 0;
  const last = Date.parse(entry.lastQueryTime ?? '');
  if (Number.isNaN(last)) return 0;
  // A lastQueryTime in the future (skewed or hand-written) must not postpone the next query.
  return Math.min(retryAfterMs(entry), last + retryAfterMs(entry) - nowMs);
}

async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function asFailure(error: QueryError): ParsedResponse {
  return { response: 'Failure', message: error.error, insights: [] };
}

/**
 * The UpdatePlan's next status (informer entries in name order, observedGeneration,
 * Analyzed and RisksAccepted), every informer's conditions, and when to reconcile again.
 */
export async function reconcileUpdatePlan(input: UpdatePlanReconcileInput): Promise<UpdatePlanReconcileResult> {
  const { plan, now } = input;
  const nowMs = Date.parse(now);
  const generation = plan.metadata.generation;
  const fresh = generation === undefined || plan.status?.observedGeneration === generation;
  const previous = new Map((plan.status?.informers ?? []).map((e) => [e.name, e]));
  const active = input.informers
    .filter(isInformerActive)
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  const due = active.filter((i) => dueInMs(previous.get(i.metadata.name ?? ''), fresh, nowMs) <= 0);

  const body = updatePlanInsightsRequest(plan, input.operatorVersions);
  const answers = new Map(
    await mapBounded(due, QUERY_CONCURRENCY, async (informer) => {
      const answer = await input.query(informer.spec, { kind: 'updatePlanInsights', body });
      return [informer.metadata.name ?? '', answer] as const;
    }),
  );

  const informerConditions = new Map<string, Condition[]>();
  for (const informer of input.informers) {
    if (informer.metadata.deletionTimestamp !== undefined) continue;
    const name = informer.metadata.name ?? '';
    const conditions = informer.status?.conditions ?? [];
    const online = onlineCondition(informer, answers.get(name));
    informerConditions.set(name, online === undefined ? [...conditions] : setCondition(conditions, online, now));
  }
  const entries: InformerStatus[] = [];
  for (const informer of active) {
    const name = informer.metadata.name ?? '';
    const answer = answers.get(name);
    const before = previous.get(name);
    if (answer === undefined) entries.push(before!);
    else entries.push(mergeInformerResponse(name, before, 'error' in answer ? asFailure(answer) : answer, now));
  }

  const status: UpdatePlanStatus = {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    informers: entries,
    conditions: plan.status?.conditions ?? [],
  };
  status.conditions = updatePlanConditions({ ...plan, status }, input.informers, now);
  if (active.length === 0) return { status, informerConditions };
  const requeueAfterMs = Math.max(1, Math.min(...entries.map((e) => dueInMs(e, true, nowMs))));
  return { status, informerConditions, requeueAfterMs };
}

/** What this round learned about an informer's Online state; undefined when nothing. */
function onlineCondition(
  informer: UpdateInformer,
  answer: ParsedResponse | QueryError | undefined,
): Omit<Condition, 'lastTransitionTime'> | undefined {
  const generation = informer.metadata.generation;
  const base = generation === undefined ? { type: 'Online' } : { type: 'Online', observedGeneration: generation };
  if (!isInformerActive(informer)) {
    return { ...base, status: 'Unknown', reason: 'Disabled', message: 'spec.enabled is false: the informer is not queried' };
  }
  if (answer === undefined) return undefined;
  if ('error' in answer) return { ...base, status: 'False', reason: answer.reason ?? 'QueryFailed', message: answer.error };
  return { ...base, status: 'True', reason: 'Answered', message: 'the informer answers its hooks with well-formed responses' };
}
