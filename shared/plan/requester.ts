// Who asked for a run. The mutating Instance webhook stamps, in one annotation, the user of
// each admission request that introduced a request (the creation, whose deploy it asks for; a
// manual trigger, a parameter change, an upgrade) with the identity of what it introduced; any
// other write that changes the stamp gets the stored one back. The controller names that user
// on the run it starts only when the stamp belongs to the very request it starts; otherwise the
// run says `unknown`. Runs nobody wrote for say what started them: drift, delete (and create,
// for an Instance created without the stamp).
//
// The stamp is never read from a value the client chose: the webhook computes the whole
// annotation from the stored one and the admission request's userInfo.
import { comparedParameters } from '../params/secrets.ts';
import { createHash } from 'node:crypto';
import type { Instance, InstanceSpec } from '../api/schema.ts';
import type { PlanRequest } from './triggers.ts';
import { triggerIdentity } from './triggers.ts';

export const REQUESTED_BY_ANNOTATION = 'planwarden.dev/requested-by';
/** What a run says when no stamp belongs to its request (webhook bypassed, stamp removed). */
export const UNKNOWN_REQUESTER = 'unknown';
/** The longest stamp read; a longer one is ignored as foreign. */
const STAMP_MAX = 4096;

export interface RequesterStamp {
  /** Who created the Instance: the requester of the deploy its creation runs (a PlanPolicy's "not the requester"). */
  create?: { user: string };
  /** The manual trigger `planName/id` and who wrote it. */
  manual?: { user: string; trigger: string };
  /** A digest of spec.parameters as the user wrote them. */
  parameters?: { user: string; digest: string };
  /** The OperatorVersion an upgrade moved to. */
  upgrade?: { user: string; to: string };
  /**
   * A break-glass the webhook admitted with the request `for` names (requestKey): the freezes
   * (PlanPolicy names) its writer was allowed to pass, and why.
   */
  breakGlass?: { user: string; for: string; reason: string; policies: string[] };
}

