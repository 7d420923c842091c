// The AdmissionReview wire format (admission.k8s.io/v1): decodes a request body into a
// typed AdmissionRequest or a typed failure, and encodes a Verdict into the response.
// Nothing here can produce `allowed: true` except an Allowed verdict passed to encodeVerdict.
import { Type } from '@sinclair/typebox';
import type { KubeObject } from '../shared/api/schema.ts';
import { checkerFor } from '../shared/api/validate.ts';
import { boundWarnings, deny, type Denied, type Verdict } from '../shared/verdict.ts';
import { MAX_MESSAGE_LENGTH, objectRef } from '../shared/refusal.ts';
import { clipText } from '../shared/text.ts';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_KIND = 'AdmissionReview';

export const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE'] as const;
/** CONNECT is left out on purpose: no planwarden webhook registers for it. */
export type AdmissionOperation = (typeof OPERATIONS)[number];

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** The parts of admission.k8s.io/v1 AdmissionRequest planwarden uses, checked for shape. */
export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  /** e.g. "status" for writes to instances/status. */
  subResource?: string;
  /** Empty on a CREATE that uses generateName. */
  name?: string;
  /** Absent for cluster-scoped objects. */
  namespace?: string;
  operation: AdmissionOperation;
  userInfo: UserInfo;
  /** Present on CREATE and UPDATE. Only apiVersion, kind and metadata are checked; spec is not. */
  object: KubeObject | null;
  /** Present on UPDATE and DELETE. Same checks as `object`. */
  oldObject: KubeObject | null;
  dryRun: boolean;
  options?: Record<string, unknown>;
}

export type DecodeProblem =
  'not-json' | 'not-object' | 'not-admission-review' | 'no-request' | 'no-uid' | 'malformed-request' | 'unexpected-kind';

export interface DecodeFailure {
  problem: DecodeProblem;
  /** What is wrong, for the log and the answer. */
  detail: string;
  /** Set when the body carried a usable request.uid: the answer is then an AdmissionReview denial. */
  uid?: string;
  /** For unexpected-kind: the request, so the denial can name the object. */
  request?: AdmissionRequest;
}

export type Decoded = { ok: true; request: AdmissionRequest } | { ok: false; failure: DecodeFailure };

export interface AdmissionStatus {
  code: number;
  reason: string;
  message: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  warnings?: string[];
  patchType?: 'JSONPatch';
  /** base64 of the JSON Patch document. */
  patch?: string;
}

export interface AdmissionReviewResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: typeof ADMISSION_KIND;
  response: AdmissionResponse;
}

/** What to send back over HTTP: an AdmissionReview, or an error body when there is no uid to answer. */
export type ReviewAnswer = { status: 200; body: AdmissionReviewResponse } | { status: 400; body: { error: string } };

type Json = Record<string, unknown>;

/** A value quoted in an error message, cut short: the message is logged and returned, the value may be anything. */
function quote(v: unknown): string {
  const text = JSON.stringify(v) ?? 'nothing';
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);

// The parts of admission.k8s.io/v1 AdmissionRequest planwarden reads, as a schema: the
// decoder checks a request against it and its error paths become the denial's message.
// Objects are checked for apiVersion, kind and metadata only (handlers read no more
// without their own checks); everything else in them passes through untouched.
const text = Type.String();
const nonEmpty = Type.String({ minLength: 1 });
const optionalText = Type.Optional(Type.Union([text, Type.Null()]));
const anyObject = Type.Object({}, { additionalProperties: true });
const KubeObjectShape = Type.Object({ apiVersion: nonEmpty, kind: nonEmpty, metadata: anyObject }, { additionalProperties: true });
const AdmissionRequestShape = Type.Object(
  {
    uid: nonEmpty,
    kind: Type.Object({ group: text, version: nonEmpty, kind: nonEmpty }),
    resource: Type.Object({ group: text, version: nonEmpty, resource: nonEmpty }),
    subResource: optionalText,
    name: optionalText,
    namespace: optionalText,
    operation: Type.Union(OPERATIONS.map((o) => Type.Literal(o))),
    userInfo: Type.Object({
      username: optionalText,
      uid: optionalText,
      groups: Type.Optional(Type.Union([Type.Array(text), Type.Null()])),
      extra: Type.Optional(Type.Union([Type.Record(text, Type.Array(text)), Type.Null()])),
    }),
    object: Type.Optional(Type.Union([KubeObjectShape, Type.Null()])),
    oldObject: Type.Optional(Type.Union([KubeObjectShape, Type.Null()])),
    dryRun: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    options: Type.Optional(Type.Union([anyObject, Type.Null()])),
  },
  { additionalProperties: true },
);
const requestShape = checkerFor(AdmissionRequestShape);

