// Admission of FleetRollouts: a well-formed spec that stays as created (but for paused,
// maxFailures and maxConcurrent), an author taken from the request that created it, and at
// creation, targets the rollout can act on with its author's rights.
//
// Choices where the issue leaves one open:
// - a plan that some matching Instance's OperatorVersion lacks, and an upgrade to an
//   OperatorVersion missing in some namespace, are refused at creation listing them (not
//   Skipped later): a rollout that would skip part of the fleet is most likely a wrong
//   selector. Instances that match after creation are not targets anyway.
// - a selector's form is judged here (not in the CRD), so the refusal names the rule and a fix.
import type { FleetRollout } from '../../shared/api/schema.ts';
import { AUTHOR_ANNOTATION, formatAuthor, MUTABLE_SPEC_FIELDS, parseAuthor, waveProblems, type Author } from '../../shared/fleet.ts';
import { isEmptySelector, selectorProblems } from '../../shared/labelSelector.ts';
import { jsonEqual } from '../../shared/json.ts';
import { counted, plural } from '../../shared/text.ts';
import { objectRef, type Refusal } from '../../shared/refusal.ts';
import { allow, combine, deny, type Verdict } from '../../shared/verdict.ts';
import type { RuleId } from '../../shared/ruleIds.ts';

export const FLEET_RULES = {
  selectorEmpty: 'fleetrollout.selector-empty',
  selectorInvalid: 'fleetrollout.selector-invalid',
  action: 'fleetrollout.one-action',
  cleanup: 'fleetrollout.cleanup',
  waves: 'fleetrollout.waves-invalid',
  maxConcurrent: 'fleetrollout.max-concurrent',
  maxFailures: 'fleetrollout.max-failures',
  immutable: 'fleetrollout.spec-immutable',
  authorForged: 'fleetrollout.author-forged',
  authorForbidden: 'fleetrollout.author-forbidden',
  planMissing: 'fleetrollout.plan-missing',
  operatorVersionMissing: 'fleetrollout.operator-version-missing',
  parametersInvalid: 'fleetrollout.parameters-invalid',
  targetImpersonation: 'fleetrollout.target-impersonation',
  updateNotAuthor: 'fleetrollout.update-not-author',
} as const satisfies Record<string, RuleId>;

/** At most this many names are listed in a refusal; the rest are counted. */
const MAX_LISTED = 10;

export interface FleetRolloutContext {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  object: FleetRollout;
  oldObject?: FleetRollout;
  userInfo: Author;
}

/** What the creation of a rollout found about its targets (webhook/handlers.ts looks it up). */
export interface FleetTargetFacts {
  /** Matching Instances with what their OperatorVersion offers (plans undefined: the OperatorVersion is missing). */
  instances: { namespace: string; name: string; operatorVersion: string; plans?: readonly string[]; parameterRefusal?: Refusal }[];
  /** For an upgrade: the namespaces of matching Instances that hold no OperatorVersion of that name. */
  namespacesWithoutTarget: string[];
  /** Namespaces of matching Instances where the author may not patch Instances. */
  forbiddenNamespaces: string[];
  /**
   * Namespaces of matching Instances where the author may not list Instances: a refusal
   * names nothing there (not the namespace, not an Instance), it only counts them.
   * Absent: every namespace may be named.
   */
  hiddenNamespaces?: readonly string[];
  /**
   * Matching Instances (`namespace/name as ServiceAccount`) whose named ServiceAccount the
   * author may not impersonate, or whose answer is unknown (fail closed).
   */
  forbiddenServiceAccounts?: string[];
}

const who = (ctx: FleetRolloutContext) => objectRef('FleetRollout', ctx.object.metadata);

function listed(names: readonly string[]): string {
  const shown = names.slice(0, MAX_LISTED).join(', ');
  return names.length > MAX_LISTED ? `${shown} and ${names.length - MAX_LISTED} more` : shown;
}

