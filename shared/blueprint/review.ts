// The checks of an OperatorVersion's spec, pure: what the OperatorVersion webhook refuses
// and warns about, and what `kubectl planwarden package verify` reports offline — one
// function (reviewBlueprint) for both, so a package that verifies is one the webhook admits.
//
// Choices where SPEC is silent:
// - step names are unique within their phase, phase names within their plan (status is
//   index-aligned with the spec, names are what people read);
// - a parameter may not trigger `cleanup` (it runs only on deletion, never by a change);
// - spec.version must be semver 2.0;
// - a template that is not YAML once its actions are read as values, or whose actions sit
//   where only structure can be (checkTemplateStructure), is refused: it could never render;
// - tenancy: templates (and Wait objects) act in the Instance's namespace only — a literal
//   other namespace, a namespace computed from anything but {{ .Namespace }}, and the kinds
//   of CLUSTER_SCOPED_KINDS are refused unless the blueprint declares spec.crossNamespace /
//   spec.clusterScoped AND the webhook runs with --allow-cross-namespace /
//   --allow-cluster-scoped. The kind list is a known list, not discovery: the controller
//   re-checks every rendered object against discovery before acting, so a kind missing
//   here (a cluster-scoped CRD of some operator) still never gets applied.
import { declarationProblems, PARAMETER_RULES } from '../params/values.ts';
import { SECRET_PARAMETER_RULES } from '../params/secretRules.ts';
import { STRATEGIES, TASK_KINDS, type OperatorVersionSpec, type Task, type TaskKind, type TaskSpec } from '../api/schema.ts';
import { checkTemplateStructure } from '../template/render.ts';
import { pipeFileProblems } from '../plan/pipe.ts';
import { renderIdentity } from './identity.ts';
import {
  checkTemplatesAnalyzed,
  checkTemplatesRender,
  key,
  structureMemo,
  templateEscapes,
  waitEscapes,
  type Escape,
  type StructureCheck,
} from './templates.ts';
import type { RuleId } from '../ruleIds.ts';

export { CLUSTER_SCOPED_KINDS } from './templates.ts';

export interface TenancyAllowance {
  allowCrossNamespace: boolean;
  allowClusterScoped: boolean;
}

export const NO_ALLOWANCE: TenancyAllowance = { allowCrossNamespace: false, allowClusterScoped: false };

/** One problem found in a spec, pointing at the offending path. */
export interface Finding {
  severity: 'error' | 'warning';
  rule: RuleId;
  /** e.g. `spec.plans.deploy.phases[0].steps[1].tasks[0]`. */
  path: string;
  problem: string;
  /** What to do about it (errors only). */
  fix?: string;
}

export type SpecCheck = (spec: OperatorVersionSpec) => Finding[];

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/** Which TaskSpec fields each kind reads; the others are ignored by the executor. */
const TASK_FIELDS: Record<TaskKind, readonly (keyof TaskSpec)[]> = {
  Apply: ['resources', 'timeoutSeconds'],
  Delete: ['resources', 'timeoutSeconds'],
  Wait: ['object', 'condition', 'timeoutSeconds'],
  // KUDO writes `resources:` (empty) on its Dummy tasks: accepted, and ignored.
  Dummy: ['done', 'wantErr', 'fatal', 'durationSeconds', 'resources'],
  Toggle: ['parameter', 'resources', 'timeoutSeconds'],
  Pipe: ['pod', 'pipe', 'timeoutSeconds'],
};

// --- paths and wording ---

const planPath = (plan: string) => `spec.plans${key(plan)}`;
const phasePath = (plan: string, p: number) => `${planPath(plan)}.phases[${p}]`;
const stepPath = (plan: string, p: number, s: number) => `${phasePath(plan, p)}.steps[${s}]`;

function listed(names: readonly string[]): string {
  return names.length > 0 ? names.join(', ') : 'none';
}

function error(rule: RuleId, path: string, problem: string, fix: string): Finding {
  return { severity: 'error', rule, path, problem, fix };
}

function warning(rule: RuleId, path: string, problem: string): Finding {
  return { severity: 'warning', rule, path, problem };
}

interface StepAt {
  plan: string;
  phase: number;
  step: number;
  path: string;
  tasks: readonly string[];
}

