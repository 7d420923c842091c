// Templates are evaluated when their OperatorVersion is applied, not when an Instance first
// uses them: every template is analysed without values (names, functions, argument counts,
// syntax) and rendered with the defaults for each plan step that uses it, with the variables
// that step gives (.PlanName, .PhaseName, .StepName, .OperatorName, .AppVersion, a placeholder
// Instance name, the namespace the blueprint is applied in …). Tenancy is judged on what the
// templates render, through the one parser, in every branch the renderer explores.
//
// Choices where the issue is silent:
// - a template that reads a parameter without a default is analysed, not rendered, for the
//   plans that would need that value: its render error (the parameter is not set) is not a
//   finding, and the Instance's preflight renders it with the Instance's values. Tenancy does
//   render it, with a typed placeholder (shared/plan/needs.ts placeholderVars), since only
//   where the objects land is read from that render;
// - a template no task uses is analysed and judged for tenancy, not rendered per plan;
// - the same problem found for several plans is reported once, naming the first plan step.
import type { OperatorVersionSpec, ParameterType, Task } from '../api/schema.ts';
import {
  analyzeTemplate,
  checkTemplateStructure,
  exploreTemplate,
  parameterTypesOf,
  renderManifests,
  renderTemplate,
  type DeclaredNames,
  type ExploredPath,
  type RenderError,
  type RenderResult,
  type RenderVars,
  type StructureProblem,
} from '../template/render.ts';
import { placeholderVars } from '../plan/needs.ts';
import { TARGET_PLACEHOLDER, RUN_ID_PLACEHOLDER } from '../plan/preflight.ts';
import type { RenderIdentity } from './identity.ts';
import { CLUSTER_SCOPED_KINDS } from './kinds.ts';
import type { RuleId } from '../ruleIds.ts';

/** The variables a render may see (today's RenderVars and the new renderer's additions). */
export type TemplateVars = RenderVars;

type Objects = Extract<ReturnType<typeof renderManifests>, { ok: true }>['value'];
type RenderedObject = Objects[number];

/** The Instance name templates are rendered with at OperatorVersion admission. */
export const INSTANCE_PLACEHOLDER = 'instance';
/** .Pipes.X at admission: the object a Pipe task will name (KUDO's semantics), before it exists. */
export const pipePlaceholder = (key: string) => `${INSTANCE_PLACEHOLDER}-pipe-${key.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`;

/** How many branch combinations of one template tenancy explores before it stops (and says so). */
export const MAX_PATHS = 64;

// --- the renderer's analysis and exploration ---

/** The declares-no-parameter problem: left to the ov.undeclared-parameter warning (an Instance may still set it). */
const UNDECLARED_PARAMETER = /^template [^:]*: \.Params\.[A-Za-z_][A-Za-z0-9_]*: the OperatorVersion declares no parameter /;

/** Every problem found in a template without values: syntax, unknown fields and functions, arity, undefined templates. */
export function analyzeSource(name: string, source: string, declared: DeclaredNames): RenderError[] {
  return analyzeTemplate(name, source, declared).filter((e) => !UNDECLARED_PARAMETER.test(e.message));
}

/** One render per combination of if/with decisions, each naming its conditions. */
export function exploreSource(
  name: string,
  source: string,
  vars: TemplateVars,
  maxPaths: number,
): { paths: ExploredPath[]; truncated: boolean } {
  return exploreTemplate(name, source, vars, { maxPaths });
}

// --- rule ids ---

/** The renderer's problem codes (RenderError.code) as OperatorVersion admission rule ids: one table. */
export const TEMPLATE_RULES: readonly { code: string; rule: RuleId }[] = [
  { code: 'template.syntax', rule: 'ov.template-syntax' },
  { code: 'template.unknown-field', rule: 'ov.template-unknown-field' },
  { code: 'template.unknown-function', rule: 'ov.template-unknown-function' },
  { code: 'template.arity', rule: 'ov.template-arity' },
  { code: 'template.undefined-template', rule: 'ov.template-undefined' },
  { code: 'template.range-non-list', rule: 'ov.template-range-non-list' },
  { code: 'template.too-large', rule: 'ov.template-too-large' },
];

/** Any other render failure with the defaults (a value of the wrong type, an object without a name, text YAML cannot read …). */
export const RENDER_DEFAULT = { rule: 'ov.template-render-default' } as const;