/** A shape violation inside `request`: turned into a `malformed-request` failure. */
function decodeRequest(r: Json): AdmissionRequest | { malformed: string } {
  if (!requestShape.check(r)) {
    const errors = requestShape.errors(r).map((e) => `request.${e}`);
    // An operation outside the three is the most common odd request: say which ones we take.
    if (!OPERATIONS.includes(r.operation as AdmissionOperation)) {
      return { malformed: `request.operation must be one of ${OPERATIONS.join(', ')}, got ${quote(r.operation)}` };
    }
    return { malformed: errors.join('; ') || 'request does not have the shape of an admission.k8s.io/v1 AdmissionRequest' };
  }
  const op = r.operation;
  const object = (r.object ?? null) as KubeObject | null;
  const oldObject = (r.oldObject ?? null) as KubeObject | null;
  if (op !== 'DELETE' && object === null) return { malformed: `request.object is required for ${op}` };
  if (op !== 'CREATE' && oldObject === null) return { malformed: `request.oldObject is required for ${op}` };
  const u = r.userInfo;
  return {
    uid: r.uid,
    kind: { group: r.kind.group, version: r.kind.version, kind: r.kind.kind },
    resource: { group: r.resource.group, version: r.resource.version, resource: r.resource.resource },
    ...(r.subResource ? { subResource: r.subResource } : {}),
    ...(r.name ? { name: r.name } : {}),
    ...(r.namespace ? { namespace: r.namespace } : {}),
    operation: op,
    userInfo: {
      username: u.username ?? '',
      ...(u.uid != null ? { uid: u.uid } : {}),
      groups: u.groups ?? [],
      ...(u.extra != null ? { extra: u.extra } : {}),
    },
    object,
    oldObject,
    dryRun: r.dryRun ?? false,
    ...(r.options ? { options: r.options } : {}),
  };
}

const fail = (problem: DecodeProblem, detail: string, extra: Partial<DecodeFailure> = {}): Decoded => ({
  ok: false,
  failure: { problem, detail, ...extra },
});

/**
 * Decode an HTTP body that should hold an admission.k8s.io/v1 AdmissionReview whose
 * request is for one of `expectedKinds` (request.kind.kind).
 */
export function decodeAdmissionReview(body: string | Uint8Array | undefined, expectedKinds: readonly string[]): Decoded {
  // Read in place: Buffer.from(aUint8Array) would copy the whole body first.
  const text =
    body === undefined ? '' : typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return fail('not-json', `body is not JSON (${(e as Error).message})`);
  }
  if (!isRecord(value)) return fail('not-object', 'body is JSON but not an object');
  if (value.apiVersion !== ADMISSION_API_VERSION || value.kind !== ADMISSION_KIND) {
    // Answered with HTTP 400 even when a uid is present: a response in our apiVersion to a
    // request in another one would be refused by the apiserver anyway.
    return fail(
      'not-admission-review',
      `body is not an ${ADMISSION_API_VERSION} ${ADMISSION_KIND} (apiVersion ${quote(value.apiVersion)}, kind ${quote(value.kind)})`,
    );
  }
  const r = value.request;
  if (!isRecord(r)) return fail('no-request', 'AdmissionReview has no request object');
  if (!isString(r.uid) || r.uid === '') return fail('no-uid', 'AdmissionReview request has no uid');
  const uid = r.uid;

  const request = decodeRequest(r);
  if ('malformed' in request) return fail('malformed-request', request.malformed, { uid });
  if (!expectedKinds.includes(request.kind.kind)) {
    return fail('unexpected-kind', `handles ${expectedKinds.join(', ') || 'no kinds'}, not ${request.kind.kind.slice(0, 63)}`, {
      uid,
      request,
    });
  }
  return { ok: true, request };
}