function stepsOf(spec: OperatorVersionSpec): StepAt[] {
  return Object.entries(spec.plans ?? {}).flatMap(([plan, p]) =>
    (p.phases ?? []).flatMap((phase, pi) =>
      (phase.steps ?? []).map((step, si) => ({
        plan,
        phase: pi,
        step: si,
        path: stepPath(plan, pi, si),
        tasks: step.tasks ?? [],
      })),
    ),
  );
}

const tasksOf = (spec: OperatorVersionSpec): readonly Task[] => spec.tasks ?? [];
const taskNames = (spec: OperatorVersionSpec) => [...new Set(tasksOf(spec).map((t) => t.name))].sort();
const templateNames = (spec: OperatorVersionSpec) => Object.keys(spec.templates ?? {}).sort();
const planNamesOf = (spec: OperatorVersionSpec) => Object.keys(spec.plans ?? {}).sort();

// --- the checks ---

/** spec.version is a semantic version. */
export const checkVersion: SpecCheck = (spec) =>
  SEMVER.test(spec.version ?? '')
    ? []
    : [
        error(
          'ov.invalid-version',
          'spec.version',
          `${JSON.stringify(spec.version ?? '')} is not a semantic version`,
          'use MAJOR.MINOR.PATCH, e.g. "1.2.0"',
        ),
      ];

/** Every task a step names is defined under spec.tasks. */
export const checkTaskReferences: SpecCheck = (spec) => {
  const defined = taskNames(spec);
  return stepsOf(spec).flatMap((s) =>
    s.tasks.flatMap((task, i) =>
      defined.includes(task)
        ? []
        : [
            error(
              'ov.undefined-task',
              `${s.path}.tasks[${i}]`,
              `task "${task}" is not defined (tasks: ${listed(defined)})`,
              `define task "${task}" under spec.tasks or name an existing one`,
            ),
          ],
    ),
  );
};

/** Every template a task applies or deletes is defined under spec.templates. */
export const checkTemplateReferences: SpecCheck = (spec) => {
  const defined = templateNames(spec);
  const named = (task: Task, t: number): [string, string][] => [
    ...(task.spec?.resources ?? []).map((resource, r): [string, string] => [resource, `spec.tasks[${t}].spec.resources[${r}]`]),
    ...(task.kind === 'Pipe' && task.spec?.pod ? [[task.spec.pod, `spec.tasks[${t}].spec.pod`] as [string, string]] : []),
  ];
  return tasksOf(spec).flatMap((task, t) =>
    named(task, t).flatMap(([resource, path]) =>
      defined.includes(resource)
        ? []
        : [
            error(
              'ov.unknown-template',
              path,
              `template "${resource}" is not defined (templates: ${listed(defined)})`,
              `add "${resource}" under spec.templates or name an existing template`,
            ),
          ],
    ),
  );
};

/** A task's kind is known and its spec holds what that kind needs; other fields are flagged. */
export const checkTaskKinds: SpecCheck = (spec) =>
  tasksOf(spec).flatMap((task, t): Finding[] => {
    const path = `spec.tasks[${t}]`;
    if (!(TASK_KINDS as readonly string[]).includes(task.kind)) {
      return [
        error(
          'ov.unknown-task-kind',
          `${path}.kind`,
          `task "${task.name}" has kind ${JSON.stringify(task.kind)}`,
          `use one of: ${TASK_KINDS.join(', ')}`,
        ),
      ];
    }
    const ts = task.spec ?? {};
    const out: Finding[] = [];
    if (task.kind === 'Toggle') out.push(...toggleProblems(spec, task, path));
    if (task.kind === 'Pipe') out.push(...pipeSpecProblems(task, path));
    if ((task.kind === 'Apply' || task.kind === 'Delete' || task.kind === 'Toggle') && (ts.resources ?? []).length === 0) {
      out.push(
        error(
          'ov.task-spec',
          `${path}.spec.resources`,
          `${task.kind} task "${task.name}" names no template`,
          'list at least one template name under spec.resources',
        ),
      );
    }
    if (task.kind === 'Wait') {
      if (ts.object === undefined) {
        out.push(
          error(
            'ov.task-spec',
            `${path}.spec.object`,
            `Wait task "${task.name}" names no object`,
            'set spec.object {apiVersion, kind, name}',
          ),
        );
      }
      if (ts.condition === undefined) {
        out.push(
          error(
            'ov.task-spec',
            `${path}.spec.condition`,
            `Wait task "${task.name}" names no condition`,
            'set spec.condition {type, status}',
          ),
        );
      }
    }
    const allowed: readonly string[] = TASK_FIELDS[task.kind];
    for (const field of Object.keys(ts).sort()) {
      if (!allowed.includes(field)) {
        out.push(warning('ov.task-spec', `${path}.spec.${field}`, `is ignored by ${task.kind} tasks`));
      }
    }
    return out;
  });

