// Delete: render the task's templates and delete each object with foreground propagation
// (its dependents go first); done once a read of every one says 404. An object whose kind
// is no longer served (its CRD is gone) cannot exist and counts as deleted — cleanup plans
// must expect that what they remove may already be missing. Requests are the Instance's
// ServiceAccount's, and only objects in the Instance's namespace are deleted (tenancy.ts).
import type { KubeResource, ResourceRef } from '../../shared/kube/client.ts';
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
import { renderResources } from '../../shared/template/render.ts';
import { servedResource } from './tenancy.ts';

export type DeletionState = 'gone' | 'deleting' | 'present';

/** Where an object is on its way out, from a read (undefined: 404). */
export function deletionState(current: KubeResource | undefined): DeletionState {
  if (!current) return 'gone';
  return current.metadata.deletionTimestamp ? 'deleting' : 'present';
}

/** The object's address, in the Instance's namespace unless it names one. */
export function deletionRef(obj: KubeResource, defaultNamespace: string): ResourceRef & { name: string } {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name ?? '',
    namespace: obj.metadata.namespace ?? defaultNamespace,
  };
}

function waitingFor(obj: KubeResource, current: KubeResource | undefined): string {
  const finalizers = current?.metadata.finalizers ?? [];
  return `${describeObject(obj)} is being deleted${finalizers.length ? ` (finalizers: ${finalizers.join(', ')})` : ''}`;
}

export class DeleteExecutor extends TenantExecutor {
  async execute(ctx: ExecutionContext): Promise<Observation> {
    const rendered = renderResources(ctx.operatorVersion.spec.templates, ctx.task.spec?.resources ?? [], renderVarsOf(ctx));
    if (!rendered.ok) return { kind: 'fatalError', message: rendered.error.message };
    if (rendered.value.length === 0) return { kind: 'done', message: `task ${ctx.task.name}: no objects to delete` };
    const identity = await this.identityFor(ctx);
    if (isObservation(identity)) return identity;

    const waiting: string[] = [];
    for (const { template, object } of rendered.value) {
      const doing = `delete ${describeObject(object)} (template ${template})`;
      const ref = deletionRef(object, ctx.instance.metadata.namespace ?? '');
      try {
        const resource = await servedResource(identity.kube, ref.apiVersion, ref.kind);
        // No resource serves the kind any more: nothing of it can exist.
        if (!resource) continue;
        const violation = scopeViolationOf(
          { kind: ref.kind, metadata: { namespace: ref.namespace } },
          resource.namespaced,
          ctx,
          this.tenancy,
        );
        if (violation) return { kind: 'fatalError', message: `${doing}: refused: ${violation}` };
        // A read first: an object already on its way out is not deleted again.
        const current = await identity.kube.get(ref, ctx.signal);
        const state = deletionState(current);
        if (state === 'gone') continue;
        if (state === 'present' && !(await identity.kube.delete(ref, { propagationPolicy: 'Foreground', signal: ctx.signal }))) continue;
        waiting.push(waitingFor(object, current));
      } catch (err) {
        return observationForError(err, doing, identity, ctx.operatorVersion.metadata.name);
      }
    }
    if (waiting.length === 0) {
      const n = rendered.value.length;
      return { kind: 'done', message: `${n} object${n === 1 ? '' : 's'} deleted` };
    }
    const shown = waiting.slice(0, 3);
    if (waiting.length > 3) shown.push(`and ${waiting.length - 3} more`);
    return { kind: 'inProgress', message: shown.join('; ') };
  }
}