/** The admission rule id of a render problem. */
export function ruleOfRenderError(error: RenderError): RuleId {
  return TEMPLATE_RULES.find((r) => r.code === error.code)?.rule ?? RENDER_DEFAULT.rule;
}

// --- findings (the shape review.ts reports) ---

export interface TemplateFinding {
  severity: 'error' | 'warning';
  rule: RuleId;
  path: string;
  problem: string;
  fix?: string;
}

/** `.name` for plain names, `["a.yaml"]` for anything else. */
export function key(name: string): string {
  return /^[A-Za-z0-9_-]+$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}

const byName = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

/** Never a thrown exception out of a renderer: a template that makes one throw is refused by name. */
function guarded<T>(name: string, work: () => RenderResult<T>): RenderResult<T> {
  try {
    return work();
  } catch (err) {
    const what = err instanceof Error ? err.message.split('\n')[0]! : String(err);
    return { ok: false, error: { template: name, message: `template ${name}: cannot be read (${what})` } };
  }
}

function fixOf(rule: RuleId): string {
  switch (rule) {
    case 'ov.template-unknown-field':
      return 'use the variables of docs/api.md ("Templates") — .Params.X of a declared parameter, .Name, .Namespace, .OperatorName …';
    case 'ov.template-unknown-function':
      return 'use a function docs/api.md lists, or write the value in the template';
    case 'ov.template-arity':
      return 'give the function the number of arguments docs/api.md lists';
    case 'ov.template-syntax':
      return 'fix the action at that line (close every {{ with }}, every if/range/with with {{ end }})';
    default:
      return "make the template render with the parameters' defaults, or give the parameter it needs a default";
  }
}

function renderFinding(error: RenderError, where: string): TemplateFinding {
  const rule = ruleOfRenderError(error);
  return { severity: 'error', rule, path: `spec.templates${key(error.template)}`, problem: `${error.message}${where}`, fix: fixOf(rule) };
}

// --- analysis and the render with the defaults, per plan step ---

/** The parameters' defaults (parameters without one are left unset), as an Instance with no values gets. */
export function defaultValues(spec: Pick<OperatorVersionSpec, 'parameters'>): Record<string, string> {
  return Object.fromEntries((spec.parameters ?? []).flatMap((p) => (p.default === undefined ? [] : [[p.name, p.default]])));
}

export interface TemplateContext {
  /** The namespace the blueprint is applied in: .Namespace. */
  namespace: string;
  identity: RenderIdentity;
}

export type StructureCheck = (source: string) => StructureProblem | undefined;

/** checkTemplateStructure, once per template text for one review (it renders every branch: not cheap on large templates). */
export function structureMemo(): StructureCheck {
  const seen = new Map<string, StructureProblem | undefined>();
  return (source) => {
    if (seen.has(source)) return seen.get(source);
    let found: StructureProblem | undefined;
    try {
      found = checkTemplateStructure(source);
    } catch (err) {
      found = {
        kind: 'syntax',
        line: 1,
        problem: `cannot be read (${err instanceof Error ? err.message.split('\n')[0]! : String(err)})`,
        fix: 'simplify the template',
      };
    }
    seen.set(source, found);
    return found;
  };
}

/** Templates that are not YAML with their actions read as values: review.ts reports those (checkTemplateValues). */
function structurallyBroken(spec: OperatorVersionSpec, structure: StructureCheck): Set<string> {
  return new Set(Object.entries(spec.templates ?? {}).flatMap(([name, text]) => (structure(text) ? [name] : [])));
}

/** Every template analysed without values. */
export function checkTemplatesAnalyzed(spec: OperatorVersionSpec, structure: StructureCheck = structureMemo()): TemplateFinding[] {
  const broken = structurallyBroken(spec, structure);
  const pipes = [
    ...new Set(
      taskUses(spec)
        .flatMap((u) => Object.keys(u.pipes))
        .concat(pipeKeys(spec)),
    ),
  ];
  const declared = { params: (spec.parameters ?? []).map((p) => p.name), paramTypes: parameterTypesOf(spec.parameters), pipes };
  return Object.entries(spec.templates ?? {})
    .sort(byName)
    .filter(([name]) => !broken.has(name))
    .flatMap(([name, text]) => analyzeSource(name, text, declared).map((e) => renderFinding(e, '')));
}

