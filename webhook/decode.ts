// Decoding at the boundary: an admission request's object and oldObject are checked against
// the compiled schema of their kind (shared/api/schema.ts) before any rule sees them typed.
// An object that does not decode is refused here with what is wrong and where, instead of
// being cast and then guarded field by field.
//
// Validating webhooks are called after the API server checked the object against the CRD's
// schema, so a real request always decodes there: the full spec schema is used. Mutating
// webhooks are called before that check, so their shape is mutation-tolerant: the types of
// what the mutation reads (an object where an object is read, a string where a string is),
// without the limits (lengths, counts, patterns) the API server reports itself right after.
import { Type, type TSchema } from '@sinclair/typebox';
import {
  FleetRolloutSpecSchema,
  InstanceSpecSchema,
  OperatorVersionSpecSchema,
  PlanApprovalSpecSchema,
  PlanPolicySpecSchema,
  UpdatePlanSpecSchema,
  type Instance,
  type KubeObject,
} from '../shared/api/schema.ts';
import { checkerFor, type Checker } from '../shared/api/validate.ts';
import { objectRef } from '../shared/refusal.ts';
import type { RuleId } from '../shared/ruleIds.ts';
import { deny, type Denied } from '../shared/verdict.ts';
import type { AdmissionRequest } from './review.ts';

/** An admission request whose objects decoded as `T`. */
export type DecodedRequest<T> = Omit<AdmissionRequest, 'object' | 'oldObject'> & { object: T | null; oldObject: T | null };

const open = { additionalProperties: true };
const strings = Type.Record(Type.String(), Type.String());

/** What every object's metadata must be for the rules to read it (the API server's ObjectMeta types). */
const MetadataShape = Type.Object(
  {
    name: Type.Optional(Type.String()),
    namespace: Type.Optional(Type.String()),
    labels: Type.Optional(strings),
    annotations: Type.Optional(strings),
    finalizers: Type.Optional(Type.Array(Type.String())),
    deletionTimestamp: Type.Optional(Type.String()),
  },
  open,
);

const objectShape = (spec: TSchema, status: TSchema = Type.Object({}, open)) =>
  Type.Object({ metadata: MetadataShape, spec, status: Type.Optional(status) }, open);

/** The shapes the Instance paths decode with: the full spec schema, or the mutating path's types. */
export const INSTANCE_SHAPES = {
  validating: checkerFor(objectShape(InstanceSpecSchema)),
  mutating: checkerFor(
    objectShape(
      Type.Object(
        {
          operatorVersion: Type.Object({ name: Type.String() }, open),
          parameters: Type.Optional(strings),
          parametersFrom: Type.Optional(Type.Record(Type.String(), Type.Object({}, open))),
          planExecution: Type.Optional(
            Type.Object(
              {
                // Required by the CRD: the API server says so itself right after ("planName: Required value").
                planName: Type.Optional(Type.String()),
                // Server-side apply passes "id": null through: the mutation fills it in.
                id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
                // Not read by the mutation: a non-boolean is the API server's to refuse ("must be of type boolean").
                abort: Type.Optional(Type.Unknown()),
                parameters: Type.Optional(strings),
                parametersFrom: Type.Optional(Type.Record(Type.String(), Type.Object({}, open))),
              },
              open,
            ),
          ),
          maintenance: Type.Optional(Type.Object({}, open)),
          schedules: Type.Optional(Type.Array(Type.Object({}, open))),
          serviceAccountName: Type.Optional(Type.String()),
        },
        open,
      ),
    ),
  ),
} as const;

export interface DecodeOptions {
  kind: string;
  rule: RuleId;
  checker: Checker<TSchema>;
}

/** Where a refused object is named: its namespace/name when those are strings, else the review. */
function whom(req: AdmissionRequest, kind: string): string {
  const meta = (req.object ?? req.oldObject)?.metadata as Record<string, unknown> | undefined;
  const name = meta?.name;
  const namespace = typeof meta?.namespace === 'string' ? meta.namespace : req.namespace;
  return typeof name === 'string' ? objectRef(kind, { name, namespace }) : `${kind} in AdmissionReview ${req.uid}`;
}

/**
 * The request with its objects typed, or the refusal of the first that does not decode
 * (`object` before `oldObject`): what is wrong, where, and what the object must look like.
 */
