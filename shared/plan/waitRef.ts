// The object a Wait task awaits, with template values rendered in its fields: the Wait
// executor reads it, and "what a plan needs" (needs.ts) grants `get` on it.
import type { ObjectRef, TaskSpec } from '../api/schema.ts';
import { renderTemplate, type RenderVars } from '../template/render.ts';

/** spec.object with template values rendered (namespace defaulted to the Instance's), or an error message. */
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