/** `Kind "ns/name"` for the object a request is about. */
export function requestObjectRef(req: AdmissionRequest): string {
  const meta = (req.object ?? req.oldObject)?.metadata ?? {};
  return objectRef(req.kind.kind, {
    ...meta,
    ...(req.name ? { name: req.name } : {}),
    ...(req.namespace ? { namespace: req.namespace } : {}),
  });
}

/** The denial a decode failure with a uid turns into (code 400, never allowed). */
export function decodeFailureVerdict(failure: DecodeFailure, webhook: string): Denied {
  if (failure.problem === 'unexpected-kind' && failure.request) {
    return deny({
      rule: 'webhook.unexpected-kind',
      object: requestObjectRef(failure.request),
      refused: failure.request.operation,
      why: `webhook ${webhook} ${failure.detail}`,
      fix: 'the webhook configuration sends this resource to the wrong path; fix its rules or clientConfig.service.path',
      code: 400,
      reason: 'BadRequest',
    });
  }
  return deny({
    rule: 'webhook.malformed-review',
    object: `AdmissionReview ${failure.uid ?? '<no uid>'}`,
    refused: 'request',
    why: failure.detail,
    fix: 'only the Kubernetes API server should call this webhook; check its version and the webhook configuration',
    code: 400,
    reason: 'BadRequest',
  });
}

/** The denial for a handler that threw, timed out or returned something that is not a Verdict. */
export function internalErrorVerdict(req: AdmissionRequest, why = 'internal error'): Denied {
  return deny({
    rule: 'webhook.internal-error',
    object: requestObjectRef(req),
    refused: req.operation,
    why: `${why}, see webhook logs (uid ${req.uid})`,
    fix: 'retry; if it persists, report it with the uid',
    code: 500,
    reason: 'InternalError',
  });
}

/** True for a well-formed Verdict; anything else from a handler is treated as an internal error. */
export function isVerdict(v: unknown): v is Verdict {
  if (!isRecord(v) || !isStringArray(v.warnings)) return false;
  if (v.allowed === true) return Array.isArray(v.patch) && v.patch.every(isRecord);
  if (v.allowed === false) {
    return (
      typeof v.code === 'number' &&
      Number.isInteger(v.code) &&
      v.code >= 400 &&
      v.code <= 599 &&
      isString(v.message) &&
      isString(v.reason) &&
      isString(v.rule)
    );
  }
  return false;
}

/** The AdmissionReview answering request `uid` with `verdict`. */
export function encodeVerdict(uid: string, verdict: Verdict): AdmissionReviewResponse {
  const response: AdmissionResponse = { uid, allowed: verdict.allowed === true };
  if (verdict.allowed === true) {
    // An empty patch is left out: validating webhooks may not return one at all.
    if (verdict.patch.length > 0) {
      response.patchType = 'JSONPatch';
      response.patch = Buffer.from(JSON.stringify(verdict.patch), 'utf8').toString('base64');
    }
  } else {
    response.status = { code: verdict.code, reason: verdict.reason, message: clipText(verdict.message, MAX_MESSAGE_LENGTH) };
  }
  // Bounded here, where every verdict leaves: one write with thousands of findings must not
  // answer with thousands of warning headers.
  if (verdict.warnings.length > 0) response.warnings = boundWarnings(verdict.warnings);
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_KIND, response };
}

/** How to answer a body that could not be decoded: a denial when it had a uid, else an HTTP 400. */
export function answerDecodeFailure(failure: DecodeFailure, webhook: string): ReviewAnswer {
  if (failure.uid !== undefined) {
    return { status: 200, body: encodeVerdict(failure.uid, decodeFailureVerdict(failure, webhook)) };
  }
  return { status: 400, body: { error: failure.detail } };
}