/**
 * `items` as a refusal may name them to this author: those in namespaces the author may not
 * list Instances in are only counted ("2 Instances in 1 namespace you may not read").
 */
function listedFor<T>(
  items: readonly T[],
  namespaceOf: (item: T) => string,
  name: (item: T) => string,
  hidden: readonly string[] | undefined,
  what: [string, string],
): string {
  const secret = new Set(hidden ?? []);
  const visible = items.filter((i) => !secret.has(namespaceOf(i)));
  const unseen = items.filter((i) => secret.has(namespaceOf(i)));
  if (unseen.length === 0) return listed(visible.map(name));
  const namespaces = new Set(unseen.map(namespaceOf)).size;
  const hiddenOnes = `${counted(unseen.length, what[0], what[1])} in ${counted(namespaces, 'namespace')} you may not read`;
  return visible.length === 0 ? hiddenOnes : `${listed(visible.map(name))}, and ${hiddenOnes}`;
}

/**
 * Namespaces as a refusal may name them to this author, those whose Instances the author may
 * not list only counted: "namespace web", "namespaces web, billing", "namespace web and 2
 * namespaces you may not read", "1 namespace you may not read".
 */
function namespacesFor(names: readonly string[], hidden: readonly string[] | undefined): string {
  const secret = new Set(hidden ?? []);
  const visible = names.filter((n) => !secret.has(n));
  const unseen = names.length - visible.length;
  const shown = visible.length === 0 ? [] : [`${plural(visible.length, 'namespace', 'namespaces')} ${listed(visible)}`];
  const hiddenOnes = unseen === 0 ? [] : [`${counted(unseen, 'namespace')} you may not read`];
  return [...shown, ...hiddenOnes].join(' and ');
}

function checkSelectors(ctx: FleetRolloutContext): Verdict {
  const spec = ctx.object.spec;
  if (isEmptySelector(spec?.instanceSelector)) {
    return deny({
      object: who(ctx),
      rule: FLEET_RULES.selectorEmpty,
      refused: 'spec.instanceSelector',
      why: 'an empty selector would match every Instance of every namespace',
      fix: 'name labels the targets carry, e.g. instanceSelector: {matchLabels: {app: postgres}}',
      code: 422,
      reason: 'Invalid',
    });
  }
  const problems = [
    ...selectorProblems(spec.instanceSelector, 'instanceSelector'),
    ...selectorProblems(spec.namespaceSelector, 'namespaceSelector'),
  ];
  if (problems.length === 0) return allow();
  return deny({
    object: who(ctx),
    rule: FLEET_RULES.selectorInvalid,
    refused: 'the selector',
    why: problems.join('; '),
    fix: 'use label keys and values as Kubernetes allows them; In and NotIn need values, Exists and DoesNotExist none',
    code: 422,
    reason: 'Invalid',
  });
}

function checkAction(ctx: FleetRolloutContext): Verdict {
  const { plan, upgrade } = ctx.object.spec ?? {};
  if ((plan === undefined) === (upgrade === undefined)) {
    return deny({
      object: who(ctx),
      rule: FLEET_RULES.action,
      refused: plan ? 'spec.plan together with spec.upgrade' : 'a rollout without spec.plan or spec.upgrade',
      why: 'a rollout does exactly one thing to every target',
      fix: 'set either plan: {name: …} or upgrade: {operatorVersion: …}; for both, make two rollouts',
      code: 422,
      reason: 'Invalid',
    });
  }
  if (plan?.name === 'cleanup') {
    return deny({
      object: who(ctx),
      rule: FLEET_RULES.cleanup,
      refused: 'plan "cleanup"',
      why: 'cleanup runs only when an Instance is deleted, never by trigger',
      fix: 'delete the Instances instead (kubectl delete instances -l …)',
      code: 422,
      reason: 'Invalid',
    });
  }
  return allow();
}

