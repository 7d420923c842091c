// What an OperatorVersion's content is, in one short text: the digest of its spec. An
// Instance records the digest (and the OperatorVersion's uid) of the blueprint its last
// accepted trigger was judged against (annotation BLUEPRINT_ANNOTATION, written by the
// mutating webhook); the controller compares it with the blueprint it is about to run, so a
// blueprint changed since — in place, or deleted and made again under the same name — never
// runs for that Instance unjudged. Pure: no I/O.
import { createHash } from 'node:crypto';
import type { OperatorVersion, OperatorVersionSpec } from '../api/schema.ts';
import { canonicalJson } from '../json.ts';

/** On an Instance: `<OperatorVersion uid>/<digest>` of the blueprint its last accepted trigger was judged against. */
export const BLUEPRINT_ANNOTATION = 'planwarden.dev/blueprint';

/** `sha256:` and the first 16 hex digits of the SHA-256 of the spec's canonical JSON (key order does not count). */
export function blueprintDigest(spec: OperatorVersionSpec | undefined): string {
  return `sha256:${createHash('sha256').update(canonicalJson(spec ?? {})).digest('hex').slice(0, 16)}`;
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
