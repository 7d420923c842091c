// Between plans the controller is an honest HyperFleet adapter: it re-judges the objects the
// last completed plan applied — read as the Instance's ServiceAccount, judged by the same
// kstatus / `kubectl rollout status` rules the Apply executor uses — so that a deleted or
// broken object shows as Available=False instead of a green status over a broken service.
import type { Instance, OperatorVersion, Task } from '../../shared/api/schema.ts';
import { apiErrorMessage, classifyApiError, KubeApiError, type KubeClient } from '../../shared/kube/client.ts';
import { isObservation, planIdentity } from './context.ts';
import { describeObject, judgeHealth } from './health.ts';
import { parameterTypesOf, renderResources, type RenderVars } from '../../shared/template/render.ts';
import { renderIdentity } from '../../shared/blueprint/identity.ts';
import { planPipes } from '../../shared/plan/pipe.ts';
import { runVars } from '../../shared/plan/runVars.ts';
import { applyTasksOf } from '../../shared/plan/applyTasks.ts';
import { explainForbidden, LOCKED_DOWN, parseRbacRefusal, type TenancyPolicy } from './tenancy.ts';

/** How the applied objects are, worst first: one is gone, one failed, one could not be read, one is progressing, all current. */
export type AppliedState = 'missing' | 'failed' | 'unknown' | 'inProgress' | 'current';
const ORDER: readonly AppliedState[] = ['missing', 'failed', 'unknown', 'inProgress', 'current'];

export interface AppliedHealth {
  state: AppliedState;
  /** The objects that decide the state, e.g. "deployment web (template deployment.yaml) is missing". */
  message: string;
  /** How many objects were judged. */
  objects: number;
}

export interface AppliedObjectsInput {
  instance: Instance;
  operatorVersion: OperatorVersion;
  /** The plans whose Apply tasks are judged: every plan whose latest run is COMPLETE. */
  plans: readonly string[];
  parameters: Readonly<Record<string, string>>;
  signal?: AbortSignal;
}

/** Judges the objects the Apply tasks of `input.plans` apply (each task once); undefined when they apply none. */
export async function judgeAppliedObjects(
  deps: { kube: KubeClient; tenancy?: TenancyPolicy },
  input: AppliedObjectsInput,
): Promise<AppliedHealth | undefined> {
  const { instance, operatorVersion: ov } = input;
  const name = instance.metadata.name ?? '';
  const varsFor = (plan: string): RenderVars => ({
    params: input.parameters,
    name,
    namespace: instance.metadata.namespace ?? '',
    operatorVersion: ov.spec.version,
    paramTypes: parameterTypesOf(ov.spec.parameters),
    ...runVars(ov.spec, { plan, pipes: planPipes(ov.spec, name, plan), ...renderIdentity(ov) }),
  });
  // Each task once, rendered with the first plan (in input order) that runs it.
  const tasks = new Map<string, { task: Task; plan: string }>();
  for (const plan of input.plans)
    for (const task of applyTasksOf(ov, plan, input.parameters)) if (!tasks.has(task.name)) tasks.set(task.name, { task, plan });
  const objects = [...tasks.values()].flatMap(({ task, plan }) => {
    const rendered = renderResources(ov.spec.templates, task.spec?.resources ?? [], varsFor(plan));
    return rendered.ok ? rendered.value : [];
  });
  if (objects.length === 0) return undefined;
  const identity = await planIdentity(deps.kube, instance, deps.tenancy ?? LOCKED_DOWN, input.signal);
  if (isObservation(identity))
    return { state: 'unknown', message: identity.message ?? 'cannot act as the plans ServiceAccount', objects: objects.length };

  const judged: { state: AppliedState; message: string }[] = [];
  for (const { template, object } of objects) {
    const what = `${describeObject(object)} (template ${template})`;
    try {
      const resource = await identity.kube.resourceFor(object.apiVersion, object.kind);
      const namespace = resource.namespaced ? (object.metadata.namespace ?? instance.metadata.namespace) : undefined;
      const found = await identity.kube.get(
        { apiVersion: object.apiVersion, kind: object.kind, namespace, name: object.metadata.name ?? '' },
        input.signal,
      );
      if (!found) {
        judged.push({ state: 'missing', message: `${what} is missing` });
        continue;
      }
      const health = judgeHealth(found);
      judged.push({ state: health.status === 'failed' ? 'failed' : health.status, message: health.message });
    } catch (err) {
      const kind = classifyApiError(err);
      // The namespace took back the controller's grant: say which, and how to give it back.
      const refusal = err instanceof KubeApiError && err.statusCode === 403 ? parseRbacRefusal(apiErrorMessage(err)) : undefined;
      const why =
        kind === 'notFound'
          ? `kind ${object.kind} (${object.apiVersion}) is no longer served`
          : refusal?.verb === 'impersonate'
            ? explainForbidden(refusal, identity, ov.metadata.name)
            : apiErrorMessage(err);
      judged.push({ state: 'unknown', message: `${what} cannot be read: ${why}` });
    }
  }
  const state = ORDER.find((s) => judged.some((j) => j.state === s)) ?? 'current';
  const deciding = judged.filter((j) => j.state === state);
  const shown = deciding.slice(0, 3).map((j) => j.message);
  if (deciding.length > 3) shown.push(`and ${deciding.length - 3} more`);
  const message =
    state === 'current' ? `${judged.length} applied ${judged.length === 1 ? 'object is' : 'objects are'} current` : shown.join('; ');
  return { state, message, objects: judged.length };
}
