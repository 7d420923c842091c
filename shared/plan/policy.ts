// The trigger policy, written once: what a write to an Instance asks for and which of those
// requests planwarden refuses, with the rule id, the reason and the remedy. The webhook
// judges a write (old object → new object); the controller judges the stored object against
// what it last started (status.applied). Both build the same facts here and run the same
// checks, so what the webhook admits is what the controller starts, and whatever the
// controller holds or refuses (a bypassed webhook, a race) carries the webhook's words.
//
// Abort semantics (docs/admission.md, "The trigger state machine"): an abort acts once, when
// spec.planExecution.abort turns true; it consumes the planExecution it carries, which
// therefore never runs. A later write that names a new (planName, id) while abort is still
// true is refused (`instance.abort-still-set`): the fix is abort: false in the same write.
import { comparedParameters } from '../params/secrets.ts';
import type { Instance, InstanceSpec, OperatorVersionSpec, Parameter, PlanState } from '../api/schema.ts';
import type { Refusal } from '../refusal.ts';
import { jsonEqual } from '../json.ts';
import { describeDeclaration, exampleValue, PARAMETER_RULES, showValue, valueProblem } from '../params/values.ts';
import { closestName, plural, quoted } from '../text.ts';
import { runsOf } from './history.ts';
import {
  distinctPlans,
  heldPlans,
  isHeldPlaceholder,
  isRunning,
  manualRequest,
  parameterTriggeredPlans,
  planNames,
  requestedPlans,
  triggerIdentity,
  type PlanRequest,
} from './triggers.ts';
import type { RuleId } from '../ruleIds.ts';

/** Rule ids of the trigger policy. Each is defined here only. */
export const TRIGGER_RULES = {
  deleting: 'instance.deleting',
  unknownPlan: 'instance.unknown-plan',
  unknownTriggerPlan: 'instance.unknown-trigger-plan',
  cleanupManual: 'instance.cleanup-manual',
  multiplePlans: 'instance.multiple-plans',
  abortStillSet: 'instance.abort-still-set',
  abortNamesOtherPlan: 'instance.abort-names-other-plan',
  abortNotRunning: 'instance.abort-not-running',
  abortNotReset: 'instance.abort-not-reset',
  upgradeWhileRunning: 'instance.upgrade-while-running',
  upgradeWhilePending: 'instance.upgrade-while-pending',
  planRunning: 'instance.plan-running',
  planPending: 'instance.plan-pending',
  notReentrant: 'instance.not-reentrant',
  perRunNotAllowed: PARAMETER_RULES.perRunNotAllowed,
  parameterInvalid: PARAMETER_RULES.valueInvalid,
} as const satisfies Record<string, RuleId>;

/** A write as the webhook sees it. */
export interface AdmissionView {
  view: 'admission';
  operation: 'CREATE' | 'UPDATE';
  /** The stored object (UPDATE). */
  oldObject?: Instance;
  object: Instance;
  /** The OperatorVersion the new spec names (undefined: not found). */
  ov?: OperatorVersionSpec;
  /** The OperatorVersion the old spec names (UPDATE that changes it). */
  oldOv?: OperatorVersionSpec;
}

/** The stored object as the controller sees it: its spec against status.applied. */
export interface ControllerView {
  view: 'controller';
  object: Instance;
  ov: OperatorVersionSpec;
}

export interface RunningPlan {
  name: string;
  status: PlanState;
  id?: string;
  startedAt?: string;
}

/** Everything the checks look at, computed once per write (or reconcile). */
export interface TriggerFacts {
  view: 'admission' | 'controller';
  object: Instance;
  ovName: string;
  ov?: OperatorVersionSpec;
  /** Plan requests this write introduces; for the controller, all the spec asks for that is not started. */
  introduced: PlanRequest[];
  /** The manual trigger introduced (also on CREATE and without an OperatorVersion). */
  manual?: PlanRequest;
  /** Requests admitted earlier, not started, that still hold the Instance (admission only). */
  pending: PlanRequest[];
  running?: RunningPlan;
  /** The OperatorVersion the old spec was judged against (admission: the old one on a change of OperatorVersion). */
  oldOv?: OperatorVersionSpec;
  /** The spec's written values, secret parameters as their references' tokens. */
  params: Record<string, string>;
  /** The old spec's written values (admission, UPDATE). */
  oldParams?: Record<string, string>;
  /** The OperatorVersion an upgrade moves to. */
  upgradeTarget?: string;
  /** Parameters whose written value changes (admission) or whose change is not started (controller). */
  parameterChanges: string[];
  /** The write changes spec.operatorVersion.name. */
  operatorVersionChanged: boolean;
  /** deletionTimestamp, when the Instance is being deleted. */
  deleting?: string;
  /** spec.planExecution.abort turns true: stop the running plan. */
  abortEdge: boolean;
  /** The abort carries a (planName, id) new to it that names another plan than the running one. */
  abortNamesOtherPlan: boolean;
  /** The write sets spec.planExecution back to the (planName, id) the controller consumed last: nothing starts. */
  consumedAgain?: { plan: string; id: string };
  /**
   * Per-run values to judge: those of the manual trigger introduced, or (admission) those a
   * write changes on a trigger admitted earlier — the controller would start it with them.
   */
  runParameters?: Record<string, string>;
}

