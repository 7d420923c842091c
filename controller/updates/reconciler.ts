// The pure passes of pass.ts composed with their query loop (worker.ts untilDecided), for
// callers that hold a `query` and want the decision whole: reconcileUpdatePlan (an
// UpdatePlan's round), discoverInformer (an informer's own discovery) and askInformer (one
// informer asked about one hook, its discovery read first when due). Pure apart from
// `query`: every decision — who is due, whether discovery leaves an informer out, what
// lands in status, when to come back — is the pass's; this module only asks and plans again.
import type { UpdateInformer } from '../../shared/api/schema.ts';
import type { InsightsHook } from './answers.ts';
import type { InformerQuery } from './client.ts';
import {
  askPass,
  discoveryPass,
  updatePlanPass,
  type DiscoveryPass,
  type DiscoveryRecord,
  type InformerRound,
  type InformerRoundFacts,
  type UpdatePlanFacts,
  type UpdatePlanPass,
} from './pass.ts';
import { untilDecided } from './worker.ts';

export {
  DEFAULT_WAIT_BOUND_MS,
  DISCOVERY_REFRESH_MS,
  FAILURE_RETRY_MS,
  QUERY_CONCURRENCY,
  REANALYZE_AFTER_MS,
  WAIT_RETRY_MS,
  discoveryCondition,
  dueInMs,
  onlineCondition,
  withOnline,
  type DiscoveryRecord,
  type InformerRound,
} from './pass.ts';

/** What a round of questions to the informers needs, whatever it asks about. */
export interface InformerRoundInput extends Omit<InformerRoundFacts, 'read'> {
  now: string;
  query: InformerQuery;
}

export interface UpdatePlanReconcileInput extends InformerRoundInput, Omit<UpdatePlanFacts, 'read' | keyof InformerRoundFacts> {}

export type UpdatePlanReconcileResult = UpdatePlanPass;

/**
 * The UpdatePlan's next status (informer entries in name order, observedGeneration,
 * Analyzed and RisksAccepted), every informer's conditions, and when to reconcile again.
 */
export async function reconcileUpdatePlan(input: UpdatePlanReconcileInput): Promise<UpdatePlanReconcileResult> {
  const { query, now, ...facts } = input;
  return untilDecided((read) => updatePlanPass({ ...facts, read }, now), query, now);
}

export type DiscoverResult = DiscoveryPass;

/** An informer's discovery read when due (discoveryPass), whether or not anything asks it about a plan. */
export async function discoverInformer(input: {
  informer: UpdateInformer;
  now: string;
  query: InformerQuery;
  discovery?: DiscoveryRecord;
}): Promise<DiscoverResult> {
  const { informer, now, discovery } = input;
  const name = informer.metadata.name ?? '';
  return untilDecided(
    (read) => {
      const readNow = read.discovery.get(name);
      return discoveryPass({ informer, ...(discovery ? { discovery } : {}), ...(readNow ? { read: readNow } : {}) }, now);
    },
    input.query,
    now,
  );
}

/**
 * Asks `informer` for `hook` with `body`, reading its discovery first when due: the
 * outcome, and the discovery to keep. A hook its discovery clearly leaves out is not asked.
 */
export async function askInformer(
  informer: UpdateInformer,
  hook: InsightsHook,
  body: unknown,
  input: { query: InformerQuery; now: string; discovery?: DiscoveryRecord },
): Promise<InformerRound> {
  const { now, discovery } = input;
  return untilDecided((read) => askPass(informer, hook, body, { ...(discovery ? { discovery } : {}), read }, now), input.query, now);
}