/** A Toggle names a parameter that reads as a boolean: declared `type: boolean`, or untyped with default "true"/"false" (as KUDO packages write it). */
function toggleProblems(spec: OperatorVersionSpec, task: Task, path: string): Finding[] {
  const name = task.spec?.parameter;
  if (!name) {
    return [
      error(
        'ov.toggle-parameter',
        `${path}.spec.parameter`,
        `Toggle task "${task.name}" names no parameter`,
        'set spec.parameter to a boolean parameter: true applies its resources, false deletes them',
      ),
    ];
  }
  const declared = (spec.parameters ?? []).find((p) => p.name === name);
  if (!declared) {
    return [
      error(
        'ov.toggle-parameter',
        `${path}.spec.parameter`,
        `Toggle task "${task.name}" reads parameter "${name}", which is not declared (parameters: ${listed((spec.parameters ?? []).map((p) => p.name))})`,
        `declare "${name}" under spec.parameters with type: boolean`,
      ),
    ];
  }
  if (declared.type === 'boolean' || (declared.type === undefined && (declared.default === 'true' || declared.default === 'false')))
    return [];
  return [
    error(
      'ov.toggle-parameter',
      `${path}.spec.parameter`,
      `Toggle task "${task.name}" reads parameter "${name}", which is ${declared.type ? `of type ${declared.type}` : `untyped with ${declared.default === undefined ? 'no default' : `default ${JSON.stringify(declared.default)}`}`}, not a boolean`,
      `declare "${name}" with type: boolean (or, untyped, with default "true" or "false")`,
    ),
  ];
}

/** A Pipe names its Pod template and captures what the termination-message route can carry (pipeFileProblems). */
function pipeSpecProblems(task: Task, path: string): Finding[] {
  const out: Finding[] = [];
  if (!task.spec?.pod) {
    out.push(
      error(
        'ov.pipe-spec',
        `${path}.spec.pod`,
        `Pipe task "${task.name}" names no Pod template`,
        'set spec.pod to the template of the Pod that writes the files',
      ),
    );
  }
  for (const p of pipeFileProblems(task.spec?.pipe ?? [])) {
    out.push(
      error(
        'ov.pipe-spec',
        `${path}.spec.pipe${p.index === undefined ? '' : `[${p.index}]`}`,
        `Pipe task "${task.name}": ${p.problem}`,
        p.fix,
      ),
    );
  }
  return out;
}

/** Pipe keys are one name space per blueprint: {{ .Pipes.KEY }} means one object whatever the plan. */
export const checkPipeKeys: SpecCheck = (spec) =>
  duplicates(
    'pipe key',
    tasksOf(spec).flatMap((task) => (task.kind === 'Pipe' ? (task.spec?.pipe ?? []).map((f) => f.key) : [])),
    (i) => {
      let n = i;
      for (const [t, task] of tasksOf(spec).entries()) {
        const files = task.kind === 'Pipe' ? (task.spec?.pipe ?? []) : [];
        if (n < files.length) return `spec.tasks[${t}].spec.pipe[${n}].key`;
        n -= files.length;
      }
      return 'spec.tasks';
    },
  );