/** The keys a Pipe task (KUDO) declares: later templates read each as .Pipes.<key>. */
function pipesOf(task: Task): string[] {
  if ((task.kind as string) !== 'Pipe') return [];
  const declared = (task.spec as { pipe?: { key?: unknown }[] } | undefined)?.pipe ?? [];
  return declared.flatMap(({ key: k }) => (typeof k === 'string' ? [k] : []));
}

/** Every pipe key any Pipe task declares. */
function pipeKeys(spec: OperatorVersionSpec): string[] {
  return (spec.tasks ?? []).flatMap(pipesOf);
}

interface StepUse {
  plan: string;
  phase: string;
  step: string;
  target?: string;
  pipes: Record<string, string>;
  task: Task;
}

/** Each use of a task by a plan step, in plan order, with the pipes earlier Pipe tasks of that plan declared. */
function taskUses(spec: OperatorVersionSpec): StepUse[] {
  const tasks = new Map((spec.tasks ?? []).map((t) => [t.name, t]));
  return Object.entries(spec.plans ?? {})
    .sort(byName)
    .flatMap(([plan, p]) => {
      const pipes: Record<string, string> = {};
      return (p.phases ?? []).flatMap((phase) =>
        (phase.steps ?? []).flatMap((step) =>
          (step.tasks ?? []).flatMap((name): StepUse[] => {
            const task = tasks.get(name);
            if (!task) return [];
            const target = step.targets ? (step.targets.discovery?.static?.nodes?.[0] ?? TARGET_PLACEHOLDER) : undefined;
            const use: StepUse = {
              plan,
              phase: phase.name,
              step: step.name,
              pipes: { ...pipes },
              task,
              ...(target === undefined ? {} : { target }),
            };
            for (const k of pipesOf(task)) pipes[k] = pipePlaceholder(k);
            return [use];
          }),
        ),
      );
    });
}

/** The variables of one plan step at admission. */
export function admissionVars(spec: OperatorVersionSpec, ctx: TemplateContext, use: Omit<StepUse, 'task'>): TemplateVars {
  return {
    ...ctx.identity,
    planName: use.plan,
    phaseName: use.phase,
    stepName: use.step,
    runId: RUN_ID_PLACEHOLDER,
    pipes: use.pipes,
    params: defaultValues(spec),
    paramTypes: parameterTypesOf(spec.parameters),
    name: INSTANCE_PLACEHOLDER,
    namespace: ctx.namespace,
    operatorVersion: spec.version,
    ...(use.target === undefined ? {} : { target: use.target }),
  };
}

/** A render that failed only because a parameter without a default is not set: not a finding (see the header). */
function unsetOnly(error: RenderError): boolean {
  return error.parameter !== undefined || error.code === 'template.parameter-unset';
}

/** Every template an Apply or Delete task uses, and every Wait task's object, rendered with the defaults for each plan step that uses it. */
export function checkTemplatesRender(
  spec: OperatorVersionSpec,
  ctx: TemplateContext,
  structure: StructureCheck = structureMemo(),
): TemplateFinding[] {
  const broken = structurallyBroken(spec, structure);
  const templates = spec.templates ?? {};
  const out: TemplateFinding[] = [];
  const seen = new Set<string>();
  const report = (f: TemplateFinding) => {
    const id = `${f.rule}\u0000${f.path}\u0000${f.problem.replace(/ — rendered .*$/, '')}`;
    if (seen.has(id)) return;
    seen.add(id);
    out.push(f);
  };
  const rendered = new Set<string>();
  for (const use of taskUses(spec)) {
    const vars = admissionVars(spec, ctx, use);
    const where = ` — rendered with the defaults for plan "${use.plan}", phase "${use.phase}", step "${use.step}"${use.target === undefined ? '' : `, target "${use.target}"`}`;
    const kind = use.task.kind as string;
    if (kind === 'Wait') {
      const object = use.task.spec?.object;
      for (const field of ['apiVersion', 'kind', 'name', 'namespace'] as const) {
        const source = object?.[field];
        if (source === undefined) continue;
        const name = `wait task ${use.task.name} spec.object.${field}`;
        const result = guarded(name, () => renderTemplate(name, source, vars));
        if (!result.ok && !unsetOnly(result.error)) {
          const rule = ruleOfRenderError(result.error);
          report({
            severity: 'error',
            rule,
            path: `spec.tasks[${(spec.tasks ?? []).indexOf(use.task)}].spec.object.${field}`,
            problem: `${result.error.message}${where}`,
            fix: fixOf(rule),
          });
        }
      }
      continue;
    }
    for (const name of use.task.spec?.resources ?? []) {
      const source = templates[name];
      if (source === undefined || broken.has(name)) continue;
      const once = `${name}\u0000${JSON.stringify([use.plan, use.phase, use.step, use.target, use.pipes])}`;
      if (rendered.has(once)) continue;
      rendered.add(once);
      const result = guarded(name, () => renderManifests(name, source, vars));
      if (!result.ok && !unsetOnly(result.error)) report(renderFinding(result.error, where));
    }
  }
  return out;
}

