// Admission of change governance (docs/operations.md, "Requiring approvals", "Freezing
// changes"): PlanPolicy writes, PlanApproval writes (the approver stamped from the request,
// then the decision judged by shared/plan/governance.ts approvalProblem — the same facts the
// controller counts with), and on Instance writes a break-glass, a schedule of a plan that
// needs approval, and a warning on a request a policy will hold. Pure: the handler brings
// what it looked up.
import type { Operation } from 'rfc6902';
import type { Instance, PlanApproval, PlanPolicy } from '../../shared/api/schema.ts';
import { parseGoDuration, parsePause } from '../../shared/calendar.ts';
import { selectorProblems } from '../../shared/labelSelector.ts';
import {
  approvalProblem,
  BREAK_GLASS_ANNOTATION,
  breakGlassPolicies,
  governanceOf,
  governanceStep,
  groupsInWords,
  REASON_AWAITING_APPROVAL,
  UNGOVERNABLE_PLAN,
  type Subject,
} from '../../shared/plan/governance.ts';
import { objectRef } from '../../shared/refusal.ts';
import { jsonEqual } from '../../shared/json.ts';
import { counted } from '../../shared/text.ts';
import { allow, deny, type Verdict } from '../../shared/verdict.ts';
import type { RuleId } from '../../shared/ruleIds.ts';

/** A warning that names its rule, as refusals do. */
const ruled = (rule: RuleId, text: string) => `${text} [rule ${rule}]`;

// --- PlanPolicy ---

export function admitPlanPolicy(input: { object: PlanPolicy; now: number }): Verdict {
  const { object, now } = input;
  const spec = object.spec ?? {};
  const who = objectRef('PlanPolicy', object.metadata ?? {});
  if ((spec.plans ?? []).includes(UNGOVERNABLE_PLAN)) {
    return deny({
      object: who,
      rule: 'policy.cleanup-governed',
      refused: 'spec.plans with cleanup',
      why: 'deletion runs cleanup and must never wait for a person or a freeze',
      fix: 'leave cleanup out of spec.plans (absent plans govern every plan but cleanup)',
      code: 422,
      reason: 'Invalid',
    });
  }
  if (!spec.approval && !spec.freeze) {
    return deny({
      object: who,
      rule: 'policy.empty',
      refused: 'a policy with neither approval nor freeze',
      why: 'it would govern nothing',
      fix: 'set spec.approval (required approvers) or spec.freeze (pausedUntil), or delete the policy',
      code: 422,
      reason: 'Invalid',
    });
  }
  const selectors = [
    ...selectorProblems(spec.namespaceSelector, 'spec.namespaceSelector'),
    ...selectorProblems(spec.instanceSelector, 'spec.instanceSelector'),
  ];
  if (selectors.length > 0) {
    return deny({
      object: who,
      rule: 'policy.selector-invalid',
      refused: 'the selectors',
      why: selectors.join('; '),
      fix: 'write label selectors as metav1 does (keys and values of labels)',
      code: 422,
      reason: 'Invalid',
    });
  }
  const timeout = spec.approval?.timeout;
  if (timeout !== undefined && !((parseGoDuration(timeout) ?? 0) > 0)) {
    return deny({
      object: who,
      rule: 'policy.timeout-invalid',
      refused: `spec.approval.timeout "${timeout}"`,
      why: 'it is not a positive duration',
      fix: 'write hours, minutes and seconds, e.g. 4h, 90m, 1h30m',
      code: 422,
      reason: 'Invalid',
    });
  }
  const warnings: string[] = [];
  if (spec.freeze) {
    const pause = parsePause(spec.freeze.pausedUntil);
    if (pause.kind === 'invalid' || pause.kind === 'none') {
      return deny({
        object: who,
        rule: 'policy.freeze-invalid',
        refused: `spec.freeze.pausedUntil "${spec.freeze.pausedUntil}"`,
        why: 'it is neither "true" nor an RFC 3339 time that exists',
        fix: 'write "true" (until the freeze is removed) or a time such as 2027-01-04T08:00:00Z',
        code: 422,
        reason: 'Invalid',
      });
    }
    if (pause.kind === 'until' && pause.at <= now) {
      warnings.push(
        ruled('policy.freeze-past', `${who}: spec.freeze.pausedUntil ${spec.freeze.pausedUntil} is past: the freeze holds nothing`),
      );
    }
  }
  return allow(warnings);
}

// --- PlanApproval ---

export interface ApprovalAuthor {
  username: string;
  groups: string[];
}

