// The blueprint an Instance's accepted trigger was judged against, recorded on the Instance
// (annotation planwarden.dev/blueprint: `<OperatorVersion uid>/<spec digest>`,
// shared/blueprint/digest.ts) by the mutating webhook at creation and at every write that
// introduces a run (a manual trigger, a parameter change, an upgrade). The controller holds
// the runs of an Instance that names a ServiceAccount when its OperatorVersion is no longer
// the recorded one (BlueprintChanged); the trigger that records the new one is judged here:
// its writer must be allowed to act as that ServiceAccount, as whoever wrote the change had
// to be (ov.blueprint-rights) — the OperatorVersion may have changed unjudged (an Instance
// created while it was being edited; content stored before planwarden judged it).
import type { Operation } from 'rfc6902';
import type { Instance, OperatorVersion } from '../../shared/api/schema.ts';
import { BLUEPRINT_ANNOTATION, blueprintChange, blueprintRecordOf } from '../../shared/blueprint/digest.ts';
import type { AccessAnswer } from '../../shared/kube/access.ts';
import { jsonEqual } from '../../shared/json.ts';
import { objectRef } from '../../shared/refusal.ts';
import { clipText } from '../../shared/text.ts';
import { allow, deny, type Verdict } from '../../shared/verdict.ts';
import { subjectFlag } from './tenancy.ts';
import type { RuleId } from '../../shared/ruleIds.ts';

export const BLUEPRINT_RECORD_RULES = {
  forbidden: 'instance.blueprint-changed-forbidden',
  unchecked: 'instance.blueprint-changed-unchecked',
} as const satisfies Record<string, RuleId>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether this write records the blueprint: a creation, or an update that introduces a run (trigger, parameter change, upgrade). */
export function recordsBlueprint(operation: string, object: Instance | undefined, oldObject: Instance | undefined): boolean {
  if (operation === 'CREATE') return true;
  if (operation !== 'UPDATE') return false;
  const spec: unknown = object?.spec;
  const old: unknown = oldObject?.spec;
  if (!isObject(spec) || !isObject(old)) return false;
  const name = (s: Record<string, unknown>) => (isObject(s.operatorVersion) ? s.operatorVersion.name : undefined);
  const trigger = (s: Record<string, unknown>) => (isObject(s.planExecution) ? [s.planExecution.planName, s.planExecution.id] : undefined);
  return name(spec) !== name(old) || !jsonEqual(trigger(spec), trigger(old)) || !jsonEqual(spec.parameters ?? {}, old.parameters ?? {});
}

const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
export const BLUEPRINT_PATH = `/metadata/annotations/${pointer(BLUEPRINT_ANNOTATION)}`;

/**
 * The patch that records `ov` on the Instance, after `earlier` (the mutation's other
 * operations, which may have added the annotations object). Nothing when it is recorded already.
 */
export function blueprintRecordPatch(object: Instance, ov: OperatorVersion | undefined, earlier: readonly Operation[]): Operation[] {
  if (!ov?.metadata.uid) return [];
  const value = blueprintRecordOf(ov);
  const metadata: unknown = object.metadata;
  const annotations: unknown = isObject(metadata) ? metadata.annotations : undefined;
  if (isObject(annotations) && annotations[BLUEPRINT_ANNOTATION] === value) return [];
  const hasObject = isObject(annotations) || earlier.some((op) => op.op === 'add' && op.path === '/metadata/annotations');
  return hasObject
    ? [{ op: 'add', path: BLUEPRINT_PATH, value }]
    : [{ op: 'add', path: '/metadata/annotations', value: { [BLUEPRINT_ANNOTATION]: value } }];
}

/**
 * On a write that does not record the blueprint (a metadata-only write, a spec change that
 * introduces no run), the record as stored: a client's own value is replaced, a removal
 * restored. Otherwise a metadata-only write could set the record of a changed blueprint and
 * lift the controller's BlueprintChanged hold without the judgement a trigger gets.
 */