// --- tenancy: where the rendered objects land ---

export { CLUSTER_SCOPED_KINDS };

/** .Namespace in the probe render: a namespace that follows it came from {{ .Namespace }}. */
export const PROBE_NAMESPACE = 'planwarden-probe-namespace';
const PROBE_NAME = 'planwarden-probe-instance';

export type NamespaceUse = 'home' | 'templated' | 'other';

/**
 * Where a namespace comes from, from three renders: `home` with .Namespace, `probe` with
 * another .Namespace (and Instance name), `perturbed` with every string parameter changed.
 * It is the Instance's when it is .Namespace in both (or the Instance's own, written as
 * text); computed when it changes with the parameters or follows .Namespace only in part;
 * another namespace when it is the same text whatever the values.
 */
export function namespaceUse(
  home: string | undefined,
  probe: string | undefined,
  perturbed: string | undefined,
  namespace: string,
): NamespaceUse | undefined {
  if (home === undefined) return undefined;
  if (home === namespace && probe === PROBE_NAMESPACE) return 'home';
  if ((probe !== undefined && probe !== home) || (perturbed !== undefined && perturbed !== home)) return 'templated';
  return home === namespace ? 'home' : 'other';
}

export interface TenancyAllowed {
  crossNamespace: boolean;
  clusterScoped: boolean;
}

/** One way an object leaves the Instance's namespace. */
export interface Escape {
  rule: 'ov.cluster-scoped-kind' | 'ov.templated-namespace' | 'ov.other-namespace';
  path: string;
  what: string;
  namespace?: string;
}

/** How an object rendered at `path` leaves the namespace, if it does. */
export function escapeOf(
  at: { path: string; namespacePath: string; what: string },
  kind: string | undefined,
  use: NamespaceUse | undefined,
  ns: string | undefined,
  allowed: TenancyAllowed,
): Escape | undefined {
  const { path, namespacePath, what } = at;
  if (kind !== undefined && CLUSTER_SCOPED_KINDS.has(kind))
    return allowed.clusterScoped ? undefined : { rule: 'ov.cluster-scoped-kind', path, what };
  if (use === undefined || use === 'home' || allowed.crossNamespace) return undefined;
  return use === 'templated'
    ? { rule: 'ov.templated-namespace', path: namespacePath, what }
    : { rule: 'ov.other-namespace', path: namespacePath, what, ...(ns === undefined ? {} : { namespace: ns }) };
}

function namespaceOf(o: RenderedObject | undefined): string | undefined {
  const ns = o?.metadata?.namespace as unknown;
  return ns === undefined || ns === null ? undefined : typeof ns === 'string' ? ns : JSON.stringify(ns);
}

/** Every string (or untyped) parameter's value changed: a namespace that moves with it is computed from it. */
function perturbed(params: Readonly<Record<string, string>>, types: Readonly<Record<string, ParameterType>>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, types[k] === undefined || types[k] === 'string' ? `${v}-x` : v]));
}

/** The three variable sets tenancy renders with (see namespaceUse). */
function tenancyVars(spec: OperatorVersionSpec, ctx: TemplateContext): { home: TemplateVars; probe: TemplateVars; moved: TemplateVars } {
  const base = admissionVars(spec, ctx, { plan: 'deploy', phase: 'main', step: 'main', target: TARGET_PLACEHOLDER, pipes: {} });
  // Parameters without a default render with a typed placeholder here: only where objects land is read.
  const home: TemplateVars = { ...base, params: placeholderVars(spec, ctx.namespace, INSTANCE_PLACEHOLDER).params };
  const probe: TemplateVars = { ...home, namespace: PROBE_NAMESPACE, name: PROBE_NAME };
  const moved: TemplateVars = { ...home, params: perturbed(home.params, home.paramTypes ?? {}) };
  return { home, probe, moved };
}