/** The approver stamp of a new PlanApproval; a client-written approver is refused. */
export function mutatePlanApproval(input: { operation: string; object: PlanApproval; user: ApprovalAuthor }): Verdict {
  if (input.operation !== 'CREATE') return allow();
  const spec: unknown = input.object?.spec;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return allow(); // the schema refuses it
  if ((spec as Record<string, unknown>).approver !== undefined) {
    return deny({
      object: objectRef('PlanApproval', input.object.metadata ?? {}),
      rule: 'approval.approver-forged',
      refused: 'spec.approver',
      why: 'the approver is stamped by planwarden from the request that creates the PlanApproval, never written by a client',
      fix: 'leave spec.approver out (kubectl planwarden plan approve does)',
    });
  }
  const patch: Operation[] = [
    { op: 'add', path: '/spec/approver', value: { username: input.user.username, groups: [...input.user.groups] } },
  ];
  return allow([], patch);
}

export interface PlanApprovalFacts {
  /** The Instance named, if it exists. */
  instance: Instance | undefined;
  /** PlanApprovals of the namespace (to find this approver's earlier decisions on the run). */
  approvals: readonly PlanApproval[];
}

/** A PlanApproval write: never edited; created only as a valid decision on a waiting run. */
export function admitPlanApproval(input: {
  operation: string;
  object: PlanApproval;
  oldObject?: PlanApproval;
  user: ApprovalAuthor;
  facts?: PlanApprovalFacts;
}): Verdict {
  const { object } = input;
  const who = objectRef('PlanApproval', object.metadata ?? {});
  if (input.operation === 'UPDATE') {
    return jsonEqual(object.spec, input.oldObject?.spec)
      ? allow()
      : deny({
          object: who,
          rule: 'approval.spec-immutable',
          refused: 'a change of spec',
          why: 'a decision is a record of what was decided',
          fix: 'create a new PlanApproval (a second decision by the same approver on one run is refused)',
        });
  }
  const approver = object.spec.approver;
  if (!approver || approver.username !== input.user.username) {
    return deny({
      object: who,
      rule: 'approval.approver-forged',
      refused: 'spec.approver',
      why: `it is not the request's user (${input.user.username})`,
      fix: 'leave spec.approver out: planwarden stamps it',
    });
  }
  const facts = input.facts;
  if (!facts) return allow();
  const earlier = facts.approvals.filter(
    (a) =>
      a.spec.instance === object.spec.instance &&
      a.spec.runID === object.spec.runID &&
      a.spec.approver?.username === approver.username &&
      a.metadata.name !== object.metadata.name,
  ).length;
  const problem = approvalProblem({
    pending: facts.instance?.status?.pendingApproval,
    instance: `${object.metadata.namespace ?? ''}/${object.spec.instance}`,
    runID: object.spec.runID,
    decision: object.spec.decision,
    digest: object.spec.digest,
    approver: approver.username,
    groups: input.user.groups,
    earlier,
  });
  if (!problem) return allow();
  return deny({
    object: who,
    rule: problem.rule,
    refused: `${object.spec.decision} of run ${object.spec.runID}`,
    why: problem.message,
    fix: problem.remedy,
    ...(problem.rule === 'approval.not-awaiting' || problem.rule === 'approval.stale-digest'
      ? { code: 409, reason: 'Conflict' as const }
      : {}),
  });
}

// --- Instance writes ---

/** A break-glass on a trigger: who may use it, for which freezes (stamped), or a refusal. */
export function judgeBreakGlass(input: {
  object: Instance;
  oldObject?: Instance;
  user: ApprovalAuthor;
  policies: readonly PlanPolicy[];
  namespaceLabels: Record<string, string>;
  now: number;
  introducesRequest: boolean;
}): { verdict: Verdict; stamp?: { reason: string; policies: string[] } } {
  const reason = input.object.metadata?.annotations?.[BREAK_GLASS_ANNOTATION];
  if (reason === undefined || !input.introducesRequest) return { verdict: allow() };
  const who = objectRef('Instance', input.object.metadata ?? {});
  // A break-glass belongs to the write that sets it: one left on the Instance by an earlier
  // write is no one's now (another person's trigger, a rollout's) and is ignored.
  if (input.oldObject?.metadata?.annotations?.[BREAK_GLASS_ANNOTATION] === reason) {
    return {
      verdict: allow([
        ruled(
          'instance.break-glass-unused',
          `${who}: annotation ${BREAK_GLASS_ANNOTATION} was set by an earlier write and is ignored; to break a freeze with this write, set a new reason`,
        ),
      ]),
    };
  }
  const subject: Subject = {
    namespace: { name: input.object.metadata.namespace ?? '', labels: input.namespaceLabels },
    instanceLabels: input.object.metadata.labels ?? {},
  };
  // Freezes in force over the Instance, whatever the plan: break-glass is judged on the write.
  const { passes, refused } = breakGlassPolicies(input.policies, subject, input.user.groups, input.now);
  const frozen = [...passes, ...refused];
  if (reason.trim() === '') {
    return {
      verdict: deny({
        object: who,
        rule: 'instance.break-glass-forbidden',
        refused: `annotation ${BREAK_GLASS_ANNOTATION}`,
        why: 'it has no reason',
        fix: `write why: ${BREAK_GLASS_ANNOTATION}: "<ticket and reason>"`,
        code: 422,
        reason: 'Invalid',
      }),
    };
  }
  if (frozen.length === 0) {
    return {
      verdict: allow([
        ruled('instance.break-glass-unused', `${who}: annotation ${BREAK_GLASS_ANNOTATION} is ignored: no freeze holds this Instance now`),
      ]),
    };
  }
  if (passes.length === 0) {
    return {
      verdict: deny({
        object: who,
        rule: 'instance.break-glass-forbidden',
        refused: `break-glass by ${input.user.username}`,
        why: `${input.user.username} is in none of the breakGlass groups of ${refused.join(', ')}`,
        fix: `drop annotation ${BREAK_GLASS_ANNOTATION} and wait for the freeze to end, or ask a member of those groups to trigger`,
      }),
    };
  }
  const warnings = [
    ruled(
      'instance.break-glass-used',
      `${who}: BREAK-GLASS by ${input.user.username} passes the freeze of ${passes.join(', ')} ("${reason}"); this is recorded on the run, in an Event and a metric`,
    ),
  ];
  if (refused.length > 0)
    warnings.push(`${who}: the freeze of ${refused.join(', ')} still holds: ${input.user.username} is not in its breakGlass groups`);
  return { verdict: allow(warnings), stamp: { reason, policies: passes } };
}

