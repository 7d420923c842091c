// Change governance (PlanPolicy, PlanApproval), the pure parts: which policies govern a
// plan of an Instance, how several combine (the strictest approval count, every freeze),
// which approvals count for a waiting run, and what a governed request does now — wait for
// approvals, wait for a freeze to end, end REJECTED or EXPIRED, or go on to the Instance's
// own maintenance. The controller decides with `governanceStep`; the webhook refuses with
// `approvalProblem` and `breakGlassPolicies`; the CLI shows `governanceOf`. One function
// each, so that what the webhook admits and what the controller counts agree.
import type { ApprovalDecision, PendingApproval, PlanPolicy, PlanPolicySpec } from '../api/schema.ts';
import { parseGoDuration, parsePause } from '../calendar.ts';
import { matchesSelector } from '../labelSelector.ts';
import type { RuleId } from '../ruleIds.ts';

/** The plan no policy may govern: deletion must never hang on a person. */
export const UNGOVERNABLE_PLAN = 'cleanup';
/** A trigger's annotation: pass the freezes the writer may break, for this reason. */
export const BREAK_GLASS_ANNOTATION = 'planwarden.dev/break-glass';

/** PlanRunning reasons (and fleet Waiting reasons) of a governed request not started. */
export const REASON_AWAITING_APPROVAL = 'AwaitingApproval';
export const REASON_FROZEN = 'Frozen';

export interface Subject {
  namespace: { name: string; labels?: Readonly<Record<string, string>> };
  instanceLabels?: Readonly<Record<string, string>>;
}

/** Whether `spec` governs `plan` (cleanup never). */
export function governsPlan(spec: PlanPolicySpec, plan: string): boolean {
  if (plan === UNGOVERNABLE_PLAN) return false;
  return spec.plans === undefined || spec.plans.includes(plan);
}

/** Whether `spec`'s selectors match the Instance (an absent selector matches everything). */
export function selects(spec: PlanPolicySpec, subject: Subject): boolean {
  return (
    matchesSelector(subject.namespace.labels ?? {}, spec.namespaceSelector) &&
    matchesSelector(subject.instanceLabels ?? {}, spec.instanceSelector)
  );
}

export interface ActiveFreeze {
  policy: string;
  /** When it ends (ms); undefined: until the policy changes. */
  until?: number;
  reason?: string;
  breakGlassGroups: string[];
}

export interface ApprovalRule {
  /** The strictest count among the policies. */
  required: number;
  /** Each policy's approver groups that has some: an approver must be in one of each. */
  groupSets: string[][];
  /** The policies asking for approval, sorted. */
  policies: string[];
  /** The shortest timeout (ms), if any policy has one. */
  timeoutMs?: number;
}

export interface Governance {
  approval?: ApprovalRule;
  freezes: ActiveFreeze[];
}

/** A freeze in force at `now`, or undefined (past, absent, or a pausedUntil that is not valid). */
export function activeFreeze(policy: PlanPolicy, now: number): ActiveFreeze | undefined {
  const f = policy.spec.freeze;
  if (!f) return undefined;
  const pause = parsePause(f.pausedUntil);
  if (pause.kind === 'none' || pause.kind === 'invalid') return undefined;
  if (pause.kind === 'until' && pause.at <= now) return undefined;
  return {
    policy: policy.metadata.name ?? '',
    ...(pause.kind === 'until' ? { until: pause.at } : {}),
    ...(f.reason ? { reason: f.reason } : {}),
    breakGlassGroups: [...(f.breakGlass?.groups ?? [])],
  };
}

/** The policies selecting the Instance, by name. */
export function policiesSelecting(policies: readonly PlanPolicy[], subject: Subject): PlanPolicy[] {
  return policies.filter((p) => selects(p.spec, subject)).sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
}