/** Plan and phase strategies are serial or parallel (absent means serial). */
export const checkStrategies: SpecCheck = (spec) => {
  const bad = (path: string, strategy: string | undefined): Finding[] =>
    strategy === undefined || (STRATEGIES as readonly string[]).includes(strategy)
      ? []
      : [
          error(
            'ov.unknown-strategy',
            `${path}.strategy`,
            `${JSON.stringify(strategy)} is not a strategy`,
            `use ${STRATEGIES.join(' or ')} (absent means serial)`,
          ),
        ];
  return Object.entries(spec.plans ?? {}).flatMap(([plan, p]) => [
    ...bad(planPath(plan), p.strategy),
    ...(p.phases ?? []).flatMap((phase, i) => bad(phasePath(plan, i), phase.strategy)),
  ]);
};

/** A parameter trigger names an existing plan, and never cleanup. */
export const checkParameterTriggers: SpecCheck = (spec) => {
  const plans = planNamesOf(spec);
  return (spec.parameters ?? []).flatMap((parameter, i): Finding[] => {
    const trigger = parameter.trigger;
    const path = `spec.parameters[${i}].trigger`;
    if (trigger === undefined) return [];
    if (!plans.includes(trigger)) {
      return [
        error(
          'ov.unknown-trigger-plan',
          path,
          `parameter "${parameter.name}" triggers plan "${trigger}", which is not defined (plans: ${listed(plans)})`,
          'name an existing plan or omit trigger (update, else deploy, runs)',
        ),
      ];
    }
    if (trigger === 'cleanup') {
      return [
        error(
          'ov.trigger-cleanup',
          path,
          `parameter "${parameter.name}" triggers plan "cleanup", which runs only when the Instance is deleted`,
          'trigger another plan or omit trigger',
        ),
      ];
    }
    return [];
  });
};

/** Every blueprint has a deploy plan: it is what runs when an Instance is created. */
export const checkDeployPlan: SpecCheck = (spec) =>
  spec.plans?.deploy !== undefined
    ? []
    : [
        error(
          'ov.missing-deploy-plan',
          'spec.plans',
          `no "deploy" plan (plans: ${listed(planNamesOf(spec))})`,
          'add a deploy plan: it runs when an Instance is created',
        ),
      ];

function duplicates(kind: string, names: readonly string[], pathOf: (i: number) => string): Finding[] {
  const first = new Map<string, number>();
  return names.flatMap((name, i) => {
    const seen = first.get(name);
    if (seen === undefined) {
      first.set(name, i);
      return [];
    }
    return [
      error('ov.duplicate-name', pathOf(i), `${kind} "${name}" is also defined at ${pathOf(seen)}`, `give each ${kind} a distinct name`),
    ];
  });
}

/** Task, parameter, phase (per plan), step (per phase) and static target names are unique. */
export const checkDuplicateNames: SpecCheck = (spec) => [
  ...duplicates(
    'task',
    tasksOf(spec).map((t) => t.name),
    (i) => `spec.tasks[${i}].name`,
  ),
  ...duplicates(
    'parameter',
    (spec.parameters ?? []).map((p) => p.name),
    (i) => `spec.parameters[${i}].name`,
  ),
  ...Object.entries(spec.plans ?? {}).flatMap(([plan, p]) => [
    ...duplicates(
      'phase',
      (p.phases ?? []).map((ph) => ph.name),
      (i) => `${phasePath(plan, i)}.name`,
    ),
    ...(p.phases ?? []).flatMap((phase, pi) => [
      ...duplicates(
        'step',
        (phase.steps ?? []).map((s) => s.name),
        (i) => `${stepPath(plan, pi, i)}.name`,
      ),
      ...(phase.steps ?? []).flatMap((step, si) =>
        duplicates(
          'target',
          step.targets?.discovery?.static?.nodes ?? [],
          (i) => `${stepPath(plan, pi, si)}.targets.discovery.static.nodes[${i}]`,
        ),
      ),
    ]),
  ]),
];

