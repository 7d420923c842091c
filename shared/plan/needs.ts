// What a blueprint's plans need: for every task of the plans considered, the API requests
// its executor makes as the plans' ServiceAccount (controller/executors/*.ts), as RBAC
// access rules. `kubectl planwarden rbac` turns them into a least-privilege Role; the
// webhook's apply-time RBAC preflight checks the same rules, so both agree by construction.
// Pure: discovery (kind → resource) is a function passed in.
import { GROUP, type OperatorVersionSpec, type Parameter, type TaskKind } from '../api/schema.ts';
import type { RenderVars } from '../template/render.ts';
import { preflightPlan, type PlannedTask } from './preflight.ts';

/** A kind as the API server serves it (discovery). */
export interface KindInfo {
  /** The API group; "" for the core group. */
  group: string;
  /** The plural resource, e.g. "deployments". */
  resource: string;
  namespaced: boolean;
}

/** Discovery's answer for a kind, or undefined when the API server does not serve it. */
export type KindResolver = (apiVersion: string, kind: string) => KindInfo | undefined;

/** One request a plan makes, as RBAC sees it. */
export interface AccessRule {
  verb: string;
  /** "" for the core group. */
  apiGroup: string;
  /** The resource, with "/subresource" when one is addressed. */
  resource: string;
  /** Absent for cluster-scoped kinds. */
  namespace?: string;
  /** The object's name as rendered (with placeholder values it names no real object). */
  resourceName?: string;
}

/** Why a step needs its rules: a task of that kind (Dummy makes no request), or the health checks between plans. */
export type NeedKind = Exclude<TaskKind, 'Dummy'> | 'health';

export interface TaskNeeds {
  plan: string;
  phase: string;
  step: string;
  task: string;
  kind: NeedKind;
  rules: AccessRule[];
}

/** A rendered object whose kind the API server does not serve: nothing is granted for it. */
export interface UnknownKind {
  plan: string;
  step: string;
  task: string;
  apiVersion: string;
  kind: string;
  /** The template it came from (absent for a Wait task's object). */
  template?: string;
}

/** A task whose objects could not be read (its template does not render, a plan or task is missing). */
export interface NeedsProblem {
  plan: string;
  step?: string;
  task?: string;
  message: string;
}

export interface PlanNeeds {
  /** Per plan, phase, step and task, in the plans' order; tasks that make no request (Dummy) are left out. */
  tasks: TaskNeeds[];
  unknownKinds: UnknownKind[];
  problems: NeedsProblem[];
}

export interface PlanNeedsInput {
  spec: Pick<OperatorVersionSpec, 'plans' | 'tasks' | 'templates' | 'version'>;
  /** The plans considered; every plan of spec.plans when absent. */
  plans?: readonly string[];
  /**
   * Template values: an Instance's (apply-time preflight) or placeholderVars (the CLI).
   * Fan-out steps render once per static node where a template uses .Target, else with the preflight's TARGET_PLACEHOLDER (or vars.target when set).
   */
  vars: RenderVars;
  resolveKind: KindResolver;
}

/** The verbs of each request kind, as the executors make them. */
export const VERBS: Readonly<Record<NeedKind, readonly string[]>> = {
  // Server-side apply is a PATCH; it creates the object when it does not exist yet.
  Apply: ['patch', 'create'],
  // A read first (an object already on its way out is not deleted again), then DELETE.
  Delete: ['get', 'delete'],
  Wait: ['get'],
  // Both sides, whatever the parameter says now: a change of it runs the plan again (Apply's and Delete's verbs).
  Toggle: ['patch', 'create', 'get', 'delete'],
  // The Pipe Pod: applied, read until it ends, deleted once its files are stored (or it failed).
  Pipe: ['patch', 'create', 'get', 'delete'],
  // Between plans the controller re-reads what the Apply tasks applied (applied.ts): one GET each.
  health: ['get'],
};

/** The ConfigMaps/Secrets a Pipe task stores its files in: applied, and read to see whether this run filled them. */
export const PIPE_CAPTURE_VERBS: readonly string[] = ['patch', 'create', 'get'];

/** Objects a plan applies in its Instance's namespace are owned by the Instance with blockOwnerDeletion. */
export const OWNER_FINALIZERS_RESOURCE = 'instances/finalizers';

export const PLACEHOLDER_NAME = 'placeholder-instance';
const PLACEHOLDER_VALUE = 'placeholder';

/**
 * Template values that render every template without an Instance: each parameter's default,
 * else a placeholder of its type (only the rendered kinds are read from what comes out).
 */
