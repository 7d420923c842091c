// Delete: render the task's templates and delete each object with foreground propagation
// (its dependents go first); done once a read of every one says 404. An object whose kind
// is no longer served (its CRD is gone) cannot exist and counts as deleted — cleanup plans
// must expect that what they remove may already be missing.
import type { KubeClient, KubeResource, ResourceRef } from '../../shared/kube/client.ts';
import { observationForError, renderVarsOf, type ExecutionContext, type ExecutorDeps, type Observation, type TaskExecutor } from './context.ts';
import { describeObject } from './health.ts';
import { renderResources } from './render.ts';

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

export class DeleteExecutor implements TaskExecutor {
  private readonly kube: KubeClient;

  constructor(deps: ExecutorDeps) {
    this.kube = deps.kube;
  }

  async execute(ctx: ExecutionContext): Promise<Observation> {
    const rendered = renderResources(ctx.operatorVersion.spec.templates, ctx.task.spec?.resources ?? [], renderVarsOf(ctx));
    if (!rendered.ok) return { kind: 'fatalError', message: rendered.error.message };

    const waiting: string[] = [];
    for (const { template, object } of rendered.value) {
      const ref = deletionRef(object, ctx.instance.metadata.namespace ?? '');
      try {
        // A read first: an object already on its way out is not deleted again.
        const current = await this.kube.get(ref, ctx.signal);
        const state = deletionState(current);
        if (state === 'gone') continue;
        if (state === 'present' && !(await this.kube.delete(ref, { propagationPolicy: 'Foreground', signal: ctx.signal }))) continue;
        waiting.push(waitingFor(object, current));
      } catch (err) {
        return observationForError(err, `delete ${describeObject(object)} (template ${template})`);
      }
    }
    if (waiting.length === 0) {
      const n = rendered.value.length;
      return { kind: 'done', message: n === 0 ? `task ${ctx.task.name}: no objects to delete` : `${n} object${n === 1 ? '' : 's'} deleted` };
    }
    const shown = waiting.slice(0, 3);
    if (waiting.length > 3) shown.push(`and ${waiting.length - 3} more`);
    return { kind: 'inProgress', message: shown.join('; ') };
  }
}
