// Wait: done once an object (spec.object, whose fields may use template values) has a
// condition (spec.condition; status True unless given); fatal once timeoutSeconds have passed
// since the task started. Without timeoutSeconds it waits until the condition holds or the
// plan is aborted, as an Apply waits for health.
import type { ObjectRef } from '../../shared/api/schema.ts';
import type { KubeResource } from '../../shared/kube/client.ts';
import { millisOf } from '../../shared/time.ts';
import {
  isObservation,
  observationForError,
  renderVarsOf,
  scopeViolationOf,
  TenantExecutor,
  type ExecutionContext,
  type Observation,
} from './context.ts';
import { describeObject } from './health.ts';
import { resolveWaitRef } from '../../shared/plan/waitRef.ts';
import { servedResource } from './tenancy.ts';

export interface WaitInput {
  ref: ObjectRef;
  condition: { type: string; status: string };
  /** The object as read; undefined when it does not exist (yet). */
  object: KubeResource | undefined;
  timeoutSeconds?: number;
  taskStartedAt: string;
  now: string | Date;
}

interface ConditionLike {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

function conditionNow(object: KubeResource | undefined, type: string): string {
  if (!object) return 'object not found';
  const conditions = (object.status as { conditions?: ConditionLike[] } | undefined)?.conditions ?? [];
  const c = conditions.find((x) => x.type === type);
  if (!c) return `no ${type} condition`;
  return `${type}=${c.status ?? 'Unknown'}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ''})` : ''}`;
}

/** The observation for one look at the awaited object. */
export function waitObservation(input: WaitInput): Observation {
  const { ref, condition, object } = input;
  const what = `${describeObject({ kind: ref.kind, metadata: { name: ref.name } })} to have condition ${condition.type}=${condition.status}`;
  const conditions = (object?.status as { conditions?: ConditionLike[] } | undefined)?.conditions ?? [];
  if (conditions.some((c) => c.type === condition.type && c.status === condition.status)) {
    return {
      kind: 'done',
      message: `${describeObject({ kind: ref.kind, metadata: { name: ref.name } })}: ${condition.type}=${condition.status}`,
    };
  }
  const elapsedMs = millisOf(input.now) - millisOf(input.taskStartedAt);
  if (input.timeoutSeconds !== undefined && elapsedMs >= input.timeoutSeconds * 1000) {
    return {
      kind: 'fatalError',
      message: `timed out after ${input.timeoutSeconds}s waiting for ${what} (last seen: ${conditionNow(object, condition.type)})`,
    };
  }
  return { kind: 'inProgress', message: `waiting for ${what} (now: ${conditionNow(object, condition.type)})` };
}

export class WaitExecutor extends TenantExecutor {
  /** A Wait only reads (the ServiceAccount, discovery, the object). */
  readonly writesNothing = true;

  async execute(ctx: ExecutionContext): Promise<Observation> {
    const spec = ctx.task.spec;
    const resolved = resolveWaitRef(ctx.task.name, spec, renderVarsOf(ctx));
    if ('error' in resolved) return { kind: 'fatalError', message: resolved.error };
    const { ref } = resolved;
    const doing = `wait for ${describeObject({ kind: ref.kind, metadata: { name: ref.name } })}`;
    const identity = await this.identityFor(ctx);
    if (isObservation(identity)) return identity;
    let object: KubeResource | undefined;
    try {
      // An unknown kind reads as absent: its CRD may still be on its way.
      const resource = await servedResource(identity.kube, ref.apiVersion, ref.kind);
      if (resource) {
        const violation = scopeViolationOf(
          { kind: ref.kind, metadata: { namespace: ref.namespace } },
          resource.namespaced,
          ctx,
          this.tenancy,
        );
        if (violation) return { kind: 'fatalError', message: `${doing}: refused: ${violation}` };
        object = await identity.kube.get({ ...ref }, ctx.signal);
      }
    } catch (err) {
      return observationForError(err, doing, identity, ctx.operatorVersion.metadata.name);
    }
    return waitObservation({
      ref,
      condition: { type: spec!.condition!.type, status: spec!.condition!.status ?? 'True' },
      object,
      timeoutSeconds: spec?.timeoutSeconds,
      taskStartedAt: ctx.taskStartedAt,
      now: ctx.now,
    });
  }
}