export function blueprintRestorePatch(operation: string, object: Instance | undefined, oldObject: Instance | undefined): Operation[] {
  if (operation !== 'UPDATE' || recordsBlueprint(operation, object, oldObject)) return [];
  const annotationsOf = (o: Instance | undefined): unknown => (isObject(o?.metadata) ? o.metadata.annotations : undefined);
  const valueOf = (a: unknown) => (isObject(a) && typeof a[BLUEPRINT_ANNOTATION] === 'string' ? a[BLUEPRINT_ANNOTATION] : undefined);
  const now = annotationsOf(object);
  const stored = valueOf(annotationsOf(oldObject));
  const present = isObject(now) && Object.hasOwn(now, BLUEPRINT_ANNOTATION);
  if (valueOf(now) === stored && (present || stored === undefined)) return [];
  if (stored === undefined) return present ? [{ op: 'remove', path: BLUEPRINT_PATH }] : [];
  return isObject(now)
    ? [{ op: 'add', path: BLUEPRINT_PATH, value: stored }]
    : [{ op: 'add', path: '/metadata/annotations', value: { [BLUEPRINT_ANNOTATION]: stored } }];
}

/**
 * The ServiceAccount whose right this write needs because it accepts a changed blueprint: an
 * update that records one (recordsBlueprint), keeps the OperatorVersion's name (an upgrade is
 * judged by instance.service-account-not-allowed) and names a ServiceAccount, when the
 * OperatorVersion is no longer the one recorded. Undefined: nothing to ask.
 */
export function changedBlueprintAccount(
  operation: string,
  object: Instance,
  oldObject: Instance | undefined,
  ov: OperatorVersion | undefined,
): string | undefined {
  if (operation !== 'UPDATE' || !ov || !recordsBlueprint(operation, object, oldObject)) return undefined;
  const sa = object.spec?.serviceAccountName;
  if (!sa || oldObject?.spec?.operatorVersion?.name !== object.spec.operatorVersion.name) return undefined;
  return blueprintChange(oldObject?.metadata?.annotations?.[BLUEPRINT_ANNOTATION], ov) ? sa : undefined;
}

export interface ChangedBlueprintContext {
  object: Instance;
  oldObject?: Instance;
  namespace: string;
  user: string;
  operatorVersion: OperatorVersion;
  serviceAccount: string;
  access?: AccessAnswer;
}

export function admitChangedBlueprint(ctx: ChangedBlueprintContext): Verdict {
  const access: AccessAnswer = ctx.access ?? { kind: 'unknown', reason: 'it was not asked' };
  if (access.kind === 'allowed') return allow();
  const ns = ctx.namespace;
  const sa = ctx.serviceAccount;
  const object = objectRef('Instance', { ...ctx.object.metadata, namespace: ns });
  const change = blueprintChange(ctx.oldObject?.metadata?.annotations?.[BLUEPRINT_ANNOTATION], ctx.operatorVersion) ?? 'it changed';
  const what = `OperatorVersion "${ctx.operatorVersion.metadata.name ?? ''}" changed since this Instance's last accepted trigger (${change})`;
  if (access.kind === 'denied') {
    return deny({
      rule: BLUEPRINT_RECORD_RULES.forbidden,
      code: 403,
      reason: 'Forbidden',
      object,
      refused: 'this trigger',
      why: `${what}, its plans run as ServiceAccount "${sa}", and user "${ctx.user}" may not impersonate it in namespace "${ns}": accepting the new templates would let them do what "${ctx.user}" may not`,
      fix:
        `ask someone who may act as "${sa}" (edit, admin) to trigger it, or get the right: kubectl -n ${ns} create role act-as-${sa} --verb=impersonate --resource=serviceaccounts --resource-name=${sa}; ` +
        `kubectl -n ${ns} create rolebinding act-as-${sa} --role=act-as-${sa} ${subjectFlag(ctx.user)}`,
    });
  }
  return deny({
    rule: BLUEPRINT_RECORD_RULES.unchecked,
    code: 503,
    reason: 'ServiceUnavailable',
    object,
    refused: 'this trigger',
    why: `${what}, and whether user "${ctx.user}" may impersonate ServiceAccount "${sa}" could not be checked (${clipText(access.reason, 160)})`,
    fix: 'try again; the webhook needs create on subjectaccessreviews.authorization.k8s.io and the apiserver must answer in time',
  });
}