/** Fan-out targets use exactly one discovery and a concurrency of at least 1. */
export const checkTargets: SpecCheck = (spec) =>
  Object.entries(spec.plans ?? {}).flatMap(([plan, p]) =>
    (p.phases ?? []).flatMap((phase, pi) =>
      (phase.steps ?? []).flatMap((step, si): Finding[] => {
        const targets = step.targets;
        if (targets === undefined) return [];
        const path = `${stepPath(plan, pi, si)}.targets`;
        const out: Finding[] = [];
        const discovery = targets.discovery ?? {};
        const kinds = [discovery.static, discovery.selector].filter((d) => d !== undefined).length;
        if (kinds !== 1) {
          out.push(
            error(
              'ov.invalid-targets',
              `${path}.discovery`,
              kinds === 0 ? 'names neither static nor selector' : 'names both static and selector',
              'set exactly one of discovery.static {nodes} or discovery.selector',
            ),
          );
        }
        const concurrency = targets.concurrency;
        if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1)) {
          out.push(
            error(
              'ov.invalid-targets',
              `${path}.concurrency`,
              `${concurrency} is not a positive whole number`,
              'use a concurrency of 1 or more, or omit it (1)',
            ),
          );
        }
        if (discovery.static !== undefined && (discovery.static.nodes ?? []).length === 0) {
          out.push(warning('ov.invalid-targets', `${path}.discovery.static.nodes`, 'is empty: the step runs on no target'));
        }
        return out;
      }),
    ),
  );