/** A digest of the Instance's parameter values (order-independent). */
export function parametersDigest(values: Record<string, string> | undefined): string {
  const entries = Object.entries(values ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(JSON.stringify(entries)).digest('hex').slice(0, 16);
}

function entry<K extends keyof RequesterStamp>(raw: Record<string, unknown>, key: K, field: string): RequesterStamp[K] | undefined {
  const e = raw[key];
  if (typeof e !== 'object' || e === null) return undefined;
  const { user } = e as Record<string, unknown>;
  const value = (e as Record<string, unknown>)[field];
  return typeof user === 'string' && typeof value === 'string' ? ({ user, [field]: value } as RequesterStamp[K]) : undefined;
}

/** The stamp an annotation holds; anything malformed reads as no stamp. */
export function parseStamp(text: string | undefined): RequesterStamp {
  if (text === undefined || text.length > STAMP_MAX) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return {};
  const r = raw as Record<string, unknown>;
  const out: RequesterStamp = {};
  const create = r.create as Record<string, unknown> | undefined;
  if (typeof create === 'object' && create !== null && typeof create.user === 'string') out.create = { user: create.user };
  const manual = entry(r, 'manual', 'trigger');
  const parameters = entry(r, 'parameters', 'digest');
  const upgrade = entry(r, 'upgrade', 'to');
  if (manual) out.manual = manual;
  if (parameters) out.parameters = parameters;
  if (upgrade) out.upgrade = upgrade;
  const bg = r.breakGlass as Record<string, unknown> | undefined;
  if (
    typeof bg === 'object' &&
    bg !== null &&
    typeof bg.user === 'string' &&
    typeof bg.for === 'string' &&
    typeof bg.reason === 'string' &&
    Array.isArray(bg.policies) &&
    bg.policies.every((p) => typeof p === 'string')
  ) {
    out.breakGlass = { user: bg.user, for: bg.for, reason: bg.reason, policies: [...bg.policies] };
  }
  return out;
}

/** The annotation text of a stamp (undefined for an empty stamp: no annotation). */
export function stampText(stamp: RequesterStamp): string | undefined {
  return stamp.create || stamp.manual || stamp.parameters || stamp.upgrade || stamp.breakGlass ? JSON.stringify(stamp) : undefined;
}

export function stampOf(meta: { annotations?: Record<string, string> } | undefined): string | undefined {
  const a = meta?.annotations;
  return a && Object.hasOwn(a, REQUESTED_BY_ANNOTATION) ? a[REQUESTED_BY_ANNOTATION] : undefined;
}

/** What one write introduces, as the stamp records it. */
export interface IntroducedByWrite {
  user: string;
  /** The manual trigger introduced (planName, id as it will be stored). */
  manual?: { planName: string; id?: string };
  /** The write changes spec.parameters: the new values. */
  parameters?: Record<string, string>;
  /** The write changes spec.operatorVersion.name to this. */
  upgradeTo?: string;
  /** The write carries a break-glass its user may use: the reason and the freezes it passes. */
  breakGlass?: { reason: string; policies: string[] };
}

/** The stamp after a write: the stored one, with what this write introduced in its user's name. */
export function nextStamp(stored: RequesterStamp, write: IntroducedByWrite): RequesterStamp {
  const out: RequesterStamp = { ...stored };
  if (write.manual) out.manual = { user: write.user, trigger: triggerIdentity(write.manual)! };
  if (write.parameters) out.parameters = { user: write.user, digest: parametersDigest(write.parameters) };
  if (write.upgradeTo !== undefined) out.upgrade = { user: write.user, to: write.upgradeTo };
  // A break-glass belongs to the one request the write introduced (a manual trigger first);
  // a new request without one leaves none standing.
  const key = write.manual
    ? `manual:${triggerIdentity(write.manual)!}`
    : write.upgradeTo !== undefined
      ? `upgrade:${write.upgradeTo}`
      : write.parameters
        ? `parameters:${parametersDigest(write.parameters)}`
        : undefined;
  if (key !== undefined) {
    if (write.breakGlass)
      out.breakGlass = { user: write.user, for: key, reason: write.breakGlass.reason, policies: [...write.breakGlass.policies] };
    else delete out.breakGlass;
  }
  return out;
}

/** The stamp's key of `request` on `instance` (what a break-glass is bound to); undefined for runs nobody wrote. */
function requestKey(request: PlanRequest, instance: { spec: InstanceSpec }): string | undefined {
  switch (request.kind) {
    case 'manual':
      return `manual:${triggerIdentity({ planName: request.plan, id: request.id })!}`;
    case 'parameter':
      return `parameters:${parametersDigest(comparedParameters(instance.spec.parameters, instance.spec.parametersFrom))}`;
    case 'upgrade':
      return `upgrade:${instance.spec.operatorVersion.name}`;
    default:
      return undefined;
  }
}

/** The break-glass admitted with `request` (its reason and the freezes it passes), if any. */
export function breakGlassOf(
  request: PlanRequest,
  instance: Pick<Instance, 'metadata'> & { spec: InstanceSpec },
): { user: string; reason: string; policies: string[] } | undefined {
  const bg = parseStamp(stampOf(instance.metadata)).breakGlass;
  const key = requestKey(request, instance);
  return bg && key !== undefined && bg.for === key ? { user: bg.user, reason: bg.reason, policies: bg.policies } : undefined;
}

/** Who asked for `request` on `instance` (its stored spec and stamp). */
export function requesterOf(request: PlanRequest, instance: Pick<Instance, 'metadata'> & { spec: InstanceSpec }): string {
  const stamp = parseStamp(stampOf(instance.metadata));
  switch (request.kind) {
    case 'manual':
      return stamp.manual && stamp.manual.trigger === triggerIdentity({ planName: request.plan, id: request.id })
        ? stamp.manual.user
        : UNKNOWN_REQUESTER;
    case 'parameter':
      return stamp.parameters &&
        stamp.parameters.digest === parametersDigest(comparedParameters(instance.spec.parameters, instance.spec.parametersFrom))
        ? stamp.parameters.user
        : UNKNOWN_REQUESTER;
    case 'upgrade':
      return stamp.upgrade && stamp.upgrade.to === instance.spec.operatorVersion.name ? stamp.upgrade.user : UNKNOWN_REQUESTER;
    case 'create':
      return stamp.create?.user ?? request.kind;
    default:
      return request.kind;
  }
}