/** What governs `plan` of the Instance at `now`: every policy selecting it combined. */
export function governanceOf(policies: readonly PlanPolicy[], subject: Subject, plan: string, now: number): Governance {
  const out: Governance = { freezes: [] };
  for (const p of policiesSelecting(policies, subject)) {
    if (!governsPlan(p.spec, plan)) continue;
    const name = p.metadata.name ?? '';
    const a = p.spec.approval;
    if (a) {
      const rule: ApprovalRule = out.approval ?? { required: 0, groupSets: [], policies: [] };
      rule.required = Math.max(rule.required, a.required);
      if (a.approverGroups && a.approverGroups.length > 0) rule.groupSets.push([...a.approverGroups].sort());
      rule.policies.push(name);
      const t = a.timeout ? parseGoDuration(a.timeout) : undefined;
      if (t !== undefined && t > 0 && (rule.timeoutMs === undefined || t < rule.timeoutMs)) rule.timeoutMs = t;
      out.approval = rule;
    }
    const freeze = activeFreeze(p, now);
    if (freeze) out.freezes.push(freeze);
  }
  return out;
}

/** Whether a person in `groups` may approve under `rule` (in one group of every policy that names some). */
export function qualifies(rule: Pick<ApprovalRule, 'groupSets'>, groups: readonly string[]): boolean {
  return rule.groupSets.every((set) => set.some((g) => groups.includes(g)));
}

/** The approver groups in words: "sre" or "sre, and one of dba, ops". */
export function groupsInWords(rule: Pick<ApprovalRule, 'groupSets'>): string {
  if (rule.groupSets.length === 0) return 'anyone who may create PlanApprovals here';
  return rule.groupSets.map((s) => (s.length === 1 ? s[0]! : `one of ${s.join(', ')}`)).join(', and ');
}

/** One PlanApproval, as the controller reads it. */
export interface ApprovalRecord {
  name: string;
  runID: string;
  decision: ApprovalDecision;
  digest: string;
  approver: string;
  groups: readonly string[];
  comment?: string;
  /** When it was created (ms): the first decision of an approver is theirs. */
  at: number;
}

export interface ApprovalTally {
  /** Distinct approvers whose Approve counts (for this run, this digest), in order of time. */
  approvedBy: string[];
  /** The first counting Reject, if any. */
  rejectedBy?: { approver: string; comment?: string };
  /** Approvals for this run that do not count because they are for another digest. */
  stale: number;
}

/**
 * Which decisions count for the run `pending` names: for its runID, by a person other than
 * the requester, in the approver groups, the first decision of each approver; an Approve
 * only for the current digest (an older one is `stale`), a Reject for any digest (it says no
 * to the run, whatever changed since).
 */
export function tally(
  pending: Pick<PendingApproval, 'runID' | 'digest' | 'requestedBy'>,
  rule: Pick<ApprovalRule, 'groupSets'>,
  records: readonly ApprovalRecord[],
): ApprovalTally {
  const out: ApprovalTally = { approvedBy: [], stale: 0 };
  const seen = new Set<string>();
  for (const r of [...records].sort((a, b) => a.at - b.at || (a.name < b.name ? -1 : 1))) {
    if (r.runID !== pending.runID || r.approver === '' || seen.has(r.approver)) continue;
    seen.add(r.approver);
    if (r.approver === pending.requestedBy || !qualifies(rule, r.groups)) continue;
    if (r.decision === 'Reject') {
      out.rejectedBy ??= { approver: r.approver, ...(r.comment ? { comment: r.comment } : {}) };
    } else if (r.digest !== pending.digest) {
      out.stale++;
    } else {
      out.approvedBy.push(r.approver);
    }
  }
  return out;
}

/** The request a governed step judges. */
export interface GovernedRequest {
  plan: string;
  trigger: PendingApproval['trigger'];
  /** The id its run will have when the trigger names one (a manual trigger's id). */
  triggerRunID?: string;
  requestedBy: string;
  /** The Instance asked of, for the approve command the wait message gives. */
  instance: { name: string; namespace: string };
}

export interface GovernanceInput {
  governance: Governance;
  request: GovernedRequest;
  /** status.pendingApproval as stored. */
  pending: PendingApproval | undefined;
  /** The digest of what the run would apply now (shared/plan/runDigest.ts). */
  digest: string;
  approvals: readonly ApprovalRecord[];
  /** The freezes the request's break-glass passes (from the requester stamp), if any. */
  breakGlass?: { reason: string; policies: readonly string[] };
  /** A fresh run id, used when a new request begins to wait. */
  newRunID: string;
  now: number;
}

