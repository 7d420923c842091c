// The FleetRollout worker: the I/O around the pure decision (decide.ts). For one rollout it
// reads the rollout and its targets' Instances from the caches, decides, records the
// decision in status *before* any trigger is written (a target is Running in status before
// its trigger exists, so a crash in between re-sends the same id and never doubles a run),
// then, for each trigger, asks the API server whether the rollout's author may patch that
// Instance (a SubjectAccessReview for the recorded user and groups — never impersonation),
// writes the trigger with the controller's own identity and the rollout's mark, and records
// what happened (written, forbidden, refused by admission for now or for good).
//
// Every trigger goes through the Instance admission webhook like anyone's: the one trigger
// policy judges it, the preflight asks the plan's ServiceAccount's rights, and the
// requested-by stamp names the rollout and its author (the mark; shared/fleet.ts).
import { jsonEqual } from '../../shared/json.ts';
import { API_VERSION, GROUP, type FleetRollout, type FleetRolloutStatus, type Instance } from '../../shared/api/schema.ts';
import { findCondition } from '../../shared/conditions/conditions.ts';
import { FLEET_MARK_ANNOTATION, formatMark } from '../../shared/fleet.ts';
import { matchesSelector, selectorQuery } from '../../shared/labelSelector.ts';
import type { AccessReviewer } from '../../shared/kube/access.ts';
import { apiErrorMessage, classifyApiError, KubeApiError, type KubeClient } from '../../shared/kube/client.ts';
import type { ObjectCache } from '../../shared/kube/informer.ts';
import type { WorkerResult } from '../../shared/kube/queue.ts';
import type { EventRecorder } from '../events.ts';
import type { Logger } from '../log.ts';
import { mapBounded } from '../concurrency.ts';
import { decideFleet, recordOutcomes, type TriggerWrite, type WriteOutcome } from './decide.ts';

/**
 * How long a rollout waits after a change of an in-flight target before it looks: the
 * changes of the targets that end meanwhile are handled, and written to its status, at once.
 */
export const FLEET_WAKE_BATCH_MS = 250;

/** Trigger writes (each after its SubjectAccessReview) in flight at once for one rollout. */
export const TRIGGER_WRITE_CONCURRENCY = 16;

/** The field manager of the controller's trigger writes (kubectl shows it in managedFields). */
export const FLEET_FIELD_MANAGER = 'planwarden-fleet';

export interface FleetWorkerDeps {
  kube: KubeClient;
  rollouts: ObjectCache<FleetRollout>;
  instances: ObjectCache<Instance>;
  /** Asks the API server whether the author may patch a target (uncached: a right taken away counts at once). */
  access: AccessReviewer;
  events?: EventRecorder;
  logger: Logger;
  /**
   * Called with the rollout as written, after each status write and before any trigger it
   * records is written: the wake-up index must know a target is in flight before its
   * Instance can change (the rollout's own watch event may come after the Instance's).
   */
  written?: (rollout: FleetRollout) => void;
  /** Targets by state, per rollout (metrics). */
  setTargets?: (rollout: string, counts: Record<string, number> | undefined) => void;
  clock?: () => Date;
}

/** The JSON patch that writes one trigger and the rollout's mark, as one request. */
export function triggerPatch(w: TriggerWrite, instance: Instance | undefined): unknown[] {
  const mark = formatMark(w.mark);
  const ops: unknown[] = [];
  if (instance?.metadata.annotations) {
    ops.push({ op: 'add', path: `/metadata/annotations/${FLEET_MARK_ANNOTATION.replace(/~/g, '~0').replace(/\//g, '~1')}`, value: mark });
  } else {
    // No annotations yet: the map is written whole, and only if nobody wrote one meanwhile.
    ops.push({ op: 'test', path: '/metadata/resourceVersion', value: instance?.metadata.resourceVersion ?? '' });
    ops.push({ op: 'add', path: '/metadata/annotations', value: { [FLEET_MARK_ANNOTATION]: mark } });
  }
  if (w.plan) {
    const planExecution = {
      planName: w.plan.name,
      id: w.runId,
      abort: false,
      ...(w.plan.parameters ? { parameters: w.plan.parameters } : {}),
    };
    ops.push({ op: 'add', path: '/spec/planExecution', value: planExecution });
  } else {
    ops.push({ op: 'replace', path: '/spec/operatorVersion/name', value: w.upgrade!.operatorVersion });
  }
  return ops;
}

