// The seed's UpdateStatus for an Instance: while its upgrade plan runs, the informers'
// updateInsights hooks are asked (on the pulse, and again after 5 s when one answers
// Wait), their answers folded as for UpdatePlans (insights.ts), and the conditions
// UpdatePending and UpdateActive say where the upgrade stands. When the run ends the
// section says so and nobody is asked any more. Pure apart from `query`.
//
// Choices where the seed is silent (it speaks of clusters and worker pools, planwarden of
// Instances): the upgrade is the Instance's last started run when its trigger is
// `upgrade`; UpdatePending is True until that run is terminal; UpdateActive is True while
// it can make progress (PENDING / IN_PROGRESS), False while a step waits to retry
// (AwaitingRetry) and once it ended; an Instance that never ran an upgrade has no section.
import type { Condition, Instance, PlanState, UpdateStatus } from '../../shared/api/schema.ts';
import { setCondition } from '../../shared/conditions/conditions.ts';
import { runsOf } from '../../shared/plan/history.ts';
import { isRunning } from '../../shared/plan/triggers.ts';
import { isInformerActive, mergeInformerResponse, updateInsightsRequest } from './insights.ts';
import { mapBounded } from '../concurrency.ts';
import {
  askInformer,
  DEFAULT_WAIT_BOUND_MS,
  dueInMs,
  QUERY_CONCURRENCY,
  type DiscoveryRecord,
  type InformerRoundInput,
} from './reconciler.ts';

/** How often the informers are asked while an upgrade runs (the controller's not-Ready pulse). */
export const UPGRADE_PULSE_MS = 10_000;

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

export interface UpgradeReconcileInput extends InformerRoundInput {
  instance: Instance;
  /** How often the informers are asked while the upgrade runs (default UPGRADE_PULSE_MS). */
  pulseMs?: number;
}

export interface UpgradeReconcileResult {
  /** The Instance's next status.updateStatus (undefined: no section). */
  updateStatus?: UpdateStatus;
  discovery: Map<string, DiscoveryRecord>;
  requeueAfterMs?: number;
}

/** The Instance's next UpdateStatus section, and when to ask again. */
export async function reconcileUpgradeStatus(input: UpgradeReconcileInput): Promise<UpgradeReconcileResult> {
  const { instance, now } = input;
  const discovery = new Map(input.discovery ?? []);
  const run = upgradeRunOf(instance);
  const stored = instance.status?.updateStatus;
  if (run === undefined) return { ...(stored === undefined ? {} : { updateStatus: stored }), discovery };
  const previous = stored?.id === run.id ? stored : undefined;
  const section: UpdateStatus = {
    plan: run.plan,
    id: run.id,
    ...(run.target === undefined ? {} : { operatorVersion: run.target }),
    ...(run.from === undefined ? {} : { fromOperatorVersion: run.from }),
    informers: previous?.informers ?? [],
  };
  section.conditions = upgradeConditions(previous?.conditions, run, now);
  if (!isRunning(run.state)) return { updateStatus: section, discovery };

  const nowMs = Date.parse(now);
  const pulseMs = input.pulseMs ?? UPGRADE_PULSE_MS;
  const entries = new Map((previous?.informers ?? []).map((e) => [e.name, e]));
  const dueIn = (name: string) => dueInMs(entries.get(name), true, nowMs, pulseMs);
  const active = input.informers.filter(isInformerActive).sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  const due = active.filter((i) => dueIn(i.metadata.name ?? '') <= 0);
  const body = updateInsightsRequest(
    { namespace: instance.metadata.namespace, name: instance.metadata.name, uid: instance.metadata.uid, plan: run.plan },
    { ...input.context, informerUpdate: false },
  );
  const rounds = await mapBounded(due, QUERY_CONCURRENCY, async (informer) => {
    const name = informer.metadata.name ?? '';
    return [
      name,
      await askInformer(informer, 'updateInsights', body, { query: input.query, now, discovery: discovery.get(name) }),
    ] as const;
  });
  for (const [name, round] of rounds) {
    discovery.set(name, round.discovery);
    entries.set(
      name,
      mergeInformerResponse(name, entries.get(name), round.outcome, now, { waitBoundMs: input.waitBoundMs ?? DEFAULT_WAIT_BOUND_MS }),
    );
  }
  section.informers = active.map((i) => entries.get(i.metadata.name ?? '')).filter((e) => e !== undefined);
  const requeueAfterMs = active.length === 0 ? pulseMs : Math.max(1, Math.min(...active.map((i) => dueIn(i.metadata.name ?? ''))));
  return { updateStatus: section, discovery, requeueAfterMs };
}