function checkNumbers(ctx: FleetRolloutContext): Verdict {
  const spec = ctx.object.spec ?? {};
  const verdicts: Verdict[] = [];
  const problems = spec.waves === undefined ? [] : waveProblems(spec.waves);
  if (problems.length > 0) {
    verdicts.push(
      deny({
        object: who(ctx),
        rule: FLEET_RULES.waves,
        refused: `spec.waves`,
        why: problems.join('; '),
        fix: 'give cumulative sizes that increase, as counts or percentages up to 100%, e.g. ["1", "25%", "100%"]',
        code: 422,
        reason: 'Invalid',
      }),
    );
  }
  if (spec.maxConcurrent !== undefined && spec.maxConcurrent < 1) {
    verdicts.push(
      deny({
        object: who(ctx),
        rule: FLEET_RULES.maxConcurrent,
        refused: `maxConcurrent ${spec.maxConcurrent}`,
        why: 'with no target in flight the rollout would never start one',
        fix: 'set maxConcurrent to 1 or more; to hold the rollout, set paused: true',
        code: 422,
        reason: 'Invalid',
      }),
    );
  }
  if (spec.maxFailures !== undefined && spec.maxFailures < 0) {
    verdicts.push(
      deny({
        object: who(ctx),
        rule: FLEET_RULES.maxFailures,
        refused: `maxFailures ${spec.maxFailures}`,
        why: 'a failure budget cannot be negative',
        fix: 'set maxFailures to 0 (stop at the first failure) or more',
        code: 422,
        reason: 'Invalid',
      }),
    );
  }
  return combine(verdicts);
}

function checkImmutable(ctx: FleetRolloutContext): Verdict {
  if (ctx.operation !== 'UPDATE' || !ctx.oldObject) return allow();
  const strip = (spec: object | undefined) =>
    Object.fromEntries(Object.entries(spec ?? {}).filter(([k]) => !(MUTABLE_SPEC_FIELDS as readonly string[]).includes(k)));
  const before = strip(ctx.oldObject.spec);
  const after = strip(ctx.object.spec);
  if (jsonEqual(before, after)) return allow();
  const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => !jsonEqual(before[k], after[k])).sort();
  return deny({
    object: who(ctx),
    rule: FLEET_RULES.immutable,
    refused: `a change of spec.${changed.join(', spec.')}`,
    why: 'the targets and what is done to them were fixed when the rollout started; only paused, maxFailures and maxConcurrent may change',
    fix: 'create a new FleetRollout for a different selector, plan, upgrade or waves (delete this one first if it should stop)',
    code: 422,
    reason: 'Invalid',
  });
}

const sameAuthor = (a: Author | undefined, b: Author) =>
  a !== undefined && a.username === b.username && jsonEqual([...a.groups].sort(), [...b.groups].sort());

/**
 * The author is the user who created the rollout: a client-written author that is not the
 * request's user is refused, and the recorded author never changes.
 */
export function checkAuthor(ctx: FleetRolloutContext): Verdict {
  const written = ctx.object.metadata.annotations?.[AUTHOR_ANNOTATION];
  if (ctx.operation === 'CREATE') {
    if (written === undefined || sameAuthor(parseAuthor(written), ctx.userInfo)) return allow();
    return deny({
      object: who(ctx),
      rule: FLEET_RULES.authorForged,
      refused: `annotation ${AUTHOR_ANNOTATION}`,
      why: `it names an author other than the user creating the rollout (${ctx.userInfo.username}); the rollout acts with its creator's rights`,
      fix: `remove the annotation: planwarden records it; to act as someone else, let them create the rollout`,
    });
  }
  if (ctx.operation === 'UPDATE' && written !== ctx.oldObject?.metadata.annotations?.[AUTHOR_ANNOTATION]) {
    return deny({
      object: who(ctx),
      rule: FLEET_RULES.authorForged,
      refused: `a change of annotation ${AUTHOR_ANNOTATION}`,
      why: 'the author is recorded once, from the request that created the rollout',
      fix: 'keep the annotation as it is; to act with other rights, create a new rollout as that user',
    });
  }
  return allow();
}