/** The escapes of one template in one explored path (its objects from the three renders). */
function escapesOf(
  name: string,
  home: Objects,
  probe: Objects | undefined,
  moved: Objects | undefined,
  namespace: string,
  allowed: TenancyAllowed,
): Escape[] {
  const base = `spec.templates${key(name)}`;
  return home.flatMap((o, i) => {
    const path = home.length > 1 ? `${base} (document ${i + 1})` : base;
    // A name that changes with the Instance's is computed: shown only when it is text.
    const shownName = probe?.[i]?.metadata?.name === o.metadata?.name && typeof o.metadata?.name === 'string' ? ` ${o.metadata.name}` : '';
    const what = `${o.kind ?? 'object'}${shownName}`;
    const ns = namespaceOf(o);
    const use = namespaceUse(ns, probe ? namespaceOf(probe[i]) : undefined, moved ? namespaceOf(moved[i]) : undefined, namespace);
    const e = escapeOf(
      { path, namespacePath: `${path}: metadata.namespace`, what },
      typeof o.kind === 'string' ? o.kind : undefined,
      use,
      ns,
      allowed,
    );
    return e ? [e] : [];
  });
}

/** A template's escapes: each with the conditions of the paths it occurs in, and whether that is every path. */
export interface TemplateEscape extends Escape {
  everyPath: boolean;
  /** The conditions of the first path it occurs in (empty: no branch decides it). */
  conditions: string[];
}

/** Judges every template in every path the renderer explores. */
export function templateEscapes(spec: OperatorVersionSpec, ctx: TemplateContext, allowed: TenancyAllowed): TemplateEscape[] {
  const vars = tenancyVars(spec, ctx);
  return Object.entries(spec.templates ?? {})
    .sort(byName)
    .flatMap(([name, source]): TemplateEscape[] => {
      const explore = (v: TemplateVars) => {
        try {
          return exploreSource(name, source, v, MAX_PATHS);
        } catch {
          return { paths: [], truncated: false };
        }
      };
      const home = explore(vars.home).paths.filter((p) => p.result.ok);
      if (home.length === 0) return [];
      const index = (paths: ExploredPath[]) =>
        new Map(paths.flatMap((p) => (p.result.ok ? [[p.conditions.join('\n'), p.result.value] as const] : [])));
      const probe = index(explore(vars.probe).paths);
      const moved = index(explore(vars.moved).paths);
      const found = new Map<string, { escape: Escape; paths: string[][] }>();
      for (const path of home) {
        if (!path.result.ok) continue;
        const id = path.conditions.join('\n');
        for (const e of escapesOf(name, path.result.value, probe.get(id), moved.get(id), ctx.namespace, allowed)) {
          const k = `${e.rule}\u0000${e.path}\u0000${e.what}`;
          const entry = found.get(k) ?? { escape: e, paths: [] };
          entry.paths.push(path.conditions);
          found.set(k, entry);
        }
      }
      return [...found.values()].map(({ escape, paths }) => ({
        ...escape,
        everyPath: paths.length === home.length,
        conditions: paths[0] ?? [],
      }));
    });
}

/** A Wait task's object namespace, judged as a template's (see namespaceUse). */
export function waitEscapes(spec: OperatorVersionSpec, ctx: TemplateContext, allowed: TenancyAllowed): Escape[] {
  const vars = tenancyVars(spec, ctx);
  return (spec.tasks ?? []).flatMap((task, t): Escape[] => {
    const object = task.kind === 'Wait' ? task.spec?.object : undefined;
    if (!object) return [];
    const path = `spec.tasks[${t}].spec.object`;
    const what = `${object.kind} ${object.name} (Wait task "${task.name}")`;
    const source = object.namespace;
    const render = (v: TemplateVars) => {
      if (source === undefined) return undefined;
      const r = guarded(path, () => renderTemplate(path, source, v));
      return r.ok ? r.value : undefined;
    };
    const ns = render(vars.home);
    const use =
      source === undefined
        ? undefined
        : ns === undefined
          ? 'templated'
          : namespaceUse(ns, render(vars.probe), render(vars.moved), ctx.namespace);
    const e = escapeOf({ path, namespacePath: `${path}.namespace`, what }, object.kind, use, ns, allowed);
    return e ? [e] : [];
  });
}