export type GovernanceStep =
  /** Nothing holds it: on to maintenance and the start. */
  | { kind: 'go'; pending?: undefined; approvedBy?: string[]; runID?: string; breakGlass?: { reason: string; policies: string[] } }
  /** Waiting: for approvals, or (approved or not needing them) for a freeze to end. */
  | { kind: 'wait'; pending?: PendingApproval; reason: string; message: string; until?: number }
  /** Ends without running: REJECTED or EXPIRED. */
  | { kind: 'end'; state: 'REJECTED' | 'EXPIRED'; runID: string; message: string; by?: string[] };

const iso = (t: number) => new Date(t).toISOString();

/**
 * What a governed request does now. Approvals first (a run that needs them waits, with its
 * id and digest recorded, until enough distinct non-requesters in the approver groups
 * approved its current digest; a Reject ends it REJECTED, the timeout EXPIRED), then every
 * freeze (held until it ends, unless the request's break-glass names it); then `go`.
 */
export function governanceStep(input: GovernanceInput): GovernanceStep {
  const { governance, request, now } = input;
  const rule = governance.approval;
  let pending: PendingApproval | undefined;
  let approvedBy: string[] | undefined;
  if (rule) {
    const stored =
      input.pending?.plan === request.plan && (request.triggerRunID === undefined || input.pending.runID === request.triggerRunID)
        ? input.pending
        : undefined;
    const runID = stored?.runID ?? request.triggerRunID ?? input.newRunID;
    const requestedAt = stored?.requestedAt ?? iso(now);
    const expiresAt = rule.timeoutMs === undefined ? undefined : Date.parse(requestedAt) + rule.timeoutMs;
    const base: PendingApproval = {
      plan: request.plan,
      runID,
      ...(request.trigger ? { trigger: request.trigger } : {}),
      requestedBy: request.requestedBy,
      requestedAt,
      digest: input.digest,
      required: rule.required,
      ...(rule.groupSets.length > 0 ? { approverGroups: [...new Set(rule.groupSets.flat())].sort() } : {}),
      policies: [...rule.policies],
      ...(expiresAt !== undefined ? { expiresAt: iso(expiresAt) } : {}),
    };
    const t = tally(base, rule, input.approvals);
    if (t.rejectedBy) {
      const why = t.rejectedBy.comment ? `: ${t.rejectedBy.comment}` : '';
      return { kind: 'end', state: 'REJECTED', runID, by: [t.rejectedBy.approver], message: `rejected by ${t.rejectedBy.approver}${why}` };
    }
    pending = { ...base, ...(t.approvedBy.length > 0 ? { approvedBy: t.approvedBy } : {}) };
    if (t.approvedBy.length < rule.required) {
      if (expiresAt !== undefined && now >= expiresAt) {
        return {
          kind: 'end',
          state: 'EXPIRED',
          runID,
          message: `not approved within the policy's timeout (${t.approvedBy.length} of ${rule.required} approvals by ${iso(expiresAt)}; ${rule.policies.join(', ')})`,
        };
      }
      const stale =
        t.stale > 0
          ? `; ${t.stale} earlier ${t.stale === 1 ? 'approval is' : 'approvals are'} for another digest and no longer count (the OperatorVersion or the values changed)`
          : '';
      const changed =
        stored && stored.digest !== input.digest
          ? `; what the run would apply changed since it began to wait (digest ${input.digest})`
          : '';
      return {
        kind: 'wait',
        pending,
        reason: REASON_AWAITING_APPROVAL,
        message: `plan "${request.plan}" run ${runID} awaits approval: ${t.approvedBy.length} of ${rule.required} approvals; approvers: ${groupsInWords(rule)}, not ${request.requestedBy} (${rule.policies.join(', ')})${stale}${changed}. Approve with: kubectl planwarden plan approve --instance ${request.instance.name} -n ${request.instance.namespace} --run ${runID}`,
        ...(expiresAt !== undefined ? { until: expiresAt } : {}),
      };
    }
    approvedBy = t.approvedBy;
  }
  const broken = new Set(input.breakGlass?.policies ?? []);
  const holding = governance.freezes.filter((f) => !broken.has(f.policy));
  if (holding.length > 0) {
    const ends = holding.map((f) => f.until);
    const until = ends.some((e) => e === undefined) ? undefined : Math.max(...(ends as number[]));
    const what = holding
      .map(
        (f) =>
          `${f.policy}${f.reason ? ` (${f.reason})` : ''} ${f.until === undefined ? 'until the freeze is lifted' : `until ${iso(f.until)}`}`,
      )
      .join('; ');
    const approved = approvedBy ? `approved by ${approvedBy.join(', ')}; ` : '';
    return {
      kind: 'wait',
      ...(pending ? { pending } : {}),
      reason: REASON_FROZEN,
      message: `plan "${request.plan}" is held: ${approved}frozen by ${what}`,
      ...(until !== undefined ? { until } : {}),
    };
  }
  const used = governance.freezes.filter((f) => broken.has(f.policy)).map((f) => f.policy);
  return {
    kind: 'go',
    ...(approvedBy ? { approvedBy, runID: pending!.runID } : {}),
    ...(used.length > 0 && input.breakGlass ? { breakGlass: { reason: input.breakGlass.reason, policies: used } } : {}),
  };
}

