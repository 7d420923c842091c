// Admission of writes to `instances/status`: HyperFleet generation monotonicity for
// adapter reports, and root Available/Ready conditions that follow from those reports.
// The status webhooks run these functions for every writer but the controller, which runs
// them itself on each of its writes (sealInstanceStatus, at the end): one judge, two callers.
//
// Two halves, because a validating webhook can refuse but not rewrite:
// - `mutateInstanceStatus` (mutating webhook) restores the stored adapter entry when a
//   report says Available=Unknown (the seed's "discard Unknown"), stamps lastReportTime
//   on real reports, and recomputes root Available/Ready with aggregateRootConditions,
//   replacing only those two condition entries (PlanRunning and others stay as written).
//   Adapters can therefore write naively and still never erase a verdict.
// - `admitInstanceStatus` (validating webhook, runs after every mutation) refuses what
//   must never be stored: generations that go backwards or ahead of the spec, an Unknown
//   report that would still replace a stored verdict, and root Available/Ready that
//   disagree with the aggregation. With the mutation installed the last two never fire;
//   they exist so that a writer bypassing it (mutating webhook absent or skipped) cannot
//   erase a verdict or lie about availability.
// Only adapter entries that differ from the stored ones count as reports: a writer that
// carries the other adapters' entries unchanged (the controller writing plan status) is
// not judged for them. Removing an adapter entry is allowed (decommissioning an adapter).
// Root Available/Ready may be left out of a write (the mutation adds them); when present
// their status and observedGeneration must match the aggregation.
import { clipText, plural, quoted } from '../text.ts';
import { applyPatch, type Operation } from 'rfc6902';
import { jsonEqual } from '../json.ts';
import type { AdapterStatus, Condition, Instance } from '../api/schema.ts';
import { adapterAvailability, aggregateRootConditions, mergeAdapterReport } from './aggregate.ts';
import { findCondition } from './conditions.ts';
import { allow, combine, deny, type Allowed, type Denied, type Verdict } from '../verdict.ts';
import { objectRef } from '../refusal.ts';

export interface InstanceStatusContext {
  oldObject: Instance;
  object: Instance;
  /** ISO time of the request: lastReportTime and lastTransitionTime use it. */
  now: string;
  /** Who wrote: named in denials so a stale writer can be found. */
  userInfo?: { username: string; groups?: string[] };
}

const ROOT_TYPES = ['Available', 'Ready'] as const;

function instanceName(ctx: InstanceStatusContext): string {
  return objectRef('Instance', ctx.object.metadata);
}

function byWriter(ctx: InstanceStatusContext): string {
  return ctx.userInfo ? ` (written by ${ctx.userInfo.username})` : '';
}

function storedAdapter(ctx: InstanceStatusContext, name: string): AdapterStatus | undefined {
  return ctx.oldObject.status?.adapters?.find((a) => a.name === name);
}

export interface AdapterReport {
  index: number;
  report: AdapterStatus;
  stored: AdapterStatus | undefined;
}

/** Adapter entries of the write that differ from what is stored: the reports it carries. */
export function adapterReports(ctx: InstanceStatusContext): AdapterReport[] {
  return (ctx.object.status?.adapters ?? []).flatMap((report, index) => {
    const stored = storedAdapter(ctx, report.name);
    return stored !== undefined && jsonEqual(stored, report) ? [] : [{ index, report, stored }];
  });
}

/** The conditions every adapter report carries (HyperFleet): what it did, whether it works, how it is. */
export const MANDATORY_ADAPTER_CONDITIONS = ['Applied', 'Available', 'Health'] as const;

/** An adapter report carries Applied, Available and Health, each at the report's observedGeneration. */
export function adapterReportComplete(ctx: InstanceStatusContext): Verdict {
  const problems = adapterReports(ctx).flatMap(({ report }) => {
    const missing = MANDATORY_ADAPTER_CONDITIONS.filter((t) => !report.conditions.some((c) => c.type === t));
    const skewed = report.conditions
      .filter((c) => (MANDATORY_ADAPTER_CONDITIONS as readonly string[]).includes(c.type))
      .filter((c) => c.observedGeneration !== undefined && c.observedGeneration !== report.observedGeneration)
      .map((c) => `${c.type} at generation ${c.observedGeneration}`);
    const parts = [
      ...(missing.length > 0 ? [`no ${missing.join(', ')}`] : []),
      ...(skewed.length > 0 ? [`${skewed.join(', ')} while the report is for generation ${report.observedGeneration}`] : []),
    ];
    return parts.length > 0 ? [`"${report.name}": ${parts.join('; ')}`] : [];
  });
  if (problems.length === 0) return allow();
  return deny({
    rule: 'status.adapter-report-incomplete',
    code: 422,
    reason: 'Invalid',
    object: instanceName(ctx),
    refused: `${plural(problems.length, 'report', 'reports')} of adapter ${problems.join(', ')}${byWriter(ctx)}`,
    why: 'an adapter report carries the conditions Applied, Available and Health, each about the generation the report is for',
    fix: "write all three conditions (status Unknown where the adapter cannot tell) with observedGeneration equal to the report's",
  });
}

