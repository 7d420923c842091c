// A Wait task's object reference with its template values rendered: the controller's Wait
// executor reads that object, and the webhook's preflight checks the same reference before
// the write that starts the plan is admitted.
import type { ObjectRef, TaskSpec } from '../api/schema.ts';
import { renderTemplate, type RenderVars } from './render.ts';

/** spec.object with template values rendered, or an error message. */
export function resolveWaitRef(taskName: string, spec: TaskSpec | undefined, vars: RenderVars): { ref: ObjectRef } | { error: string } {
  const object = spec?.object;
  if (!object || !spec?.condition?.type) return { error: `wait task ${taskName}: spec.object and spec.condition.type are required` };
  const rendered: Record<string, string> = {};
  for (const key of ['apiVersion', 'kind', 'name', 'namespace'] as const) {
    const source = object[key];
    if (source === undefined) continue;
    const result = renderTemplate(`wait task ${taskName} spec.object.${key}`, source, vars);
    if (!result.ok) return { error: result.error.message.replace(/^template /, '') };
    rendered[key] = result.value;
  }
  return {
    ref: {
      apiVersion: rendered.apiVersion ?? '',
      kind: rendered.kind ?? '',
      name: rendered.name ?? '',
      namespace: rendered.namespace ?? vars.namespace,
    },
  };
}

