// What an OperatorVersion's content is, in one short text: the digest of its spec. An
// Instance records the digest (and the OperatorVersion's uid) of the blueprint its last
// accepted trigger was judged against (annotation BLUEPRINT_ANNOTATION, written by the
// mutating webhook); the controller compares it with the blueprint it is about to run, so a
// blueprint changed since — in place, or deleted and made again under the same name — never
// runs for that Instance unjudged. Pure: no I/O.
import { createHash } from 'node:crypto';
import type { Instance, OperatorVersion, OperatorVersionSpec } from '../api/schema.ts';
import { canonicalJson, deeplyFrozen } from '../json.ts';

/** On an Instance: `<OperatorVersion uid>/<digest>` of the blueprint its last accepted trigger was judged against. */
export const BLUEPRINT_ANNOTATION = 'planwarden.dev/blueprint';

/**
 * Digests of specs that can no longer change: frozen all the way down (the webhook's
 * OperatorVersion cache deep-freezes what it holds, webhook/operatorVersionCache.ts), so the
 * digest computed once stays true. The mutating webhook records the digest on every trigger;
 * hashing the canonical JSON each time was its largest cost after parsing the review.
 */
const frozenDigests = new WeakMap<object, string>();

/** `sha256:` and the first 16 hex digits of the SHA-256 of the spec's canonical JSON (key order does not count). */
export function blueprintDigest(spec: OperatorVersionSpec | undefined): string {
  const known = spec === undefined ? undefined : frozenDigests.get(spec);
  if (known !== undefined) return known;
  const digest = `sha256:${createHash('sha256')
    .update(canonicalJson(spec ?? {}))
    .digest('hex')
    .slice(0, 16)}`;
  if (spec !== undefined && deeplyFrozen(spec)) frozenDigests.set(spec, digest);
  return digest;
}

export interface BlueprintRecord {
  uid: string;
  digest: string;
}

/** The record of `ov` as the annotation holds it. */
export function blueprintRecordOf(ov: OperatorVersion): string {
  return `${ov.metadata.uid ?? ''}/${blueprintDigest(ov.spec)}`;
}

export function parseBlueprintRecord(text: string | undefined): BlueprintRecord | undefined {
  if (typeof text !== 'string') return undefined;
  const slash = text.lastIndexOf('/');
  if (slash < 0) return undefined;
  return { uid: text.slice(0, slash), digest: text.slice(slash + 1) };
}

/**
 * How `ov` differs from what the Instance recorded: undefined when it is the same blueprint
 * (or nothing was recorded: an Instance written before records were kept), else what changed
 * in words ("its spec changed (sha256:… → sha256:…)" or "it was deleted and created again
 * (uid … → …)").
 */
export function blueprintChange(recorded: string | undefined, ov: OperatorVersion): string | undefined {
  const r = parseBlueprintRecord(recorded);
  if (!r) return undefined;
  const uid = ov.metadata.uid ?? '';
  const digest = blueprintDigest(ov.spec);
  if (r.uid !== uid) return `it was deleted and created again (uid ${r.uid || '?'} → ${uid || '?'}; spec ${r.digest} → ${digest})`;
  if (r.digest !== digest) return `its spec changed (${r.digest} → ${digest})`;
  return undefined;
}

/** PlanRunning reason of a run held because its blueprint changed since the last accepted trigger. */
export const REASON_BLUEPRINT_CHANGED = 'BlueprintChanged';

/**
 * Whether the controller must hold a run of `inst` with `ov`: the Instance names a
 * ServiceAccount (the default one needs no right, so any blueprint may run as it), recorded
 * the blueprint of its last accepted trigger, and `ov` is no longer that blueprint. Then the
 * message of the hold: what changed and what to do. Undefined: run.
 */
export function blueprintHold(inst: Instance, ov: OperatorVersion): { reason: string; message: string } | undefined {
  const sa = inst.spec.serviceAccountName;
  if (!sa) return undefined;
  const recorded = inst.metadata.annotations?.[BLUEPRINT_ANNOTATION];
  const change = blueprintChange(recorded, ov);
  if (!change) return undefined;
  const ns = inst.metadata.namespace ?? '';
  return {
    reason: REASON_BLUEPRINT_CHANGED,
    message:
      `OperatorVersion "${ov.metadata.name ?? ''}" changed since this Instance's last accepted trigger (${change}), and its plans run as ServiceAccount "${sa}": ` +
      `no plan runs the new templates until a trigger judges them — trigger the plan again (a new spec.planExecution id, e.g. \`kubectl planwarden plan trigger\`) ` +
      `as a user who may impersonate serviceaccounts/${sa} in namespace "${ns}"`,
  };
}