export function placeholderVars(
  spec: Pick<OperatorVersionSpec, 'parameters' | 'version'>,
  namespace: string,
  name = PLACEHOLDER_NAME,
): RenderVars {
  const params = Object.fromEntries((spec.parameters ?? []).map((p) => [p.name, p.default ?? placeholderOf(p)]));
  return { params, name, namespace, operatorVersion: spec.version };
}

function placeholderOf(p: Parameter): string {
  if (p.secret === true) return `<secret: ${p.name}>`;
  if (p.enum?.length) return p.enum[0]!;
  switch (p.type) {
    case 'integer':
    case 'number':
      return String(p.minimum ?? 1);
    case 'boolean':
      return 'false';
    case 'array':
      return '[]';
    case 'map':
      return '{}';
    default:
      return PLACEHOLDER_VALUE;
  }
}

/** The access rules of the plans' tasks (see PlanNeeds), rendered by the preflight's one walk over a plan. */
export function planNeeds(input: PlanNeedsInput): PlanNeeds {
  const { spec, vars } = input;
  const out: PlanNeeds = { tasks: [], unknownKinds: [], problems: [] };
  // Sorted: the API server returns spec.plans with its keys sorted, whatever order was applied.
  const planNames = input.plans ?? Object.keys(spec.plans ?? {}).sort();
  for (const plan of planNames) {
    if (!spec.plans?.[plan]?.phases) {
      out.problems.push({
        plan,
        message: `plan ${plan} is not in the OperatorVersion (plans: ${Object.keys(spec.plans ?? {}).join(', ') || 'none'})`,
      });
      continue;
    }
    const rendered = preflightPlan({
      ov: spec,
      plan,
      values: vars.params,
      instance: { name: vars.name, namespace: vars.namespace },
      ...(vars.paramTypes ? { paramTypes: vars.paramTypes } : {}),
      ...(vars.target === undefined ? {} : { target: vars.target }),
    });
    // Only what keeps a task from being read counts here; invalid names are the preflight's to refuse.
    for (const p of rendered.problems) if (p.kind === 'render') out.problems.push({ plan, task: p.task, message: p.message });
    const needs = tasksNeeds(plan, rendered.tasks, vars, input.resolveKind);
    out.tasks.push(...needs.tasks);
    out.unknownKinds.push(...needs.unknownKinds);
  }
  return out;
}

/**
 * The access rules of tasks already rendered (shared/plan/preflight.ts): what `kubectl
 * planwarden rbac` grants and what the webhook's preflight asks a SubjectAccessReview for.
 * A task several targets render for counts once, its rules merged.
 */
export function tasksNeeds(
  plan: string,
  tasks: readonly PlannedTask[],
  home: Pick<RenderVars, 'name' | 'namespace'>,
  resolveKind: KindResolver,
): Pick<PlanNeeds, 'tasks' | 'unknownKinds'> {
  const byTask = new Map<string, { apply: TaskNeeds; health?: TaskNeeds }>();
  const unknownKinds: UnknownKind[] = [];
  for (const t of tasks) {
    const where = { plan, phase: t.phase, step: t.step, task: t.task };
    const key = JSON.stringify([t.phase, t.step, t.task]);
    const entry = byTask.get(key) ?? { apply: { ...where, kind: t.kind as NeedKind, rules: [] } };
    byTask.set(key, entry);
    const verbs = VERBS[t.kind as NeedKind];
    const objects: Addressed[] = t.waitFor
      ? [
          {
            apiVersion: t.waitFor.apiVersion,
            kind: t.waitFor.kind,
            name: t.waitFor.name,
            ...(t.waitFor.namespace ? { namespace: t.waitFor.namespace } : {}),
            verbs,
          },
        ]
      : [
          ...t.objects.map(({ template, object }) => ({
            apiVersion: object.apiVersion,
            kind: object.kind,
            name: object.metadata.name ?? '',
            ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
            template,
            verbs,
          })),
          ...(t.captures ?? []).map((c) => ({
            apiVersion: c.apiVersion,
            kind: c.kind,
            name: c.name,
            ...(c.namespace ? { namespace: c.namespace } : {}),
            verbs: PIPE_CAPTURE_VERBS,
          })),
        ];
    for (const object of objects) {
      const info = resolveKind(object.apiVersion, object.kind);
      if (!info) {
        unknownKinds.push({
          plan,
          step: t.step,
          task: t.task,
          apiVersion: object.apiVersion,
          kind: object.kind,
          ...(object.template ? { template: object.template } : {}),
        });
        continue;
      }
      const namespace = info.namespaced ? object.namespace || home.namespace : undefined;
      const base = {
        apiGroup: info.group,
        resource: info.resource,
        ...(namespace === undefined ? {} : { namespace }),
        ...(object.name ? { resourceName: object.name } : {}),
      };
      for (const verb of object.verbs) entry.apply.rules.push({ verb, ...base });
      // What a task applies in the Instance's namespace is owned by the Instance.
      if (t.kind !== 'Apply' && t.kind !== 'Toggle' && t.kind !== 'Pipe') continue;
      if (namespace !== undefined && namespace === home.namespace) {
        entry.apply.rules.push({
          verb: 'update',
          apiGroup: GROUP,
          resource: OWNER_FINALIZERS_RESOURCE,
          namespace,
          resourceName: home.name,
        });
      }
      if (t.kind !== 'Apply') continue;
      // applied.ts judges the Apply tasks of steps without targets only.
      if (!t.fannedOut) {
        entry.health ??= { ...where, kind: 'health', rules: [] };
        for (const verb of VERBS.health) entry.health.rules.push({ verb, ...base });
      }
    }
  }
  const out: TaskNeeds[] = [];
  for (const { apply, health } of byTask.values()) {
    out.push({ ...apply, rules: dedupe(apply.rules) });
    if (health?.rules.length) out.push({ ...health, rules: dedupe(health.rules) });
  }
  return { tasks: out, unknownKinds };
}