/** An adapter may not replace its report with one from an older generation. */
export function adapterGenerationNotRegressed(ctx: InstanceStatusContext): Verdict {
  const stale = adapterReports(ctx).filter((r) => r.stored !== undefined && r.report.observedGeneration < r.stored.observedGeneration);
  if (stale.length === 0) return allow();
  const detail = stale.map(
    (r) => `"${r.report.name}" for generation ${r.report.observedGeneration} (stored: ${r.stored?.observedGeneration})`,
  );
  return deny({
    rule: 'status.adapter-generation-regressed',
    code: 409,
    reason: 'Conflict',
    object: instanceName(ctx),
    refused: `${plural(stale.length, 'report', 'reports')} of adapter ${detail.join(', ')}${byWriter(ctx)}`,
    why: 'a report may not replace data the adapter already reported for a newer generation',
    fix:
      stale.length === 1
        ? `drop the stale report and report again for generation ${stale[0]?.stored?.observedGeneration} or later`
        : "drop the stale reports and report again for each adapter's stored generation or later",
  });
}

/** An adapter cannot have observed a generation the Instance has not reached. */
export function adapterGenerationNotAhead(ctx: InstanceStatusContext): Verdict {
  const generation = ctx.object.metadata.generation ?? 0;
  const ahead = adapterReports(ctx).filter((r) => r.report.observedGeneration > generation);
  if (ahead.length === 0) return allow();
  return deny({
    rule: 'status.adapter-generation-ahead',
    code: 422,
    reason: 'Invalid',
    object: instanceName(ctx),
    refused: `${plural(ahead.length, 'report', 'reports')} of adapter ${ahead
      .map((r) => `"${r.report.name}" at observedGeneration ${r.report.observedGeneration}`)
      .join(', ')}${byWriter(ctx)}`,
    why: `the Instance is at metadata.generation ${generation}, so no adapter can have observed a later one`,
    fix: 'report the metadata.generation of the Instance spec the adapter actually processed',
  });
}

/**
 * status.observedGeneration never goes backwards (and is never dropped once set). The CRD's
 * CEL transition rule refuses the same writes first, with this rule id in a fixed message
 * (shared/api/schema.ts); this check stays for a CRD that predates the rule and for a write
 * that drops the whole status, and its message names the values and the writer.
 */
export function observedGenerationNotRegressed(ctx: InstanceStatusContext): Verdict {
  const before = ctx.oldObject.status?.observedGeneration;
  const after = ctx.object.status?.observedGeneration;
  if (before === undefined || (after !== undefined && after >= before)) return allow();
  return deny({
    rule: 'status.observed-generation-regressed',
    code: 409,
    reason: 'Conflict',
    object: instanceName(ctx),
    refused:
      after === undefined ? `removal of status.observedGeneration${byWriter(ctx)}` : `status.observedGeneration ${after}${byWriter(ctx)}`,
    why: `status.observedGeneration is already ${before} and never decreases`,
    fix: `re-read the Instance and write status.observedGeneration ${before} or later`,
  });
}

/** status.observedGeneration cannot name a generation the spec has not reached. */
export function observedGenerationNotAhead(ctx: InstanceStatusContext): Verdict {
  const generation = ctx.object.metadata.generation ?? 0;
  const after = ctx.object.status?.observedGeneration;
  if (after === undefined || after <= generation || after === ctx.oldObject.status?.observedGeneration) return allow();
  return deny({
    rule: 'status.observed-generation-ahead',
    code: 422,
    reason: 'Invalid',
    object: instanceName(ctx),
    refused: `status.observedGeneration ${after}${byWriter(ctx)}`,
    why: `the Instance is at metadata.generation ${generation}`,
    fix: 'write the metadata.generation of the spec that was actually observed',
  });
}

/** An Available=Unknown report does not replace the stored report (nor its lastReportTime). */
export function unknownReportKeepsStored(ctx: InstanceStatusContext): Verdict {
  const unknown = adapterReports(ctx).filter((r) => r.stored !== undefined && adapterAvailability(r.report) === 'Unknown');
  if (unknown.length === 0) return allow();
  return deny({
    rule: 'status.adapter-unknown-report',
    code: 403,
    reason: 'Forbidden',
    object: instanceName(ctx),
    refused: `${plural(unknown.length, 'report', 'reports')} with Available=Unknown from adapter ${quoted(
      unknown.map((r) => r.report.name),
    )}${byWriter(ctx)}`,
    why: 'an Unknown report does not replace the stored verdict nor move its lastReportTime',
    fix: 'leave the stored adapter entry unchanged while work is in progress and report again with Available=True or False',
  });
}

function showCondition(c: Pick<Condition, 'type' | 'status' | 'observedGeneration'>): string {
  return c.observedGeneration === undefined ? `${c.type}=${c.status}` : `${c.type}=${c.status} at ${c.observedGeneration}`;
}