// --- facts ---

const requestKey = (r: PlanRequest) => JSON.stringify([r.kind, r.plan, r.id]);

/** Whether the OperatorVersion defines `plan` (own keys only). */
export function hasPlan(ov: OperatorVersionSpec, plan: string): boolean {
  return ov.plans !== undefined && Object.hasOwn(ov.plans, plan);
}

/** The written values and, for secret parameters, their references' tokens (shared/params/secrets.ts). */
function paramsOf(spec: InstanceSpec | undefined): Record<string, string> {
  return comparedParameters(spec?.parameters, spec?.parametersFrom) ?? {};
}

/** Parameters whose written value differs (no OperatorVersion needed: no defaults). */
export function rawParameterChanges(before: InstanceSpec | undefined, after: InstanceSpec): string[] {
  const a = paramsOf(before);
  const b = paramsOf(after);
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => a[k] !== b[k]).sort();
}

/**
 * The plan holding the Instance: status.activePlan when it is set (running or not), else —
 * for a status written without it — any running planStatus entry.
 */
export function runningPlan(instance: Instance | undefined): RunningPlan | undefined {
  const status = instance?.status;
  const active = status?.activePlan;
  if (active) {
    if (!isRunning(active.status)) return undefined;
    const startedAt = active.startedAt ?? status?.planStatus?.[active.name]?.startedAt;
    return { name: active.name, status: active.status, id: active.id, startedAt };
  }
  for (const [name, ps] of Object.entries(status?.planStatus ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    if (isRunning(ps.status) && !isHeldPlaceholder(ps)) return { name, status: ps.status, id: ps.id, startedAt: ps.startedAt };
  }
  return undefined;
}

/**
 * The manual trigger a write introduces. On CREATE the planExecution present is returned
 * (the controller records it as consumed, but its plan must still be valid). An unchanged
 * (planName, id) is new only when this write turns abort off and it was never consumed; an
 * abort turning on consumes what it carries.
 */
function introducedManualTrigger(v: AdmissionView): PlanRequest | undefined {
  const pe = v.object.spec.planExecution;
  if (!pe) return undefined;
  const request = manualRequest(pe);
  if (v.operation === 'CREATE') return pe.abort === true ? undefined : request;
  const before = v.oldObject?.spec.planExecution;
  if (before && triggerIdentity(before) === triggerIdentity(pe) && (before.abort !== true || pe.abort === true)) return undefined;
  if (triggerIdentity(v.object.status?.applied?.planExecution) === triggerIdentity(pe)) return undefined;
  if (pe.abort === true && before?.abort !== true) return undefined;
  return request;
}

function admissionFacts(v: AdmissionView): TriggerFacts {
  const { object, ov } = v;
  const old = v.operation === 'UPDATE' ? v.oldObject : undefined;
  const before = old?.spec;
  const ovName = object.spec.operatorVersion.name;
  const operatorVersionChanged = before !== undefined && before.operatorVersion.name !== ovName;
  const applied = object.status?.applied?.operatorVersion;
  const upgradeTarget = operatorVersionChanged && applied !== undefined && applied !== ovName ? ovName : undefined;
  const oldOv = operatorVersionChanged ? v.oldOv : ov;
  const manual = introducedManualTrigger(v);

  let introduced: PlanRequest[] = [];
  let pending: PlanRequest[] = [];
  if (ov && old) {
    const oldRequests = requestedPlans(oldOv ?? ov, old);
    const oldKeys = new Set(oldRequests.map(requestKey));
    const byWrite = parameterTriggeredPlans(ov, paramsOf(before), paramsOf(object.spec));
    const changed = new Set([...byWrite.values()].flat());
    const still = requestedPlans(ov, object);
    introduced = still.filter((r) => {
      // A parameter request is new when this write changes one of its parameters, or when
      // it changes the OperatorVersion back and changes that travelled with the withdrawn
      // upgrade become requests of their own.
      if (r.kind === 'parameter') {
        return (r.parameters ?? []).some((p) => changed.has(p)) || (operatorVersionChanged && !oldKeys.has(requestKey(r)));
      }
      if (r.kind === 'upgrade') return !oldKeys.has(requestKey(r));
      return false; // manual: below; create: asked for since creation
    });
    if (manual) introduced.push(manual);
    // Requests admitted earlier that the controller has not started and that still hold the
    // Instance: those the new spec still asks for, and any pending manual trigger (replacing
    // it with one for another plan would drop it without anyone being told). A pending
    // parameter change merged with a further change of the same plan's parameters stays
    // pending under its new identity; one reverted by this write is gone with nothing lost.
    const stillKeys = new Set(still.map(requestKey));
    pending = oldRequests.filter(
      (o) =>
        stillKeys.has(requestKey(o)) ||
        o.kind === 'manual' ||
        (o.kind === 'parameter' && still.some((n) => n.kind === 'parameter' && n.plan === o.plan)),
    );
  }
  const pe = object.spec.planExecution;
  const running = runningPlan(object);
  const abortEdge = old !== undefined && pe?.abort === true && before?.planExecution?.abort !== true;
  const consumed = object.status?.applied?.planExecution;
  // A write that names the consumed trigger again starts nothing, and is told so — also when
  // abort is still true from an earlier abort (then it would start nothing twice over); only
  // an abort turning on, which consumes what it carries, is not a trigger at all.
  const consumedAgain =
    old !== undefined &&
    pe !== undefined &&
    !abortEdge &&
    triggerIdentity(pe) !== triggerIdentity(before?.planExecution) &&
    triggerIdentity(pe) === triggerIdentity(consumed)
      ? { plan: pe.planName, id: pe.id ?? '' }
      : undefined;
  return {
    view: 'admission',
    object,
    ovName,
    ov,
    oldOv,
    params: paramsOf(object.spec),
    ...(before ? { oldParams: paramsOf(before) } : {}),
    introduced,
    manual,
    pending,
    running,
    upgradeTarget,
    parameterChanges: before ? rawParameterChanges(before, object.spec) : [],
    operatorVersionChanged,
    deleting: old ? (object.metadata.deletionTimestamp ?? old.metadata.deletionTimestamp) : undefined,
    abortEdge,
    abortNamesOtherPlan:
      abortEdge && running !== undefined && pe.planName !== running.name && triggerIdentity(pe) !== triggerIdentity(before?.planExecution),
    consumedAgain,
    runParameters: manual?.runParameters ?? changedRunParameters(before?.planExecution, pe),
  };
}

/** Per-run values a write changes without introducing a trigger (undefined when unchanged or none). */
function changedRunParameters(
  before: InstanceSpec['planExecution'] | undefined,
  after: InstanceSpec['planExecution'] | undefined,
): Record<string, string> | undefined {
  const values = after?.parameters;
  if (!values || Object.keys(values).length === 0 || jsonEqual(before?.parameters ?? {}, values)) return undefined;
  return values;
}

function controllerFacts(v: ControllerView): TriggerFacts {
  const { object, ov } = v;
  const applied = object.status?.applied;
  const introduced = requestedPlans(ov, object);
  const pe = object.spec.planExecution;
  const running = runningPlan(object);
  // Before the first start nothing was applied: an abort then is ignored, as at admission.
  const abortEdge = applied?.operatorVersion !== undefined && pe?.abort === true && applied.abort !== true;
  const upgrade = introduced.find((r) => r.kind === 'upgrade');
  return {
    view: 'controller',
    object,
    ovName: object.spec.operatorVersion.name,
    ov,
    params: paramsOf(object.spec),
    introduced,
    manual: introduced.find((r) => r.kind === 'manual'),
    runParameters: introduced.find((r) => r.kind === 'manual')?.runParameters,
    pending: [],
    running,
    upgradeTarget: upgrade ? object.spec.operatorVersion.name : undefined,
    parameterChanges: introduced.flatMap((r) => r.parameters ?? []),
    operatorVersionChanged: upgrade !== undefined,
    deleting: object.metadata.deletionTimestamp,
    abortEdge,
    abortNamesOtherPlan:
      abortEdge && running !== undefined && pe.planName !== running.name && triggerIdentity(pe) !== triggerIdentity(applied?.planExecution),
  };
}

/** The facts of a write (webhook) or of the stored object (controller). */
export function triggerFacts(v: AdmissionView | ControllerView): TriggerFacts {
  return v.view === 'admission' ? admissionFacts(v) : controllerFacts(v);
}

/** The one request to start when nothing is refused: a manual trigger's id wins over a digest. */
export function requestToStart(f: TriggerFacts): PlanRequest | undefined {
  const r = f.introduced;
  return r.find((x) => x.kind === 'manual') ?? r.find((x) => x.kind === 'upgrade') ?? r[0];
}

// --- message pieces ---

function instanceName(f: TriggerFacts): string {
  return f.object.metadata.name ?? '<name>';
}

export function parametersPhrase(names: readonly string[]): string {
  return `${plural(names.length, 'parameter', 'parameters')} ${names.join(', ')}`;
}

export function statusHint(name: string): string {
  return `\`kubectl planwarden plan status --instance ${name} --wait\``;
}

export function abortHint(name: string): string {
  return `\`kubectl planwarden plan abort --instance ${name}\` (or set spec.planExecution.abort: true)`;
}

function describeRunning(r: RunningPlan): string {
  return `plan "${r.name}" is ${r.status}${r.startedAt ? ` since ${r.startedAt}` : ''}`;
}

/** What a refused request was, as the `refused` part of a denial. */
function refusedRequest(r: PlanRequest, f: TriggerFacts): string {
  switch (r.kind) {
    case 'manual':
      return `trigger of plan "${r.plan}"`;
    case 'parameter':
      return `change of ${parametersPhrase(r.parameters ?? [])} (runs plan "${r.plan}")`;
    case 'upgrade':
      return `upgrade to OperatorVersion "${f.ovName}"`;
    default:
      return `plan "${r.plan}"`;
  }
}

/** Why a request asks for its plan, for listing several requests in one sentence. */
function requestReason(r: PlanRequest): string {
  switch (r.kind) {
    case 'manual':
      return `spec.planExecution triggers "${r.plan}"`;
    case 'parameter': {
      const names = r.parameters ?? [];
      return `${parametersPhrase(names)} ${plural(names.length, 'triggers', 'trigger')} "${r.plan}"`;
    }
    case 'upgrade':
      return `the upgrade runs "${r.plan}"`;
    default:
      return `creation runs "${r.plan}"`;
  }
}

/** A request admitted earlier that has not started, as the subject of a sentence. */
export function describePending(p: PlanRequest): string {
  switch (p.kind) {
    case 'create':
      return `plan "${p.plan}", requested at creation,`;
    case 'parameter':
      return `plan "${p.plan}", requested by a change of ${parametersPhrase(p.parameters ?? [])},`;
    case 'upgrade':
      return `plan "${p.plan}", requested by the upgrade to OperatorVersion "${p.id.replace(/^upgrade\//, '')}",`;
    default:
      return `plan "${p.plan}", triggered with id "${p.id}",`;
  }
}

function withdrawHint(p: PlanRequest, f: TriggerFacts): string {
  if (p.kind === 'parameter') return `, or withdraw it by reverting ${parametersPhrase(p.parameters ?? [])}`;
  const applied = f.object.status?.applied?.operatorVersion;
  if (p.kind === 'upgrade' && applied) return `, or withdraw it by setting spec.operatorVersion.name back to "${applied}"`;
  return '';
}

// --- the checks: each a refusal or nothing ---

export type TriggerCheck = (f: TriggerFacts) => Refusal | undefined;

/** An Instance being deleted runs its cleanup only: no new trigger, parameter change or upgrade. */
export const checkDeleting: TriggerCheck = (f) => {
  if (!f.deleting) return undefined;
  const changes: string[] = [];
  // (The controller's view only: the deploy a creation asked for, deleted before it started.)
  const creation = f.introduced.find((r) => r.kind === 'create');
  if (creation) changes.push(`plan "${creation.plan}" asked for at creation`);
  if (f.manual) changes.push(`trigger of plan "${f.manual.plan}"`);
  if (f.parameterChanges.length > 0) changes.push(`change of ${parametersPhrase(f.parameterChanges)}`);
  if (f.operatorVersionChanged) changes.push(`upgrade to OperatorVersion "${f.ovName}"`);
  if (changes.length === 0) return undefined;
  return {
    rule: TRIGGER_RULES.deleting,
    refused: changes.join(' and '),
    why: `the Instance is being deleted (since ${f.deleting}) and accepts no new plan or parameter change`,
    fix: 'let the deletion and its cleanup finish, then create the Instance again if you still need it',
  };
};

/** A manual trigger names a plan the OperatorVersion has; a parameter's trigger plan exists. */
export const checkKnownPlan: TriggerCheck = (f) => {
  const ov = f.ov;
  if (!ov) return undefined;
  const ovRef = `OperatorVersion "${f.ovName}"`;
  if (f.manual && !hasPlan(ov, f.manual.plan)) {
    const all = planNames(ov);
    const triggerable = all.filter((p) => p !== 'cleanup');
    const guess = closestName(f.manual.plan, triggerable);
    return {
      rule: TRIGGER_RULES.unknownPlan,
      refused: `trigger of plan "${f.manual.plan}"`,
      why: `${ovRef} has no plan "${f.manual.plan}" (its plans: ${all.join(', ') || 'none'})`,
      fix: `set spec.planExecution.planName to one of: ${triggerable.join(', ')}${guess ? ` (did you mean "${guess}"?)` : ''}`,
      code: 422,
      reason: 'Invalid',
    };
  }
  const orphan = f.introduced.find((r) => r.kind === 'parameter' && !hasPlan(ov, r.plan));
  if (orphan) {
    const names = orphan.parameters ?? [];
    return {
      rule: TRIGGER_RULES.unknownTriggerPlan,
      refused: `change of ${parametersPhrase(names)}`,
      why: `${ovRef} declares trigger "${orphan.plan}" for ${names.join(', ')} but has no such plan`,
      fix: `leave ${names.join(', ')} unchanged until the OperatorVersion's trigger names an existing plan (${planNames(ov).join(', ')})`,
      code: 422,
      reason: 'Invalid',
    };
  }
  return undefined;
};

/**
 * Per-run values (spec.planExecution.parameters) only for parameters declared perRun: true,
 * each fitting its declaration like any value.
 */
export const checkPerRunParameters: TriggerCheck = (f) =>
  f.ov && f.runParameters ? perRunParameterRefusal(f.ov, f.ovName, f.runParameters) : undefined;

/** What is wrong with a per-run value: undeclared, declared without perRun: true, or not fitting its declaration. */
export type PerRunProblem =
  | { kind: 'undeclared'; name: string; perRun: string[]; guess?: string }
  | { kind: 'not-per-run'; name: string; perRun: string[]; guess?: string }
  | { kind: 'invalid'; name: string; value: string; decl: Parameter; problem: string };

/**
 * The first problem of per-run `values` (in name order) against `ov`, or undefined when they
 * fit: the one judgement of per-run values, for a manual trigger, a schedule and a
 * FleetRollout's plan.parameters alike (each words its refusal for its own field).
 */
export function perRunValueProblem(ov: OperatorVersionSpec, values: Readonly<Record<string, string>>): PerRunProblem | undefined {
  const declared = ov.parameters ?? [];
  const perRun = declared.filter((p) => p.perRun === true).map((p) => p.name);
  for (const name of Object.keys(values).sort()) {
    const decl = declared.find((p) => p.name === name);
    if (!decl || decl.perRun !== true) {
      const guess = closestName(name, perRun);
      return { kind: decl ? 'not-per-run' : 'undeclared', name, perRun, ...(guess ? { guess } : {}) };
    }
    const value = values[name]!;
    const problem = valueProblem(decl, value);
    if (problem) return { kind: 'invalid', name, value, decl, problem };
  }
  return undefined;
}

/**
 * The refusal of per-run `values` against OperatorVersion `ovName` (spec `ov`), or undefined
 * when they fit (perRunValueProblem): a manual trigger's and a FleetRollout's plan.parameters.
 */
export function perRunParameterRefusal(
  ov: OperatorVersionSpec,
  ovName: string,
  values: Readonly<Record<string, string>>,
): Refusal | undefined {
  const p = perRunValueProblem(ov, values);
  if (!p) return undefined;
  const ovRef = `OperatorVersion "${ovName}"`;
  const { name } = p;
  if (p.kind !== 'invalid') {
    const declares = p.kind === 'not-per-run';
    return {
      rule: TRIGGER_RULES.perRunNotAllowed,
      refused: `per-run value of parameter ${name} (spec.planExecution.parameters.${name})`,
      why: `${ovRef} ${declares ? `declares ${name} without perRun: true` : `does not declare ${name}`} (per-run parameters: ${p.perRun.join(', ') || 'none'})`,
      fix: `remove spec.planExecution.parameters.${name}${p.guess ? ` (did you mean ${p.guess}?)` : ''}${declares ? `; set spec.parameters.${name} to change it for every run` : ''}`,
      code: 422,
      reason: 'Invalid',
    };
  }
  const example = exampleValue(p.decl);
  return {
    rule: TRIGGER_RULES.parameterInvalid,
    refused: `per-run value ${showValue(p.value)} of parameter ${name}`,
    why: `${ovRef} declares ${name} as ${describeDeclaration(p.decl)}, and ${p.problem}`,
    fix: `set spec.planExecution.parameters.${name} to ${example ?? 'a value that fits'}`,
    code: 422,
    reason: 'Invalid',
  };
}

/** `cleanup` runs on deletion only: neither a manual trigger nor a parameter change starts it. */
export const checkCleanupNotManual: TriggerCheck = (f) => {
  const ns = f.object.metadata.namespace;
  const deleteCmd = `\`kubectl delete instance ${instanceName(f)}${ns ? ` -n ${ns}` : ''}\``;
  if (f.manual?.plan === 'cleanup') {
    return {
      rule: TRIGGER_RULES.cleanupManual,
      refused: 'trigger of plan "cleanup"',
      why: 'cleanup runs only when the Instance is deleted',
      fix: `delete the Instance to run it (${deleteCmd}), or trigger another plan`,
    };
  }
  const viaParameter = f.introduced.find((r) => r.kind === 'parameter' && r.plan === 'cleanup');
  if (viaParameter) {
    const names = viaParameter.parameters ?? [];
    return {
      rule: TRIGGER_RULES.cleanupManual,
      refused: `change of ${parametersPhrase(names)}`,
      why: `OperatorVersion "${f.ovName}" makes ${names.join(', ')} trigger "cleanup", which runs only when the Instance is deleted`,
      fix: `leave ${names.join(', ')} unchanged; the OperatorVersion's trigger needs fixing`,
    };
  }
  return undefined;
};

/** One write starts at most one plan: no two parameter plans, no trigger plus another plan. */
export const checkSinglePlan: TriggerCheck = (f) => {
  const requests = f.introduced;
  const plans = distinctPlans(requests);
  if (plans.length <= 1) return undefined;
  const manual = requests.find((r) => r.kind === 'manual');
  const upgrade = requests.find((r) => r.kind === 'upgrade');
  let fix: string;
  if (upgrade && manual) {
    fix = `upgrade first, then trigger "${manual.plan}" once the upgrade's plan has finished`;
  } else if (manual) {
    fix = `apply the parameter change and the trigger of "${manual.plan}" in separate writes, the second after the first plan finished`;
  } else {
    fix = 'change the parameters of one plan per write, and the next ones after that plan finished';
  }
  return {
    rule: TRIGGER_RULES.multiplePlans,
    refused: `change asking for plans ${quoted(plans)} at once`,
    why: `${requests.map(requestReason).join(', ')}, and one change may start only one plan`,
    fix,
  };
};

/** A new (planName, id) while abort is still true from an earlier abort would never start. */
export const checkAbortStillSet: TriggerCheck = (f) => {
  const pe = f.object.spec.planExecution;
  if (!f.manual || pe?.abort !== true) return undefined;
  const { plan, id } = f.manual;
  const patch = JSON.stringify({ spec: { planExecution: { planName: plan, id, abort: false } } });
  return {
    rule: TRIGGER_RULES.abortStillSet,
    refused: `trigger of plan "${plan}" (id "${id}")`,
    why: 'spec.planExecution.abort is still true from an earlier abort, and a planExecution with abort: true starts nothing',
    fix: `set spec.planExecution.abort: false in the same write (kubectl patch instance ${instanceName(f)} --type=merge -p '${patch}'), or run \`kubectl planwarden plan trigger ${plan} --instance ${instanceName(f)}\``,
    code: 422,
    reason: 'Invalid',
  };
};

/** An abort stops the running plan and starts nothing: it may not carry a trigger of another plan. */
export const checkAbortNamesOtherPlan: TriggerCheck = (f) => {
  const pe = f.object.spec.planExecution;
  if (!f.abortNamesOtherPlan || !pe || !f.running) return undefined;
  return {
    rule: TRIGGER_RULES.abortNamesOtherPlan,
    refused: `abort together with plan "${pe.planName}" (id "${pe.id ?? ''}")`,
    why: `an abort stops the running plan "${f.running.name}" and starts nothing, so plan "${pe.planName}" would never run`,
    fix: `abort first (${abortHint(instanceName(f))}), then trigger "${pe.planName}" with abort: false once the run is ABORTED`,
    code: 422,
    reason: 'Invalid',
  };
};

/** Setting spec.planExecution.abort is accepted only while a plan runs. */
export const checkAbortWhileRunning: TriggerCheck = (f) => {
  // An abort also withdraws a request maintenance holds (a PENDING entry never started) —
  // not the deploy of a creation: before the first start an abort is ignored.
  const withdraws = heldPlans(f.object.status).length > 0 && f.object.status?.applied?.operatorVersion !== undefined;
  if (!f.abortEdge || f.running || withdraws) return undefined;
  const last = f.object.status?.activePlan;
  const lastWords = last ? ` (the last plan, "${last.name}", is ${last.status})` : '';
  const pending = f.pending[0];
  const pendingFix = pending ? ` (${describePending(pending)} has not started yet: revert what asked for it to withdraw it)` : '';
  return {
    rule: TRIGGER_RULES.abortNotRunning,
    refused: 'abort (spec.planExecution.abort: true)',
    why: `no plan is running${lastWords}, so there is nothing to abort`,
    fix: `remove spec.planExecution.abort${pendingFix}`,
  };
};

/** An upgrade starts only when no plan runs and no trigger waits to start. */
export const checkUpgradeNotBusy: TriggerCheck = (f) => {
  const target = f.upgradeTarget;
  if (!target) return undefined;
  const refused = `upgrade to OperatorVersion "${target}"`;
  const name = instanceName(f);
  if (f.running) {
    return {
      rule: TRIGGER_RULES.upgradeWhileRunning,
      refused,
      why: `${describeRunning(f.running)}, and an upgrade starts only when no plan runs`,
      fix: `wait for it to finish (${statusHint(name)}) or abort it with ${abortHint(name)}, then upgrade`,
      code: 409,
      reason: 'Conflict',
    };
  }
  const pending = f.pending.find((p) => p.kind !== 'upgrade');
  if (pending) {
    return {
      rule: TRIGGER_RULES.upgradeWhilePending,
      refused,
      why: `${describePending(pending)} has not started yet, and an upgrade starts only when no other plan is due`,
      fix: `wait for it to run and finish (${statusHint(name)}), then upgrade`,
      code: 409,
      reason: 'Conflict',
    };
  }
  return undefined;
};

/** A different plan cannot start while one runs or while a request waits to start. */
export const checkOnePlanAtATime: TriggerCheck = (f) => {
  const requests = f.introduced.filter((r) => r.kind !== 'upgrade');
  if (requests.length === 0) return undefined;
  const name = instanceName(f);
  const running = f.running;
  const blockedByRunning = running && requests.find((r) => r.plan !== running.name);
  if (running && blockedByRunning) {
    return {
      rule: TRIGGER_RULES.planRunning,
      refused: refusedRequest(blockedByRunning, f),
      why: `${describeRunning(running)}, and only one plan runs at a time`,
      fix: `wait for it to finish (${statusHint(name)}), re-trigger "${running.name}" instead, or abort it with ${abortHint(name)}`,
      code: 409,
      reason: 'Conflict',
    };
  }
  for (const r of requests) {
    const other = f.pending.find((p) => p.plan !== r.plan);
    if (!other) continue;
    return {
      rule: TRIGGER_RULES.planPending,
      refused: refusedRequest(r, f),
      why: `${describePending(other)} has not started yet and holds the Instance like a running plan`,
      fix: `wait for it to run and finish (${statusHint(name)}), then retry${withdrawHint(other, f)}`,
      code: 409,
      reason: 'Conflict',
    };
  }
  return undefined;
};

/** The request that restarts the running plan, if any. */
function restartRequest(f: TriggerFacts): PlanRequest | undefined {
  const running = f.running;
  return running && f.introduced.find((r) => r.kind !== 'upgrade' && r.plan === running.name);
}

/** Restarting the running plan is allowed unless the plan is `reentrant: false`. */
export const checkReentrant: TriggerCheck = (f) => {
  const restart = restartRequest(f);
  if (!f.ov || !f.running || !restart) return undefined;
  const plan = hasPlan(f.ov, f.running.name) ? f.ov.plans[f.running.name] : undefined;
  if (plan?.reentrant !== false) return undefined;
  const name = instanceName(f);
  return {
    rule: TRIGGER_RULES.notReentrant,
    refused: refusedRequest(restart, f),
    why: `${describeRunning(f.running)}, and it is not reentrant (reentrant: false)`,
    fix: `wait for it to finish (${statusHint(name)}), or abort it with ${abortHint(name)} and trigger it again`,
    code: 409,
    reason: 'Conflict',
  };
};

/** The warning for a restart of the running (reentrant) plan. */
export function restartWarning(f: TriggerFacts): string | undefined {
  if (!f.running || !restartRequest(f) || checkReentrant(f)) return undefined;
  return `${describeRunning(f.running)}: this change restarts it`;
}

/** The warning for a manual trigger whose id an earlier run of the plan already used. */
export function reusedIdWarning(f: TriggerFacts): string | undefined {
  if (f.consumedAgain) {
    const { plan, id } = f.consumedAgain;
    return `spec.planExecution (plan "${plan}", id "${id}") is the trigger already consumed: nothing starts; set a new id to run "${plan}" again`;
  }
  const m = f.manual;
  if (!m || m.id === '') return undefined;
  const status = f.object.status;
  const earlier = [
    ...(status?.planStatus?.[m.plan]?.id === m.id ? [status.planStatus[m.plan]!] : []),
    ...runsOf(status?.history).filter((h) => h.plan === m.plan && h.id === m.id),
  ][0];
  if (!earlier) return undefined;
  return `id "${m.id}" was used by an earlier run of "${m.plan}" (${earlier.status}): this starts a new run with the same id`;
}

/**
 * An abort acts when spec.planExecution.abort turns true *for the controller*, which compares
 * with the value it consumed last (status.applied.abort). Turning abort off and on again
 * before the controller saw it off would be an abort it never sees: refused, with "retry".
 */
export const checkAbortReset: TriggerCheck = (f) => {
  if (f.view !== 'admission' || !f.abortEdge || !f.running || f.object.status?.applied?.abort !== true) return undefined;
  return {
    rule: TRIGGER_RULES.abortNotReset,
    refused: 'abort (spec.planExecution.abort: true)',
    why: 'the controller has not yet taken note that the earlier abort was turned off (status.applied.abort is still true), so it would not see this one',
    fix: 'retry in a moment, or use `kubectl planwarden plan abort`, which waits for that',
    code: 409,
    reason: 'Conflict',
  };
};

/**
 * The trigger policy's checks in the one order both sides judge them: the first refusal of
 * this list is the rule the webhook names and the controller records. The requests (the
 * Instance's new work) first, in the order their refusals are most useful; then the abort,
 * which is refused apart from the requests (the controller aborts a running plan before it
 * judges the rest; an abort it does not act on is reported after the requests' refusal).
 * The webhook runs these through its Instance rules in this order (webhook/rules/instance.ts
 * builds INSTANCE_RULES from it), with its own rules judged in between.
 */
export const TRIGGER_CHECKS: readonly TriggerCheck[] = [
  checkDeleting,
  checkKnownPlan,
  checkCleanupNotManual,
  checkPerRunParameters,
  checkSinglePlan,
  checkAbortStillSet,
  checkUpgradeNotBusy,
  checkOnePlanAtATime,
  checkReentrant,
  checkAbortWhileRunning,
  checkAbortReset,
  checkAbortNamesOtherPlan,
];

/** The checks that refuse an abort (spec.planExecution.abort turning true), in TRIGGER_CHECKS order. */
export const ABORT_CHECKS: readonly TriggerCheck[] = [checkAbortWhileRunning, checkAbortReset, checkAbortNamesOtherPlan];

/** The checks that refuse the requests: TRIGGER_CHECKS without the abort's. */
export const REQUEST_CHECKS: readonly TriggerCheck[] = TRIGGER_CHECKS.filter((c) => !ABORT_CHECKS.includes(c));

/** The first refusal of `checks`, if any. */
export function firstRefusal(f: TriggerFacts, checks: readonly TriggerCheck[]): Refusal | undefined {
  for (const check of checks) {
    const r = check(f);
    if (r) return r;
  }
  return undefined;
}

/** A refusal whose remedy is to wait: the controller holds the request instead of dropping it. */
export function isWaitRefusal(r: Refusal): boolean {
  return r.code === 409;
}