interface Addressed {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  template?: string;
  verbs: readonly string[];
}

const ruleKey = (r: AccessRule) => JSON.stringify([r.verb, r.apiGroup, r.resource, r.namespace ?? null, r.resourceName ?? null]);

function dedupe(rules: readonly AccessRule[]): AccessRule[] {
  return [...new Map(rules.map((r) => [ruleKey(r), r])).values()];
}

/** Every rule of `needs`, once. */
export function allRules(needs: Pick<PlanNeeds, 'tasks'>): AccessRule[] {
  return dedupe(needs.tasks.flatMap((t) => t.rules));
}

/** Where a rule acts, seen from the Instance's namespace `home`. */
export type RuleScope = 'namespace' | 'crossNamespace' | 'cluster';

export function scopeOf(rule: Pick<AccessRule, 'namespace'>, home: string): RuleScope {
  if (rule.namespace === undefined) return 'cluster';
  return rule.namespace === home ? 'namespace' : 'crossNamespace';
}

/** An RBAC PolicyRule (rbac.authorization.k8s.io/v1). */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const VERB_ORDER = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const verbRank = (v: string) => (VERB_ORDER.includes(v) ? VERB_ORDER.indexOf(v) : VERB_ORDER.length);

/**
 * `rules` merged into PolicyRules, without resource names (a Role serves every Instance of
 * its namespace, whose objects' names differ): one rule per API group and set of verbs,
 * sorted, so the same needs always print the same Role.
 */
export function mergeRules(rules: readonly AccessRule[]): PolicyRule[] {
  const verbsOf = new Map<string, Set<string>>();
  for (const r of rules) {
    const key = JSON.stringify([r.apiGroup, r.resource]);
    const verbs = verbsOf.get(key) ?? new Set<string>();
    verbs.add(r.verb);
    verbsOf.set(key, verbs);
  }
  const byGroupAndVerbs = new Map<string, PolicyRule>();
  for (const [key, verbSet] of verbsOf) {
    const [group, resource] = JSON.parse(key) as [string, string];
    const verbs = [...verbSet].sort((a, b) => verbRank(a) - verbRank(b) || a.localeCompare(b));
    const merged = JSON.stringify([group, verbs]);
    const rule = byGroupAndVerbs.get(merged) ?? { apiGroups: [group], resources: [], verbs };
    rule.resources.push(resource);
    byGroupAndVerbs.set(merged, rule);
  }
  const out = [...byGroupAndVerbs.values()];
  for (const r of out) r.resources.sort();
  return out.sort(
    (a, b) =>
      a.apiGroups[0]!.localeCompare(b.apiGroups[0]!) ||
      a.resources[0]!.localeCompare(b.resources[0]!) ||
      a.verbs.join().localeCompare(b.verbs.join()),
  );
}

/** The command that prints the ServiceAccount, Role and RoleBinding a blueprint's plans need (docs/cli.md). */
export function rbacCommand(operatorVersion: string, namespace: string, serviceAccount: string): string {
  return `kubectl planwarden rbac --operator-version ${operatorVersion} -n ${namespace} --service-account ${serviceAccount}`;
}