/** Root Available/Ready, when written, say what the adapters' reports imply. */
export function rootConditionsFollowAdapters(ctx: InstanceStatusContext): Verdict {
  const expected = aggregateRootConditions({
    generation: ctx.object.metadata.generation ?? 0,
    adapters: ctx.object.status?.adapters ?? [],
    previous: ctx.oldObject.status?.conditions ?? [],
    now: ctx.now,
  });
  const written = ctx.object.status?.conditions;
  const wrong = ROOT_TYPES.flatMap((type) => {
    const want = findCondition(expected, type);
    const got = findCondition(written, type);
    if (want === undefined || got === undefined) return [];
    return got.status === want.status && got.observedGeneration === want.observedGeneration ? [] : [{ got, want }];
  });
  if (wrong.length === 0) return allow();
  return deny({
    rule: 'status.root-condition-mismatch',
    code: 422,
    reason: 'Invalid',
    object: instanceName(ctx),
    refused: `root condition ${wrong.map((w) => showCondition(w.got)).join(', ')}${byWriter(ctx)}`,
    why: `the adapters' reports give ${wrong
      .map((w) => `${showCondition(w.want)} (${w.want.reason ?? ''}: ${w.want.message ?? ''})`)
      .join('; ')}`,
    fix: 'omit Available/Ready (planwarden computes them from status.adapters) or write the values given',
  });
}

/** The validating webhook for instances/status. */
export function admitInstanceStatus(ctx: InstanceStatusContext): Verdict {
  return combine([
    adapterGenerationNotRegressed(ctx),
    adapterGenerationNotAhead(ctx),
    observedGenerationNotRegressed(ctx),
    observedGenerationNotAhead(ctx),
    unknownReportKeepsStored(ctx),
    adapterReportComplete(ctx),
    rootConditionsFollowAdapters(ctx),
  ]);
}

/**
 * The mutating webhook for instances/status: a JSON patch (against the written object)
 * that keeps stored adapter verdicts over Unknown reports, stamps lastReportTime, and
 * sets root Available/Ready from the aggregation. Never denies.
 */
export function mutateInstanceStatus(ctx: InstanceStatusContext): Allowed {
  const patch: Operation[] = [];
  const warnings: string[] = [];
  const written = ctx.object.status?.adapters ?? [];
  const reports = new Map(adapterReports(ctx).map((r) => [r.index, r]));
  const adapters = written.map((entry, index) => {
    const r = reports.get(index);
    if (r === undefined) return entry;
    const merged = mergeAdapterReport(r.stored, r.report, ctx.now);
    if (r.stored !== undefined && merged === r.stored) {
      warnings.push(
        clipText(`adapter "${entry.name}" reported Available=Unknown: kept its report of generation ${r.stored.observedGeneration}`),
      );
    }
    if (!jsonEqual(merged, entry)) patch.push({ op: 'replace', path: `/status/adapters/${index}`, value: merged });
    return merged;
  });

  const roots = aggregateRootConditions({
    generation: ctx.object.metadata.generation ?? 0,
    adapters,
    previous: ctx.oldObject.status?.conditions ?? [],
    now: ctx.now,
  });
  const conditions = ctx.object.status?.conditions;
  if (ctx.object.status === undefined) {
    patch.push({ op: 'add', path: '/status', value: { conditions: roots } });
  } else if (conditions === undefined) {
    patch.push({ op: 'add', path: '/status/conditions', value: roots });
  } else {
    for (const root of roots) {
      const index = conditions.findIndex((c) => c.type === root.type);
      if (index < 0) patch.push({ op: 'add', path: '/status/conditions/-', value: root });
      else if (!jsonEqual(conditions[index], root)) patch.push({ op: 'replace', path: `/status/conditions/${index}`, value: root });
    }
  }
  return allow(warnings, patch);
}

/** A status write as the status webhooks would leave it: mutated and allowed, or refused. */
export type SealedStatusWrite = { ok: true; object: Instance; warnings: string[] } | { ok: false; denied: Denied };

/**
 * The status webhooks' answer to a write, computed in the writer's process: the mutation's
 * patch applied to `ctx.object`, then the validation of that result — the order the API
 * server calls them in, the same functions, at `ctx.now`. The controller seals every status
 * write of its own with this, and the status webhook configurations do not send the
 * controller's writes (their matchConditions): its writes get what anyone's get, by
 * construction, without two HTTPS call-outs each (docs/admission.md, "Writes the webhooks
 * are not sent"). A sealed write is a fixpoint: sending it to the webhooks at the same time
 * gives no patch, no warning and "allowed" (test/unit/shared/conditions/statusAdmission.test.ts).
 */
export function sealInstanceStatus(ctx: InstanceStatusContext): SealedStatusWrite {
  const mutation = mutateInstanceStatus(ctx);
  let object = ctx.object;
  if (mutation.patch.length > 0) {
    object = structuredClone(ctx.object);
    const failed = applyPatch(object, mutation.patch).find((e) => e !== null);
    if (failed) throw new Error(`status mutation of ${instanceName(ctx)} does not apply: ${failed.message}`);
  }
  const verdict = admitInstanceStatus({ ...ctx, object });
  if (!verdict.allowed) return { ok: false, denied: verdict };
  return { ok: true, object, warnings: [...mutation.warnings, ...verdict.warnings] };
}