/** A schedule of a plan that needs approval: refused (a tick cannot wait for a person). */
export function admitGovernedSchedules(input: {
  object: Instance;
  oldObject?: Instance;
  policies: readonly PlanPolicy[];
  namespaceLabels: Record<string, string>;
  now: number;
}): Verdict {
  const schedules = input.object.spec?.schedules ?? [];
  const before = new Map((input.oldObject?.spec?.schedules ?? []).map((s) => [s.name, s]));
  const subject: Subject = {
    namespace: { name: input.object.metadata.namespace ?? '', labels: input.namespaceLabels },
    instanceLabels: input.object.metadata.labels ?? {},
  };
  for (const s of schedules) {
    if (s.suspend === true) continue;
    const old = before.get(s.name);
    if (old && old.plan === s.plan && old.suspend !== true) continue; // judged when it was written
    const rule = governanceOf(input.policies, subject, s.plan, input.now).approval;
    if (!rule) continue;
    return deny({
      object: objectRef('Instance', input.object.metadata ?? {}),
      rule: 'instance.schedule-needs-approval',
      refused: `schedule ${s.name} of plan ${s.plan}`,
      why: `PlanPolicy ${rule.policies.join(', ')} requires ${rule.required} approval${rule.required === 1 ? '' : 's'} for every run of ${s.plan}, and a tick cannot wait for a person`,
      fix: `trigger ${s.plan} by hand (kubectl planwarden plan trigger) and have it approved, or ask a cluster admin to leave ${s.plan} out of the policy's spec.plans`,
    });
  }
  return allow();
}

/**
 * Warnings for the requests a write introduces that a PlanPolicy will hold: admitted, the run
 * waits for approvals or for a freeze to end. Decided by the controller's own governanceStep,
 * as for a request that has just begun to wait (no approvals yet; the write's break-glass,
 * as the mutating webhook stamped it, passes the freezes it names), so the write says what
 * the Instance's status will.
 */
export function governedRequestWarnings(input: {
  object: Instance;
  plans: readonly string[];
  requestedBy: string;
  policies: readonly PlanPolicy[];
  namespaceLabels: Record<string, string>;
  breakGlass?: { reason: string; policies: string[] };
  now: number;
}): Verdict {
  if (input.policies.length === 0) return allow();
  const instance = { name: input.object.metadata.name ?? '', namespace: input.object.metadata.namespace ?? '' };
  const subject: Subject = {
    namespace: { name: instance.namespace, labels: input.namespaceLabels },
    instanceLabels: input.object.metadata.labels ?? {},
  };
  const warnings: string[] = [];
  for (const plan of input.plans) {
    const governance = governanceOf(input.policies, subject, plan, input.now);
    const step = governanceStep({
      governance,
      request: { plan, trigger: undefined, requestedBy: input.requestedBy, instance },
      pending: undefined,
      digest: '',
      approvals: [],
      ...(input.breakGlass ? { breakGlass: input.breakGlass } : {}),
      newRunID: '',
      now: input.now,
    });
    if (step.kind !== 'wait') continue;
    const rule = governance.approval;
    warnings.push(
      step.reason === REASON_AWAITING_APPROVAL && rule
        ? `plan "${plan}" waits for ${counted(rule.required, 'approval')} (${groupsInWords(rule)}, not ${input.requestedBy}; ${rule.policies.join(', ')}) [${step.reason}]`
        : `${step.message} [${step.reason}]`,
    );
  }
  return allow(warnings);
}
