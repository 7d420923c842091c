// Apply-time preflight: what one run of a plan will do, worked out from the OperatorVersion
// and the values the run will use, before the write that starts it is admitted. The webhook
// refuses a write whose plan cannot work — a template that does not render with these
// values, an object the API server would certainly refuse — instead of the plan failing at
// run time; the objects found here are also what the RBAC preflight asks access for. The
// controller renders with the same renderer and the same values (shared/template), so what
// passes here is what the plan applies.
import type { ObjectRef, OperatorVersionSpec, ParameterType, Task, TaskKind } from '../api/schema.ts';
import { renderResources, type RenderVars, type RenderedObject } from '../template/render.ts';
import { resolveWaitRef } from './waitRef.ts';
import { toggleSide, type ToggleSide } from './toggle.ts';
import { pipePodName, pipePodShape, planPipes, pipeObjectName } from './pipe.ts';
import { runVars, type RunIdentity } from './runVars.ts';
import { CLUSTER_SCOPED_KINDS } from '../blueprint/kinds.ts';
import { dns1123LabelProblem, labelValueProblem, objectNameProblem, qualifiedNameProblem } from '../api/kubeNames.ts';

/** Stands for a fan-out target whose name is not known before the step runs (a selector). */
export const TARGET_PLACEHOLDER = 'placeholder-target';

/** One task of the plan, as the run will do it (once per target where the target matters). */
export interface PlannedTask {
  phase: string;
  step: string;
  task: string;
  kind: TaskKind;
  /** The fan-out target this rendering is for, when the task's templates use it. */
  target?: string;
  /** The task's step fans out over targets. */
  fannedOut?: true;
  /** Apply and Delete: the objects their templates render. */
  objects: RenderedObject[];
  /** Wait: the object awaited. */
  waitFor?: ObjectRef;
  /** Toggle: the side these values take (both sides' rights are needed: needs.ts). */
  toggle?: ToggleSide;
  /** Pipe: the ConfigMaps/Secrets the files are stored in (objects holds the Pipe Pod). */
  captures?: ObjectRef[];
}

export type PreflightProblem =
  | { kind: 'render'; task: string; template?: string; parameter?: string; message: string }
  | { kind: 'object'; task: string; template: string; object: string; field: string; message: string; rule?: EscapeRule };

/** The OperatorVersion tenancy rules an object rendered with a run's values can break. */
export type EscapeRule = 'ov.cluster-scoped-kind' | 'ov.other-namespace';

export interface PreflightResult {
  tasks: PlannedTask[];
  problems: PreflightProblem[];
}

export interface PreflightInput {
  ov: OperatorVersionSpec;
  plan: string;
  /** The values the run will use: the Instance's (defaults filled in), overridden by per-run values. */
  values: Readonly<Record<string, string>>;
  instance: { name: string; namespace: string };
  /** Declared parameter types, for the renderer (array/map values become nodes). */
  paramTypes?: Readonly<Record<string, ParameterType>>;
  /** The name every fan-out target renders with (the CLI's placeholder); default: the static nodes. */
  target?: string;
  /** .OperatorName, .AppVersion and .RunID (default: from the spec; RUN_ID_PLACEHOLDER). */
  identity?: Partial<RunIdentity>;
  /** Where objects may land beyond the Instance's namespace (declared and allowed); absent: not checked. */
  tenancy?: { crossNamespace: boolean; clusterScoped: boolean };
}

/** A Pipe Pod is named by planwarden (pipePodName): its template, like KUDO's, may leave the name out. */
export const PIPE_POD_RENDER = { nameOptional: true } as const;

/** Stands for the run's id, which the controller chooses when the run starts. */
export const RUN_ID_PLACEHOLDER = 'preflight';