/** Templates read only declared parameters (a warning: values may still be set on the Instance). */
export const checkTemplatePlaceholders: SpecCheck = (spec) => {
  const declared = new Set((spec.parameters ?? []).map((p) => p.name));
  return Object.entries(spec.templates ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap(([name, text]) => {
      const used = new Set<string>();
      for (const action of text.matchAll(/\{\{(.*?)\}\}/gs)) {
        for (const ref of (action[1] ?? '').matchAll(/\.Params\.([A-Za-z_][A-Za-z0-9_]*)/g)) {
          if (ref[1] !== undefined && !declared.has(ref[1])) used.add(ref[1]);
        }
      }
      return [...used].map((param) =>
        warning('ov.undeclared-parameter', `spec.templates${key(name)}`, `reads undeclared parameter ${param}`),
      );
    });
};

/**
 * Every template action is (part of) one value: never a key, a whole line or document, a tag,
 * or part of YAML's syntax — the renderer places values into the scalars the template's own
 * YAML has, so an action elsewhere could only be structure, and it would refuse the template at run time.
 */
export function checkTemplateValuesWith(structure: StructureCheck): SpecCheck {
  return (spec) =>
    Object.entries(spec.templates ?? {})
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .flatMap(([name, text]) => {
        const found = structure(text);
        if (!found) return [];
        const path = `spec.templates${key(name)}`;
        const problem = `line ${found.line}: ${found.problem}`;
        return [
          found.kind === 'action'
            ? error('ov.template-action-not-a-value', path, problem, found.fix)
            : error('ov.template-not-yaml', path, problem, found.fix),
        ];
      });
}

export const checkTemplateValues: SpecCheck = checkTemplateValuesWith(checkTemplateStructure);

/** Plans, phases and steps that would do nothing are flagged. */
export const checkEmptyPlans: SpecCheck = (spec) =>
  Object.entries(spec.plans ?? {}).flatMap(([plan, p]) => [
    ...((p.phases ?? []).length === 0 ? [warning('ov.empty', planPath(plan), 'has no phases')] : []),
    ...(p.phases ?? []).flatMap((phase, pi) => [
      ...((phase.steps ?? []).length === 0 ? [warning('ov.empty', phasePath(plan, pi), 'has no steps')] : []),
      ...(phase.steps ?? []).flatMap((step, si) =>
        (step.tasks ?? []).length === 0 ? [warning('ov.empty', stepPath(plan, pi, si), 'has no tasks')] : [],
      ),
    ]),
  ]);

// --- tenancy: where templates may act ---

/**
 * Templates (and Wait objects) act only in the Instance's namespace, unless declared and
 * allowed. Judged on what the templates render (shared/blueprint/templates.ts), in every
 * branch the renderer explores: an escape in every branch is an error; one only in some
 * branch is a warning naming the condition — the Instance preflight refuses the write whose
 * values take it (shared/plan/preflight.ts, same rule ids).
 */
export function checkTenancy(ctx: BlueprintContext): SpecCheck {
  return (spec) => {
    const allowance = ctx.tenancy ?? NO_ALLOWANCE;
    const allowed = {
      crossNamespace: spec.crossNamespace === true && allowance.allowCrossNamespace,
      clusterScoped: spec.clusterScoped === true && allowance.allowClusterScoped,
    };
    const tctx = { namespace: ctx.namespace, identity: renderIdentity({ metadata: { name: ctx.name }, spec }) };
    const escapes = [
      ...templateEscapes(spec, tctx, allowed),
      ...waitEscapes(spec, tctx, allowed).map((e) => ({ ...e, everyPath: true, conditions: [] })),
    ];
    return escapes.map((e): Finding => {
      if (e.everyPath) {
        const { problem, fix } = tenancyWording(e, spec, ctx.namespace);
        return error(e.rule, e.path, problem, fix);
      }
      // Short enough to keep the condition in a 120-character warning; docs/admission.md says the rest.
      const short = e.rule === 'ov.cluster-scoped-kind' ? 'is cluster-scoped' : 'leaves the namespace';
      return warning(e.rule, e.path, `when ${e.conditions.join(' and ')}: ${e.what} ${short}`);
    });
  };
}

function tenancyWording(e: Escape, spec: OperatorVersionSpec, namespace: string): { problem: string; fix: string } {
  const declareOr = (field: 'crossNamespace' | 'clusterScoped', flag: string) =>
    spec[field]
      ? `the webhook does not run with ${flag}: ask a cluster admin, or act in the Instance's namespace only`
      : `a cluster admin must allow it (spec.${field}: true here and ${flag} on the webhook and the controller)`;
  switch (e.rule) {
    case 'ov.cluster-scoped-kind':
      return {
        problem: `${e.what} is cluster-scoped, and plans act only in their Instance's namespace`,
        fix: `have a cluster admin create it, or ${declareOr('clusterScoped', '--allow-cluster-scoped')}`,
      };
    case 'ov.templated-namespace':
      return {
        problem: `${e.what} computes its namespace from a template value, which could name any namespace`,
        fix: `omit the namespace (or write {{ .Namespace }}): the Instance's is used; otherwise ${declareOr('crossNamespace', '--allow-cross-namespace')}`,
      };
    case 'ov.other-namespace':
      return {
        problem: `${e.what} names namespace "${e.namespace ?? ''}", but plans act only in their Instance's namespace "${namespace}"`,
        fix: `omit the namespace (or write {{ .Namespace }}); otherwise ${declareOr('crossNamespace', '--allow-cross-namespace')}`,
      };
  }
}

/** Each parameter declaration fits itself: type, enum, pattern (RE2), minimum/maximum, default (shared/params/values.ts). */
export const checkParameterDeclarations: SpecCheck = (spec) =>
  (spec.parameters ?? []).flatMap((parameter, i): Finding[] =>
    declarationProblems(parameter).map((problem) =>
      error(
        PARAMETER_RULES.declarationInvalid,
        `spec.parameters[${i}]`,
        `parameter "${parameter.name}": ${problem}`,
        'make the declaration consistent (docs/api.md, "Typed parameters"): a default that fits, a pattern in RE2 syntax on strings only, minimum ≤ maximum on integer/number only, enum values of the type',
      ),
    ),
  );

/**
 * Secret parameters (issue 35): the value comes only from a Secret, at run time, so nothing
 * in the blueprint may stand for it or judge it where a message would have to quote it — no
 * default, no enum, pattern, minimum or maximum, type string.
 */
export const checkSecretParameters: SpecCheck = (spec) =>
  (spec.parameters ?? []).flatMap((p, i): Finding[] => {
    if (p.secret !== true) return [];
    const path = `spec.parameters[${i}]`;
    const out: Finding[] = [];
    if (p.default !== undefined) {
      out.push(
        error(
          SECRET_PARAMETER_RULES.default,
          `${path}.default`,
          `secret parameter ${p.name} has a default: a default is written in the blueprint, readable by everyone who may read it`,
          `remove the default; each Instance names a Secret in spec.parametersFrom.${p.name}`,
        ),
      );
    }
    const constraints: string[] = (['enum', 'pattern', 'minimum', 'maximum'] as const).filter((k) => p[k] !== undefined);
    if ((p.type ?? 'string') !== 'string') constraints.push('type');
    if (constraints.length > 0) {
      out.push(
        error(
          SECRET_PARAMETER_RULES.constraint,
          path,
          `secret parameter ${p.name} declares ${constraints.join(', ')}: its value is read only at run time and never shown, so it cannot be judged at apply time or quoted when it does not fit`,
          `remove ${constraints.join(', ')} from ${p.name} (a secret parameter is a string)`,
        ),
      );
    }
    return out;
  });

/**
 * A warning where a template puts a secret parameter into an object that is not a Secret:
 * the value will be readable by whoever may read that object (a ConfigMap, a Pod's env).
 * Judged on the template's text, one YAML document at a time, by its literal kind.
 */
export const checkSecretPlacement: SpecCheck = (spec) => {
  const secret = new Set((spec.parameters ?? []).filter((p) => p.secret === true).map((p) => p.name));
  if (secret.size === 0) return [];
  return Object.entries(spec.templates ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap(([name, text]) => {
      const out: Finding[] = [];
      let line = 1;
      for (const doc of text.split(/^---[^\n]*$/m)) {
        const kind = /^kind:\s*["']?([A-Za-z0-9]+)/m.exec(doc)?.[1];
        if (kind !== 'Secret') {
          for (const action of doc.matchAll(/\{\{(.*?)\}\}/gs)) {
            for (const ref of (action[1] ?? '').matchAll(/\.Params\.([A-Za-z_][A-Za-z0-9_]*)/g)) {
              const param = ref[1] ?? '';
              if (!secret.has(param)) continue;
              const at = line + (doc.slice(0, action.index).match(/\n/g)?.length ?? 0);
              out.push(
                warning(
                  SECRET_PARAMETER_RULES.inObject,
                  `spec.templates${key(name)}`,
                  `line ${at} puts secret parameter ${param} into ${kind ? `a ${kind}` : 'an object'}, not a Secret: its value will be readable by whoever may read that object (put it in a Secret and refer to the Secret instead)`,
                ),
              );
            }
          }
        }
        line += doc.match(/\n/g)?.length ?? 0;
      }
      return out;
    });
};

export const SPEC_CHECKS: readonly SpecCheck[] = [
  checkVersion,
  checkDuplicateNames,
  checkDeployPlan,
  checkStrategies,
  checkTaskReferences,
  checkTaskKinds,
  checkTemplateReferences,
  checkPipeKeys,
  checkParameterTriggers,
  checkParameterDeclarations,
  checkSecretParameters,
  checkSecretPlacement,
  checkTargets,
  checkTemplatePlaceholders,
  checkTemplateValues,
  checkEmptyPlans,
];

/** Every finding of every check, errors and warnings, in check order. */
export function reviewOperatorVersionSpec(spec: OperatorVersionSpec): Finding[] {
  return SPEC_CHECKS.flatMap((check) => check(spec));
}

/** Who reviews a blueprint and where: the namespace it is applied in, what the cluster admin allows. */
export interface BlueprintContext {
  /** The namespace the OperatorVersion lives in, where its Instances are. */
  namespace: string;
  /** metadata.name (the default of .OperatorName). */
  name: string;
  /** What the cluster admin allows blueprints that declare it; nothing by default. */
  tenancy?: TenancyAllowance;
}

/**
 * Every finding about a blueprint, errors and warnings, in check order: the spec checks, then
 * tenancy. The OperatorVersion webhook refuses on any error; `package verify` reports them.
 */
export function reviewBlueprint(spec: OperatorVersionSpec, ctx: BlueprintContext): Finding[] {
  const templates = { namespace: ctx.namespace, identity: renderIdentity({ metadata: { name: ctx.name }, spec }) };
  const structure = structureMemo();
  const analyzed = checkTemplatesAnalyzed(spec, structure);
  // A template the analysis refuses is not rendered too: its problem would be named twice.
  const flawed = new Set(analyzed.map((f) => f.path));
  return [
    ...SPEC_CHECKS.flatMap((check) => (check === checkTemplateValues ? checkTemplateValuesWith(structure) : check)(spec)),
    ...analyzed,
    ...checkTemplatesRender(spec, templates, structure).filter((f) => !flawed.has(f.path)),
    ...checkTenancy(ctx)(spec),
  ];
}