// --- admission ---

/** Why a PlanApproval may not be created, or undefined. Pure: the webhook brings the facts. */
export type ApprovalProblem = { rule: Extract<RuleId, `approval.${string}`>; message: string; remedy: string };

export function approvalProblem(input: {
  pending: PendingApproval | undefined;
  instance: string;
  runID: string;
  decision: ApprovalDecision;
  digest: string;
  approver: string;
  groups: readonly string[];
  /** Decisions this approver already made on the run. */
  earlier: number;
}): ApprovalProblem | undefined {
  const p = input.pending;
  if (!p || p.runID !== input.runID) {
    return {
      rule: 'approval.not-awaiting',
      message: `Instance ${input.instance} has no run ${input.runID} awaiting approval${p ? ` (the run awaiting approval is ${p.runID}, plan ${p.plan})` : ''}`,
      remedy: 'list what awaits approval with: kubectl planwarden plan pending',
    };
  }
  if (input.approver === p.requestedBy) {
    return {
      rule: 'approval.self',
      message: `${input.approver} asked for run ${p.runID}: the requester may not decide on their own run`,
      remedy: 'ask another approver; to withdraw your own request, abort it (kubectl planwarden plan abort)',
    };
  }
  const groupSets = (p.approverGroups?.length ?? 0) > 0 ? [p.approverGroups!] : [];
  if (!qualifies({ groupSets }, input.groups)) {
    return {
      rule: 'approval.not-approver',
      message: `${input.approver} is in none of the approver groups (${p.approverGroups!.join(', ')}) of ${p.policies.join(', ')}`,
      remedy: 'ask a member of those groups',
    };
  }
  if (input.earlier > 0) {
    return {
      rule: 'approval.already-decided',
      message: `${input.approver} already decided on run ${p.runID}; one decision per approver`,
      remedy: 'ask another approver',
    };
  }
  if (input.decision === 'Approve' && input.digest !== p.digest) {
    return {
      rule: 'approval.stale-digest',
      message: `digest ${input.digest} is not what run ${p.runID} would apply now (${p.digest}): the OperatorVersion or the values changed since it was previewed`,
      remedy: `preview again and approve what runs: kubectl planwarden plan approve --instance ${input.instance} --run ${p.runID}`,
    };
  }
  return undefined;
}

/**
 * The freezes a break-glass by a person in `groups` passes: every freeze in force over the
 * Instance whose breakGlass groups hold one of theirs. `refused` lists those in force they
 * may not break.
 */
export function breakGlassPolicies(
  policies: readonly PlanPolicy[],
  subject: Subject,
  groups: readonly string[],
  now: number,
): { passes: string[]; refused: string[] } {
  const passes: string[] = [];
  const refused: string[] = [];
  for (const p of policiesSelecting(policies, subject)) {
    const f = activeFreeze(p, now);
    if (!f) continue;
    if (f.breakGlassGroups.some((g) => groups.includes(g))) passes.push(f.policy);
    else refused.push(f.policy);
  }
  return { passes, refused };
}