/**
 * How an Instance write failed, as a target's outcome: an admission webhook's denial is a
 * refusal (409: the remedy is to wait, so it is retried; otherwise for good); anything else
 * (the Instance gone, a conflict, the API server unreachable) is tried again.
 */
export function outcomeOfError(w: Pick<TriggerWrite, 'namespace' | 'name'>, err: unknown): WriteOutcome {
  const message = apiErrorMessage(err);
  const denied = err instanceof KubeApiError && /admission webhook .* denied the request/.test(message);
  if (denied)
    return {
      namespace: w.namespace,
      name: w.name,
      kind: 'refused',
      wait: err.statusCode === 409,
      message: message.replace(/^.*denied the request: /, ''),
    };
  return { namespace: w.namespace, name: w.name, kind: 'error', message };
}

/** The Instances the rollout's selectors match now (read once, when its targets are resolved). */
async function matchingInstances(deps: FleetWorkerDeps, rollout: FleetRollout): Promise<Instance[]> {
  const spec = rollout.spec;
  let namespaces: Set<string> | undefined;
  if (spec.namespaceSelector) {
    const list = await deps.kube.list<{ metadata: { name?: string } }>('/api/v1/namespaces', {
      labelSelector: selectorQuery(spec.namespaceSelector) || undefined,
    });
    namespaces = new Set(list.items.map((n) => n.metadata.name ?? ''));
  }
  return deps.instances
    .list()
    .filter(
      (i) => (namespaces ? namespaces.has(i.metadata.namespace ?? '') : true) && matchesSelector(i.metadata.labels, spec.instanceSelector),
    );
}

/** Whether a condition turned True between two statuses (for the one Event it deserves). */
const turnedTrue = (before: FleetRolloutStatus | undefined, after: FleetRolloutStatus, type: string) =>
  findCondition(after.conditions, type)?.status === 'True' && findCondition(before?.conditions, type)?.status !== 'True';

export function fleetWorker(deps: FleetWorkerDeps): (key: string) => Promise<WorkerResult> {
  const clock = deps.clock ?? (() => new Date());
  const writeStatus = async (rollout: FleetRollout, status: FleetRolloutStatus): Promise<FleetRollout> => {
    const stored = await deps.kube.replace<FleetRollout>({ ...rollout, status }, { subresource: 'status' });
    deps.written?.(stored);
    return stored;
  };

  return async (key) => {
    const cached = deps.rollouts.get(key);
    if (!cached) {
      deps.setTargets?.(key, undefined);
      return undefined;
    }
    let rollout: FleetRollout = { ...cached, apiVersion: API_VERSION, kind: 'FleetRollout' };
    const matching = rollout.status?.resolved ? [] : await matchingInstances(deps, rollout);
    const decision = decideFleet({
      rollout,
      instance: (namespace, name) => deps.instances.get(`${namespace}/${name}`),
      matching: () => matching,
      now: clock(),
    });
    let status = decision.status;
    let requeueAfterMs = decision.requeueAfterMs;
    try {
      // Recorded before any trigger is written: a crash after this re-sends, never doubles.
      if (!jsonEqual(rollout.status ?? null, status)) rollout = await writeStatus(rollout, status);
      if (decision.writes.length > 0) {
        // Each trigger is its own question and write; a wave of 100 need not wait in line.
        const outcomes = await mapBounded(decision.writes, TRIGGER_WRITE_CONCURRENCY, (w) => writeTrigger(deps, w));
        const after = recordOutcomes(rollout, status, outcomes, clock());
        status = after.status;
        if (after.requeueAfterMs !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, after.requeueAfterMs);
        for (const o of outcomes) {
          if (o.kind === 'forbidden' || (o.kind === 'refused' && !o.wait)) {
            deps.events?.record(
              rollout,
              'Warning',
              'TargetFailed',
              `${o.namespace}/${o.name}: ${o.kind === 'forbidden' ? `Forbidden: ${o.message}` : o.message}`,
            );
          }
        }
        if (!jsonEqual(rollout.status ?? null, status)) rollout = await writeStatus(rollout, status);
      }
    } catch (err) {
      const kind = classifyApiError(err);
      if (kind === 'conflict') return { requeue: true };
      if (kind === 'notFound') return undefined;
      throw err;
    }
    if (turnedTrue(cached.status, status, 'Failed'))
      deps.events?.record(rollout, 'Warning', 'RolloutFailed', findCondition(status.conditions, 'Failed')?.message ?? 'failed');
    if (turnedTrue(cached.status, status, 'Complete'))
      deps.events?.record(rollout, 'Normal', 'RolloutComplete', findCondition(status.conditions, 'Complete')?.message ?? 'complete');
    deps.setTargets?.(key, status.counts);
    return requeueAfterMs === undefined ? undefined : { requeueAfterMs };
  };
}