const TARGET_ACTION = /\{\{-?\s*\.Target\b/;

/** Whether any source this task renders refers to `.Target`. */
function usesTarget(task: Task, templates: Readonly<Record<string, string>>): boolean {
  const spec = task.spec;
  if (task.kind === 'Wait') return Object.values(spec?.object ?? {}).some((v) => typeof v === 'string' && TARGET_ACTION.test(v));
  const sources = task.kind === 'Pipe' ? [spec?.pod ?? ''] : (spec?.resources ?? []);
  return sources.some((name) => TARGET_ACTION.test(templates[name] ?? ''));
}

function describe(object: RenderedObject['object']): string {
  const ns = object.metadata?.namespace;
  return `${object.kind} ${ns ? `${ns}/` : ''}${object.metadata?.name ?? '?'}`;
}

/** Every reason the API server would certainly refuse `object`, as (field, message). */
export function objectProblems(object: RenderedObject['object']): { field: string; message: string }[] {
  const out: { field: string; message: string }[] = [];
  const meta = object.metadata ?? {};
  const name = meta.name;
  if (typeof name === 'string') {
    const p = objectNameProblem(object.apiVersion, object.kind, name);
    if (p) out.push({ field: 'metadata.name', message: `"${name}" is ${p}` });
  }
  const ns = meta.namespace;
  if (ns !== undefined) {
    const p = typeof ns === 'string' ? dns1123LabelProblem(ns) : 'not a string';
    if (p) out.push({ field: 'metadata.namespace', message: `"${String(ns)}" is ${p}` });
  }
  for (const field of ['labels', 'annotations'] as const) {
    const map = meta[field] as unknown;
    if (map === undefined || map === null) continue;
    if (typeof map !== 'object' || Array.isArray(map)) {
      out.push({ field: `metadata.${field}`, message: 'is not a map of strings' });
      continue;
    }
    for (const [key, value] of Object.entries(map as Record<string, unknown>)) {
      const k = qualifiedNameProblem(key);
      if (k) out.push({ field: `metadata.${field}`, message: `key "${key}" has ${k}` });
      if (typeof value !== 'string') {
        out.push({ field: `metadata.${field}.${key}`, message: `is not a string (${JSON.stringify(value)})` });
      } else if (field === 'labels') {
        const v = labelValueProblem(value);
        if (v) out.push({ field: `metadata.labels.${key}`, message: `"${value}" is ${v}` });
      }
    }
  }
  return out;
}

/**
 * Whether `object`, rendered with the run's values, leaves the Instance's namespace — a branch
 * the OperatorVersion's admission only warned about (shared/blueprint/templates.ts) is refused here.
 */
export function escapeProblem(
  object: RenderedObject['object'],
  namespace: string,
  allowed: { crossNamespace: boolean; clusterScoped: boolean },
): { field: string; message: string; rule: EscapeRule } | undefined {
  if (CLUSTER_SCOPED_KINDS.has(object.kind)) {
    return allowed.clusterScoped
      ? undefined
      : { field: 'kind', message: "is cluster-scoped, and plans act only in their Instance's namespace", rule: 'ov.cluster-scoped-kind' };
  }
  const ns = object.metadata?.namespace;
  if (ns === undefined || ns === null || ns === namespace || allowed.crossNamespace) return undefined;
  return {
    field: 'metadata.namespace',
    message: `"${String(ns)}" is not the Instance's namespace "${namespace}"`,
    rule: 'ov.other-namespace',
  };
}

/** The targets a step's templates are rendered for: the static nodes, or one placeholder. */
function targetsOf(step: { targets?: { discovery: { static?: { nodes: string[] } } } }, fixed: string | undefined): string[] | undefined {
  if (!step.targets) return undefined;
  if (fixed !== undefined) return [fixed];
  const nodes = step.targets.discovery.static?.nodes;
  return nodes && nodes.length > 0 ? [...new Set(nodes)] : [TARGET_PLACEHOLDER];
}

/**
 * Renders every Apply, Delete and Wait task of `plan` with the run's values and checks the
 * objects. A fanned-out step renders once per target only where a template uses `.Target`;
 * targets chosen by a selector are not known yet and render with a placeholder name.
 */
export function preflightPlan(input: PreflightInput): PreflightResult {
  const { ov, instance } = input;
  const templates = ov.templates ?? {};
  const tasksByName = new Map((ov.tasks ?? []).map((t) => [t.name, t]));
  const tasks: PlannedTask[] = [];
  const problems: PreflightProblem[] = [];
  const seen = new Set<string>();
  const plan = ov.plans?.[input.plan];
  if (!plan) return { tasks, problems };
  const pipes = planPipes(ov, instance.name, input.plan);
  const varsFor = (phase: string, step: string, target: string | undefined): RenderVars => ({
    params: input.values,
    name: instance.name,
    namespace: instance.namespace,
    operatorVersion: ov.version,
    ...(input.paramTypes ? { paramTypes: input.paramTypes } : {}),
    ...(target === undefined ? {} : { target }),
    ...runVars(ov, { plan: input.plan, phase, step, runId: RUN_ID_PLACEHOLDER, pipes, ...input.identity }),
  });
  for (const phase of plan.phases ?? []) {
    for (const step of phase.steps ?? []) {
      const targets = targetsOf(step, input.target);
      for (const taskName of step.tasks ?? []) {
        const task = tasksByName.get(taskName);
        if (!task) {
          problems.push({ kind: 'render', task: taskName, message: `task ${taskName} is not in the OperatorVersion's spec.tasks` });
          continue;
        }
        if (task.kind === 'Dummy') continue;
        const perTarget = targets !== undefined && usesTarget(task, templates);
        for (const target of perTarget ? targets : [targets?.[0]]) {
          // A task used by several steps renders the same objects each time: judge it once.
          const key = `${taskName}\u0000${perTarget ? target : ''}`;
          if (seen.has(key)) continue;
          seen.add(key);
          const planned: PlannedTask = {
            phase: phase.name,
            step: step.name,
            task: taskName,
            kind: task.kind,
            objects: [],
            ...(perTarget && target !== undefined ? { target } : {}),
            ...(targets ? { fannedOut: true as const } : {}),
          };
          const vars = varsFor(phase.name, step.name, target);
          if (task.kind === 'Toggle') {
            const side = toggleSide(task, input.values);
            if ('error' in side) {
              problems.push({
                kind: 'render',
                task: taskName,
                message: side.error,
                ...(side.parameter ? { parameter: side.parameter } : {}),
              });
              continue;
            }
            planned.toggle = side.side;
          }
          if (task.kind === 'Pipe') {
            const at = { instance: instance.name, plan: input.plan, phase: phase.name, step: step.name, task: taskName };
            const template = task.spec?.pod ?? '';
            const rendered = renderResources(templates, [template], vars, PIPE_POD_RENDER);
            if (!rendered.ok) {
              const { message, parameter } = rendered.error;
              problems.push({ kind: 'render', task: taskName, template, message, ...(parameter ? { parameter } : {}) });
              continue;
            }
            const files = task.spec?.pipe ?? [];
            const pods = rendered.value;
            const shape =
              pods.length === 1 ? pipePodShape(pods[0]!.object, files) : { problems: [`renders ${pods.length} objects, not one Pod`] };
            if ('problems' in shape) {
              problems.push({
                kind: 'render',
                task: taskName,
                template,
                message: `template ${template} is not a Pipe Pod: ${shape.problems.join('; ')}`,
              });
              continue;
            }
            const pod = structuredClone(pods[0]!.object);
            pod.metadata = { ...pod.metadata, name: pipePodName(at), namespace: instance.namespace };
            planned.objects = [{ template, object: pod }];
            planned.captures = files.map((f) => ({
              apiVersion: 'v1',
              kind: f.kind,
              name: pipeObjectName(at, f.key),
              namespace: instance.namespace,
            }));
            tasks.push(planned);
            continue;
          }
          if (task.kind === 'Wait') {
            const ref = resolveWaitRef(taskName, task.spec, vars);
            if ('error' in ref) {
              problems.push({ kind: 'render', task: taskName, message: ref.error });
              continue;
            }
            planned.waitFor = ref.ref;
          } else {
            const rendered = renderResources(templates, task.spec?.resources ?? [], vars);
            if (!rendered.ok) {
              const { template, message, parameter } = rendered.error;
              problems.push({ kind: 'render', task: taskName, template, message, ...(parameter ? { parameter } : {}) });
              continue;
            }
            planned.objects = rendered.value;
            for (const { template, object } of rendered.value) {
              for (const p of objectProblems(object)) {
                problems.push({ kind: 'object', task: taskName, template, object: describe(object), field: p.field, message: p.message });
              }
              const escape = input.tenancy ? escapeProblem(object, instance.namespace, input.tenancy) : undefined;
              if (escape) problems.push({ kind: 'object', task: taskName, template, object: describe(object), ...escape });
            }
          }
          tasks.push(planned);
        }
      }
    }
  }
  return { tasks, problems };
}

/** One line per problem, for a refusal's "why". */
export function describeProblem(p: PreflightProblem): string {
  if (p.kind === 'render') return `task ${p.task}: ${p.message}`;
  return `task ${p.task}, template ${p.template}: ${p.object}: ${p.field} ${p.message}`;
}
