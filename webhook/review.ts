// The AdmissionReview wire format (admission.k8s.io/v1): decodes a request body into a
// typed AdmissionRequest or a typed failure, and encodes a Verdict into the response.
// Nothing here can produce `allowed: true` except an Allowed verdict passed to encodeVerdict.
import type { KubeObject } from '../shared/api/schema.ts';
import { boundWarnings, clipText, deny, MAX_MESSAGE_LENGTH, objectRef, type Denied, type Verdict } from './rules/verdict.ts';

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
  | 'not-json'
  | 'not-object'
  | 'not-admission-review'
  | 'no-request'
  | 'no-uid'
  | 'malformed-request'
  | 'unexpected-kind';

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
export type ReviewAnswer =
  | { status: 200; body: AdmissionReviewResponse }
  | { status: 400; body: { error: string } };

type Json = Record<string, unknown>;

/** A value quoted in an error message, cut short: the message is logged and returned, the value may be anything. */
function quote(v: unknown): string {
  const text = JSON.stringify(v) ?? 'nothing';
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);

/** A shape violation inside `request`; turned into a `malformed-request` failure. */
class Malformed extends Error {}

function requireString(o: Json, key: string, path: string, { allowEmpty = true } = {}): string {
  const v = o[key];
  if (!isString(v) || (!allowEmpty && v === '')) throw new Malformed(`${path}.${key} must be a ${allowEmpty ? '' : 'non-empty '}string`);
  return v;
}

function optionalString(o: Json, key: string, path: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!isString(v)) throw new Malformed(`${path}.${key} must be a string`);
  return v;
}

function requireRecord(o: Json, key: string, path: string): Json {
  const v = o[key];
  if (!isRecord(v)) throw new Malformed(`${path}.${key} must be an object`);
  return v;
}

function decodeGvk(o: Json, key: string): GroupVersionKind {
  const v = requireRecord(o, key, 'request');
  return {
    group: requireString(v, 'group', `request.${key}`),
    version: requireString(v, 'version', `request.${key}`, { allowEmpty: false }),
    kind: requireString(v, 'kind', `request.${key}`, { allowEmpty: false }),
  };
}

function decodeGvr(o: Json, key: string): GroupVersionResource {
  const v = requireRecord(o, key, 'request');
  return {
    group: requireString(v, 'group', `request.${key}`),
    version: requireString(v, 'version', `request.${key}`, { allowEmpty: false }),
    resource: requireString(v, 'resource', `request.${key}`, { allowEmpty: false }),
  };
}

function decodeUserInfo(o: Json): UserInfo {
  const v = requireRecord(o, 'userInfo', 'request');
  const groups = v.groups ?? [];
  if (!isStringArray(groups)) throw new Malformed('request.userInfo.groups must be a list of strings');
  const extra = v.extra;
  if (extra !== undefined && !(isRecord(extra) && Object.values(extra).every(isStringArray))) {
    throw new Malformed('request.userInfo.extra must map strings to lists of strings');
  }
  const uid = optionalString(v, 'uid', 'request.userInfo');
  return {
    username: optionalString(v, 'username', 'request.userInfo') ?? '',
    ...(uid !== undefined ? { uid } : {}),
    groups,
    ...(extra !== undefined ? { extra: extra as Record<string, string[]> } : {}),
  };
}

/** Handlers read apiVersion, kind and metadata without further checks, so those are verified here. */
function decodeObject(o: Json, key: 'object' | 'oldObject'): KubeObject | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (!isRecord(v)) throw new Malformed(`request.${key} must be an object`);
  requireString(v, 'apiVersion', `request.${key}`, { allowEmpty: false });
  requireString(v, 'kind', `request.${key}`, { allowEmpty: false });
  requireRecord(v, 'metadata', `request.${key}`);
  return v as unknown as KubeObject;
}

function decodeRequest(r: Json, uid: string): AdmissionRequest {
  const operation = r.operation;
  if (!OPERATIONS.includes(operation as AdmissionOperation)) {
    throw new Malformed(`request.operation must be one of ${OPERATIONS.join(', ')}, got ${quote(operation)}`);
  }
  const op = operation as AdmissionOperation;
  const object = decodeObject(r, 'object');
  const oldObject = decodeObject(r, 'oldObject');
  if (op !== 'DELETE' && object === null) throw new Malformed(`request.object is required for ${op}`);
  if (op !== 'CREATE' && oldObject === null) throw new Malformed(`request.oldObject is required for ${op}`);
  const dryRun = r.dryRun ?? false;
  if (typeof dryRun !== 'boolean') throw new Malformed('request.dryRun must be a boolean');
  const options = r.options;
  if (options !== undefined && options !== null && !isRecord(options)) throw new Malformed('request.options must be an object');

  const subResource = optionalString(r, 'subResource', 'request');
  const name = optionalString(r, 'name', 'request');
  const namespace = optionalString(r, 'namespace', 'request');
  return {
    uid,
    kind: decodeGvk(r, 'kind'),
    resource: decodeGvr(r, 'resource'),
    ...(subResource ? { subResource } : {}),
    ...(name ? { name } : {}),
    ...(namespace ? { namespace } : {}),
    operation: op,
    userInfo: decodeUserInfo(r),
    object,
    oldObject,
    dryRun,
    ...(isRecord(options) ? { options } : {}),
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
  const text = body === undefined ? '' : typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
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

  let request: AdmissionRequest;
  try {
    request = decodeRequest(r, uid);
  } catch (e) {
    if (e instanceof Malformed) return fail('malformed-request', e.message, { uid });
    throw e;
  }
  if (!expectedKinds.includes(request.kind.kind)) {
    return fail(
      'unexpected-kind',
      `handles ${expectedKinds.join(', ') || 'no kinds'}, not ${request.kind.kind.slice(0, 63)}`,
      { uid, request },
    );
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