/** One trigger: the author's right first (a SubjectAccessReview), then the write as the controller. */
async function writeTrigger(deps: FleetWorkerDeps, w: TriggerWrite): Promise<WriteOutcome> {
  const answer = await deps.access.canI(
    { user: w.author.username, groups: w.author.groups },
    { verb: 'patch', group: GROUP, resource: 'instances', namespace: w.namespace, name: w.name },
  );
  if (answer.kind === 'denied') {
    return {
      namespace: w.namespace,
      name: w.name,
      kind: 'forbidden',
      message: `${w.author.username} may not patch instances "${w.name}" in namespace "${w.namespace}"${answer.reason ? ` (${answer.reason})` : ''}`,
    };
  }
  if (answer.kind === 'unknown')
    return {
      namespace: w.namespace,
      name: w.name,
      kind: 'error',
      message: `could not ask whether ${w.author.username} may patch it: ${answer.reason}`,
    };
  const instance = deps.instances.get(`${w.namespace}/${w.name}`);
  // Its plans run as the ServiceAccount it names: the author must be allowed to act as it,
  // as a manual trigger of an upgrade must (asked before each trigger: a right taken away counts).
  const sa = instance?.spec.serviceAccountName;
  if (sa) {
    const actAs = await deps.access.canI(
      { user: w.author.username, groups: w.author.groups },
      { verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace: w.namespace, name: sa },
    );
    if (actAs.kind === 'denied') {
      return {
        namespace: w.namespace,
        name: w.name,
        kind: 'forbidden',
        message: `${w.author.username} may not impersonate serviceaccounts "${sa}" in namespace "${w.namespace}", which its plans run as${actAs.reason ? ` (${actAs.reason})` : ''}`,
      };
    }
    if (actAs.kind === 'unknown')
      return {
        namespace: w.namespace,
        name: w.name,
        kind: 'error',
        message: `could not ask whether ${w.author.username} may impersonate serviceaccounts "${sa}": ${actAs.reason}`,
      };
  }
  try {
    await deps.kube.patch(
      { apiVersion: API_VERSION, kind: 'Instance', namespace: w.namespace, name: w.name },
      triggerPatch(w, instance),
      'json',
      {
        fieldManager: FLEET_FIELD_MANAGER,
      },
    );
    deps.logger.info({ rollout: w.mark.rollout, instance: `${w.namespace}/${w.name}`, runId: w.runId }, 'rollout trigger written');
    return { namespace: w.namespace, name: w.name, kind: 'written' };
  } catch (err) {
    return outcomeOfError(w, err);
  }
}

/**
 * Which rollouts an Instance change may move: the rollouts with a target in flight (Running
 * or Waiting) on it. Pending targets need no watch: the rollout looks at them whenever it
 * reconciles, which an in-flight target's change or its own requeue causes. Kept current
 * from the rollout cache's events.
 */
export class FleetTargetIndex {
  private readonly byInstance = new Map<string, Set<string>>();
  private readonly byRollout = new Map<string, string[]>();

  update(rollout: FleetRollout): void {
    const name = rollout.metadata.name ?? '';
    this.remove(name);
    const states = rollout.status?.states ?? '';
    if (!rollout.status?.resolved || !/[WR]/.test(states)) return;
    const keys: string[] = [];
    let i = 0;
    for (const ns of rollout.status.resolved) {
      for (const n of ns.names) {
        if (/[WR]/.test(states[i] ?? 'P')) keys.push(`${ns.namespace}/${n}`);
        i++;
      }
    }
    for (const k of keys) {
      const set = this.byInstance.get(k) ?? new Set<string>();
      set.add(name);
      this.byInstance.set(k, set);
    }
    this.byRollout.set(name, keys);
  }

  remove(name: string): void {
    for (const k of this.byRollout.get(name) ?? []) {
      const set = this.byInstance.get(k);
      set?.delete(name);
      if (set?.size === 0) this.byInstance.delete(k);
    }
    this.byRollout.delete(name);
  }

  rolloutsOf(instanceKey: string): string[] {
    return [...(this.byInstance.get(instanceKey) ?? [])];
  }
}