/**
 * A rollout keeps acting with its author's rights, so only its author may steer it: a change
 * of spec by anyone else is refused — but pausing (paused: true and nothing else), which
 * never widens what the rollout does. (Simpler than judging the updater's rights over every
 * target, and the same guarantee: nobody but the author makes it do more.)
 */
export function checkUpdater(ctx: FleetRolloutContext): Verdict {
  if (ctx.operation !== 'UPDATE' || !ctx.oldObject || jsonEqual(ctx.oldObject.spec, ctx.object.spec)) return allow();
  const author = parseAuthor(ctx.oldObject.metadata.annotations?.[AUTHOR_ANNOTATION]);
  if (author !== undefined && author.username === ctx.userInfo.username) return allow();
  if (ctx.object.spec?.paused === true && jsonEqual({ ...ctx.oldObject.spec, paused: true }, ctx.object.spec)) return allow();
  return deny({
    object: who(ctx),
    rule: FLEET_RULES.updateNotAuthor,
    refused: 'a change of spec other than pausing',
    why: `the rollout acts with the rights of its author (${author?.username ?? 'unknown'}), and ${ctx.userInfo.username} is not its author: only the author may unpause it or change maxConcurrent or maxFailures`,
    fix: 'ask the author to change it; anyone who may update it may pause it (paused: true); to act with your own rights, create a rollout of your own',
  });
}