export function decodeObjects<T extends KubeObject>(
  req: AdmissionRequest,
  { kind, rule, checker }: DecodeOptions,
): DecodedRequest<T> | Denied {
  if ((req.object ?? null) === null && (req.oldObject ?? null) === null) {
    return deny({
      rule,
      object: whom(req, kind),
      refused: req.operation.toLowerCase(),
      why: 'the AdmissionReview carries neither object nor oldObject',
      fix: 'only the Kubernetes API server should call this webhook',
      code: 400,
      reason: 'BadRequest',
    });
  }
  for (const field of ['object', 'oldObject'] as const) {
    const value = req[field];
    if (value === null || value === undefined || checker.check(value)) continue;
    const errors = checker.errors(value);
    return deny({
      rule,
      object: whom(req, kind),
      refused:
        field === 'object'
          ? `${req.operation.toLowerCase()} (the written object does not decode)`
          : `${req.operation.toLowerCase()} (the stored object does not decode)`,
      why: `${errors.length > 0 ? errors.join('; ') : 'it does not have the shape of a ' + kind}`,
      fix: `write the ${kind} as \`kubectl explain ${kind.toLowerCase()}.spec\` describes it (an object where an object is expected, a string where a string is)`,
      code: 422,
      reason: 'Invalid',
    });
  }
  return { ...req, object: (req.object ?? null) as T | null, oldObject: (req.oldObject ?? null) as T | null };
}

/** Whether `v` is a refusal rather than a decoded request. */
export function isDenied<T>(v: DecodedRequest<T> | Denied): v is Denied {
  return (v as Denied).allowed === false;
}

export const INSTANCE_RULE: RuleId = 'instance.malformed';

/** An Instance request decoded for the validating (full schema) or mutating (types) path. */
export function decodeInstances(req: AdmissionRequest, path: keyof typeof INSTANCE_SHAPES): DecodedRequest<Instance> | Denied {
  return decodeObjects<Instance>(req, { kind: 'Instance', rule: INSTANCE_RULE, checker: INSTANCE_SHAPES[path] });
}

/** UpdatePlan writes (validating only): the full spec schema. */
export const UPDATE_PLAN_DECODE: DecodeOptions = {
  kind: 'UpdatePlan',
  rule: 'updateplan.malformed',
  checker: checkerFor(objectShape(UpdatePlanSpecSchema)),
};

/**
 * What a deletion's stored object must be: typed metadata and a spec that is an object. A
 * stored object may predate the current schema, and refusing its deletion for that would
 * leave it impossible to remove.
 */
const STORED_FOR_DELETE = checkerFor(objectShape(Type.Object({}, open)));
/** Typed metadata and a spec that is an object: for a mutation that reads no spec. */
const METADATA_ONLY = STORED_FOR_DELETE;

/** A validating path's decode: the kind's full spec schema; a deletion, its stored object's types. */
function validatingDecode(kind: string, rule: RuleId, spec: TSchema): (operation: string) => DecodeOptions {
  const checker = checkerFor(objectShape(spec));
  return (operation) => ({ kind, rule, checker: operation === 'DELETE' ? STORED_FOR_DELETE : checker });
}

/** OperatorVersion writes (validating only). */
export const operatorVersionDecode = validatingDecode('OperatorVersion', 'ov.malformed', OperatorVersionSpecSchema);

/** FleetRollout writes: the validating path's full schema, and the mutating path's types. */
export const fleetRolloutDecode = {
  validating: validatingDecode('FleetRollout', 'fleetrollout.malformed', FleetRolloutSpecSchema),
  // The mutation reads the metadata only (the author annotation); a spec must be an object.
  mutating: (): DecodeOptions => ({ kind: 'FleetRollout', rule: 'fleetrollout.malformed', checker: METADATA_ONLY }),
} as const;

/** PlanApproval writes: the validating path's full schema, and the mutating path's types. */
export const planApprovalDecode = {
  validating: validatingDecode('PlanApproval', 'approval.malformed', PlanApprovalSpecSchema),
  // The mutation reads the metadata and whether spec.approver is there; a spec must be an object.
  mutating: (): DecodeOptions => ({ kind: 'PlanApproval', rule: 'approval.malformed', checker: METADATA_ONLY }),
} as const;

/** PlanPolicy writes (validating only). */
export const planPolicyDecode = validatingDecode('PlanPolicy', 'policy.malformed', PlanPolicySpecSchema);
