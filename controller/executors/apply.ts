// Apply: render the task's templates, server-side apply each object (field manager
// "planwarden", forced: planwarden owns what its templates say), then judge health from
// what the API returned — done once every object is current. Every request is the
// Instance's ServiceAccount's, and an object outside the Instance's namespace is refused
// before any request (tenancy.ts).
import {
  FIELD_MANAGER,
  isObservation,
  observationForError,
  renderVarsOf,
  scopeViolationOf,
  TenantExecutor,
  type ExecutionContext,
  type ExecutorDeps,
  type Observation,
} from './context.ts';
import { combineHealth, describeObject, judgeHealth, type Health } from './health.ts';
import { renderResources } from '../../shared/template/render.ts';
import { prepareObject } from '../../shared/plan/prepare.ts';

export { prepareObject, type PrepareOptions } from '../../shared/plan/prepare.ts';

/** Health as an observation. */
export function observationForHealth(health: Health): Observation {
  switch (health.status) {
    case 'current':
      return { kind: 'done', message: health.message };
    case 'inProgress':
      return { kind: 'inProgress', message: health.message };
    case 'failed':
      return { kind: 'fatalError', message: health.message };
  }
}

export class ApplyExecutor extends TenantExecutor {
  private readonly fieldManager: string;

  constructor(deps: ExecutorDeps) {
    super(deps);
    this.fieldManager = deps.fieldManager ?? FIELD_MANAGER;
  }

  async execute(ctx: ExecutionContext): Promise<Observation> {
    const rendered = renderResources(ctx.operatorVersion.spec.templates, ctx.task.spec?.resources ?? [], renderVarsOf(ctx));
    if (!rendered.ok) return { kind: 'fatalError', message: rendered.error.message };
    if (rendered.value.length === 0) return { kind: 'done', message: `task ${ctx.task.name}: no objects to apply` };
    const identity = await this.identityFor(ctx);
    if (isObservation(identity)) return identity;

    const healths: Health[] = [];
    for (const { template, object } of rendered.value) {
      const doing = `apply ${describeObject(object)} (template ${template})`;
      try {
        const resource = await identity.kube.resourceFor(object.apiVersion, object.kind);
        const prepared = prepareObject(object, { instance: ctx.instance, plan: ctx.plan, namespaced: resource.namespaced });
        const violation = scopeViolationOf(prepared, resource.namespaced, ctx, this.tenancy);
        if (violation) return { kind: 'fatalError', message: `${doing}: refused: ${violation}` };
        const applied = await identity.kube.apply(prepared, { fieldManager: this.fieldManager, force: true, signal: ctx.signal });
        healths.push(judgeHealth(applied));
      } catch (err) {
        return observationForError(err, doing, identity, ctx.operatorVersion.metadata.name);
      }
    }
    return observationForHealth(combineHealth(healths));
  }
}