/** The spec and author rules, judged from the request alone. */
export function admitFleetRollout(ctx: FleetRolloutContext): Verdict {
  if (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE') return allow();
  return combine([checkAuthor(ctx), checkUpdater(ctx), checkSelectors(ctx), checkAction(ctx), checkNumbers(ctx), checkImmutable(ctx)]);
}

/** At creation: what the targets' namespaces hold, and whether the author may act there. */
export function admitFleetTargets(ctx: FleetRolloutContext, facts: FleetTargetFacts): Verdict {
  const spec = ctx.object.spec;
  const warnings: string[] = [];
  if (facts.instances.length === 0) warnings.push(`${who(ctx)}: no Instance matches the selectors yet; the rollout will have no targets`);
  if (facts.forbiddenNamespaces.length > 0) {
    return deny({
      object: who(ctx),
      rule: FLEET_RULES.authorForbidden,
      refused: 'a rollout over Instances you may not patch',
      why: `${ctx.userInfo.username} may not patch Instances in ${namespacesFor(facts.forbiddenNamespaces, facts.hiddenNamespaces)}, where some match; the rollout acts with its author's rights, never more`,
      fix: 'narrow namespaceSelector or instanceSelector to namespaces you may patch Instances in, or ask for patch on instances.planwarden.dev there',
    });
  }
  const forbiddenAccounts = facts.forbiddenServiceAccounts ?? [];
  if (forbiddenAccounts.length > 0) {
    return deny({
      object: who(ctx),
      rule: FLEET_RULES.targetImpersonation,
      refused: `a rollout over Instances whose ServiceAccount you may not act as`,
      why: `${ctx.userInfo.username} may not impersonate the ServiceAccount of ${plural(forbiddenAccounts.length, 'matching Instance', 'matching Instances')} ${listed(forbiddenAccounts)} (or it could not be checked), and their plans run as it: the rollout acts with its author's rights, never more`,
      fix: 'narrow the selectors to Instances whose ServiceAccount you may act as, or get impersonate on serviceaccounts/<name> in their namespaces (a Role and RoleBinding; the edit role holds it): kubectl -n NS create role act-as-SA --verb=impersonate --resource=serviceaccounts --resource-name=SA',
    });
  }
  if (spec.upgrade && facts.namespacesWithoutTarget.length > 0) {
    return deny({
      object: who(ctx),
      rule: FLEET_RULES.operatorVersionMissing,
      refused: `upgrade to OperatorVersion "${spec.upgrade.operatorVersion}"`,
      why: `${namespacesFor(facts.namespacesWithoutTarget, facts.hiddenNamespaces)} ${plural(facts.namespacesWithoutTarget.length, 'holds', 'hold')} matching Instances but no OperatorVersion of that name`,
      fix: `create OperatorVersion "${spec.upgrade.operatorVersion}" in those namespaces first, or narrow the selectors`,
      code: 422,
      reason: 'Invalid',
    });
  }
  if (spec.plan) {
    const lacking = facts.instances.filter((i) => !(i.plans ?? []).includes(spec.plan!.name));
    if (lacking.length > 0) {
      return deny({
        object: who(ctx),
        rule: FLEET_RULES.planMissing,
        refused: `plan "${spec.plan.name}"`,
        why: `${plural(lacking.length, 'the OperatorVersion of matching Instance', 'the OperatorVersions of matching Instances')} ${listedFor(
          lacking,
          (i) => i.namespace,
          (i) => `${i.namespace}/${i.name} (${i.operatorVersion})`,
          facts.hiddenNamespaces,
          ['Instance', 'Instances'],
        )} ${plural(lacking.length, 'has', 'have')} no such plan (or ${plural(lacking.length, 'is', 'are')} missing)`,
        fix: 'narrow the selectors to Instances whose OperatorVersion has the plan, or upgrade those Instances first',
        code: 422,
        reason: 'Invalid',
      });
    }
    // The per-run values, judged as each target's trigger will be (shared/plan/policy.ts).
    const refused = facts.instances.filter((i) => i.parameterRefusal);
    if (refused.length > 0) {
      // The example quoted is one the author may read, when there is one.
      const secret = new Set(facts.hiddenNamespaces ?? []);
      const first = refused.find((i) => !secret.has(i.namespace));
      return deny({
        object: who(ctx),
        rule: FLEET_RULES.parametersInvalid,
        refused: `spec.plan.parameters for ${counted(refused.length, 'target')}: ${listedFor(
          refused,
          (i) => i.namespace,
          (i) => `${i.namespace}/${i.name}`,
          facts.hiddenNamespaces,
          ['Instance', 'Instances'],
        )}`,
        why: first
          ? `each target's trigger would be refused; for ${first.namespace}/${first.name}: ${first.parameterRefusal!.refused} refused: ${first.parameterRefusal!.why} [rule ${first.parameterRefusal!.rule}]`
          : `each target's trigger would be refused: ${refused[0]!.parameterRefusal!.why} [rule ${refused[0]!.parameterRefusal!.rule}]`,
        fix: "give spec.plan.parameters only per-run parameters every target's OperatorVersion declares, with values that fit them",
        code: 422,
        reason: 'Invalid',
      });
    }
  }
  return allow(warnings);
}

/** What the mutating webhook adds at creation: the author, from the request. */
export function mutateFleetRollout(ctx: FleetRolloutContext): Verdict {
  if (ctx.operation !== 'CREATE') return allow();
  const author = checkAuthor(ctx);
  if (!author.allowed) return author;
  const annotations = ctx.object.metadata.annotations;
  const value = formatAuthor(ctx.userInfo);
  if (annotations?.[AUTHOR_ANNOTATION] === value) return allow();
  return allow(
    [],
    typeof annotations === 'object' && annotations !== null && !Array.isArray(annotations)
      ? [{ op: 'add', path: `/metadata/annotations/${AUTHOR_ANNOTATION.replace('~', '~0').replace('/', '~1')}`, value }]
      : [{ op: 'add', path: '/metadata/annotations', value: { [AUTHOR_ANNOTATION]: value } }],
  );
}
