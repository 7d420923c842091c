// The AdmissionReview codec: what decodes, what each malformed body turns into, how a
// verdict is encoded — and that no malformed body is ever answered with allowed: true.
import { expect } from 'chai';
import fc from 'fast-check';
import {
  answerDecodeFailure,
  decodeAdmissionReview,
  encodeVerdict,
  internalErrorVerdict,
  isVerdict,
  type AdmissionRequest,
  type DecodeProblem,
} from '../../../webhook/review.ts';
import { allow, deny } from '../../../shared/verdict.ts';
import type { RuleId } from '../../../shared/ruleIds.ts';

/** The codec does not care which rule denied: a short id keeps the length arithmetic readable. */
const FAKE_RULE = 'r' as RuleId;

const instance = (name = 'kafka') => ({
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name, namespace: 'shop', generation: 3 },
  spec: { operatorVersion: { name: 'kafka-1.2.0' } },
});

/** A well-formed v1 AdmissionReview for an UPDATE of Instance shop/kafka. */
function validReview(): Record<string, unknown> & { request: Record<string, unknown> } {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
      kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' },
      resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'instances' },
      requestKind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' },
      name: 'kafka',
      namespace: 'shop',
      operation: 'UPDATE',
      userInfo: { username: 'alice', uid: 'u-1', groups: ['platform', 'system:authenticated'] },
      object: instance(),
      oldObject: instance(),
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'UpdateOptions' },
    },
  };
}

const body = (v: unknown) => JSON.stringify(v);
const withRequest = (patch: Record<string, unknown>) => {
  const r = validReview();
  return body({ ...r, request: { ...r.request, ...patch } });
};
const without = (field: string) => {
  const r = validReview();
  delete r.request[field];
  return body(r);
};

function decodeOk(text: string, kinds = ['Instance']): AdmissionRequest {
  const d = decodeAdmissionReview(text, kinds);
  if (!d.ok) throw new Error(`expected a request, got ${d.failure.problem}: ${d.failure.detail}`);
  return d.request;
}

describe('webhook/review', function () {
  describe('decodeAdmissionReview', function () {
    it('decodes a well-formed review into a typed request', function () {
      const req = decodeOk(body(validReview()));
      expect(req.uid).to.equal('705ab4f5-6393-11e8-b7cc-42010a800002');
      expect(req.kind).to.deep.equal({ group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' });
      expect(req.operation).to.equal('UPDATE');
      expect(req.name).to.equal('kafka');
      expect(req.namespace).to.equal('shop');
      expect(req.userInfo.username).to.equal('alice');
      expect(req.object?.metadata.name).to.equal('kafka');
      expect(req.oldObject?.spec).to.deep.equal({ operatorVersion: { name: 'kafka-1.2.0' } });
      expect(req.dryRun).to.equal(false);
    });

    it('accepts a Buffer body, a subresource, and a CREATE without oldObject', function () {
      const req = decodeOk(withRequest({ operation: 'CREATE', oldObject: null, subResource: 'status', name: undefined }));
      expect(req.operation).to.equal('CREATE');
      expect(req.oldObject).to.equal(null);
      expect(req.subResource).to.equal('status');
      expect(req.name).to.equal(undefined);
      expect(decodeAdmissionReview(Buffer.from(body(validReview())), ['Instance']).ok).to.equal(true);
    });

    it('accepts a DELETE that carries only oldObject', function () {
      expect(decodeOk(withRequest({ operation: 'DELETE', object: null })).object).to.equal(null);
    });

    const rows: { body: string | undefined; problem: DecodeProblem; uid: boolean; sentence: string }[] = [
      { sentence: 'an empty body is not JSON', body: undefined, problem: 'not-json', uid: false },
      { sentence: 'YAML is not JSON', body: 'apiVersion: admission.k8s.io/v1', problem: 'not-json', uid: false },
      { sentence: 'truncated JSON is not JSON', body: body(validReview()).slice(0, 100), problem: 'not-json', uid: false },
      { sentence: 'a JSON array is not an object', body: '[1,2]', problem: 'not-object', uid: false },
      { sentence: 'JSON null is not an object', body: 'null', problem: 'not-object', uid: false },
      { sentence: 'a JSON string is not an object', body: '"AdmissionReview"', problem: 'not-object', uid: false },
      {
        sentence: 'a v1beta1 review is not the review this webhook speaks',
        body: body({ ...validReview(), apiVersion: 'admission.k8s.io/v1beta1' }),
        problem: 'not-admission-review',
        uid: false,
      },
      {
        sentence: 'another kind is not a review',
        body: body({ ...validReview(), kind: 'Pod' }),
        problem: 'not-admission-review',
        uid: false,
      },
      {
        sentence: 'a review without request has nothing to answer',
        body: body({ ...validReview(), request: undefined }),
        problem: 'no-request',
        uid: false,
      },
      {
        sentence: 'a review whose request is a list has nothing to answer',
        body: body({ ...validReview(), request: [] }),
        problem: 'no-request',
        uid: false,
      },
      { sentence: 'a request without uid cannot be answered', body: without('uid'), problem: 'no-uid', uid: false },
      { sentence: 'a request with an empty uid cannot be answered', body: withRequest({ uid: '' }), problem: 'no-uid', uid: false },
      { sentence: 'a request with a numeric uid cannot be answered', body: withRequest({ uid: 42 }), problem: 'no-uid', uid: false },
      { sentence: 'a request without kind is malformed', body: without('kind'), problem: 'malformed-request', uid: true },
      {
        sentence: 'a request whose kind is a string is malformed',
        body: withRequest({ kind: 'Instance' }),
        problem: 'malformed-request',
        uid: true,
      },
      { sentence: 'a request without resource is malformed', body: without('resource'), problem: 'malformed-request', uid: true },
      { sentence: 'a request without operation is malformed', body: without('operation'), problem: 'malformed-request', uid: true },
      {
        sentence: 'a CONNECT request is not one this webhook takes',
        body: withRequest({ operation: 'CONNECT' }),
        problem: 'malformed-request',
        uid: true,
      },
      {
        sentence: 'a lower-case operation is malformed',
        body: withRequest({ operation: 'update' }),
        problem: 'malformed-request',
        uid: true,
      },
      { sentence: 'a request without userInfo is malformed', body: without('userInfo'), problem: 'malformed-request', uid: true },
      {
        sentence: 'groups that are not strings are malformed',
        body: withRequest({ userInfo: { username: 'a', groups: [1] } }),
        problem: 'malformed-request',
        uid: true,
      },
      { sentence: 'an UPDATE without object is malformed', body: without('object'), problem: 'malformed-request', uid: true },
      { sentence: 'an UPDATE without oldObject is malformed', body: without('oldObject'), problem: 'malformed-request', uid: true },
      {
        sentence: 'an object that is a string is malformed',
        body: withRequest({ object: 'kafka' }),
        problem: 'malformed-request',
        uid: true,
      },
      {
        sentence: 'an object without metadata is malformed',
        body: withRequest({ object: { apiVersion: 'v1', kind: 'Instance' } }),
        problem: 'malformed-request',
        uid: true,
      },
      {
        sentence: 'a dryRun that is a string is malformed',
        body: withRequest({ dryRun: 'false' }),
        problem: 'malformed-request',
        uid: true,
      },
      { sentence: 'a name that is a number is malformed', body: withRequest({ name: 7 }), problem: 'malformed-request', uid: true },
      {
        sentence: 'an OperatorVersion sent to the Instance webhook is unexpected',
        body: withRequest({ kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'OperatorVersion' } }),
        problem: 'unexpected-kind',
        uid: true,
      },
    ];
    for (const row of rows) {
      it(row.sentence, function () {
        const d = decodeAdmissionReview(row.body, ['Instance']);
        expect(d.ok).to.equal(false);
        if (d.ok) return;
        expect(d.failure.problem).to.equal(row.problem);
        expect(d.failure.uid !== undefined, 'uid kept').to.equal(row.uid);
      });
    }
  });

  describe('answerDecodeFailure', function () {
    it('answers a failure with a uid as an AdmissionReview denial with code 400', function () {
      const d = decodeAdmissionReview(without('userInfo'), ['Instance']);
      if (d.ok) throw new Error('expected a failure');
      const a = answerDecodeFailure(d.failure, '/validate/instances');
      expect(a.status).to.equal(200);
      if (a.status !== 200) return;
      expect(a.body.apiVersion).to.equal('admission.k8s.io/v1');
      expect(a.body.kind).to.equal('AdmissionReview');
      expect(a.body.response.uid).to.equal('705ab4f5-6393-11e8-b7cc-42010a800002');
      expect(a.body.response.allowed).to.equal(false);
      expect(a.body.response.status?.code).to.equal(400);
      expect(a.body.response.status?.reason).to.equal('BadRequest');
      expect(a.body.response.status?.message).to.match(/request\.userInfo is required.*\[rule webhook\.malformed-review\]$/);
    });

    it('names the object, the route and the kinds it handles when the kind is unexpected', function () {
      const d = decodeAdmissionReview(withRequest({ kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'UpdatePlan' } }), [
        'Instance',
      ]);
      if (d.ok) throw new Error('expected a failure');
      const a = answerDecodeFailure(d.failure, '/validate/instances');
      if (a.status !== 200) throw new Error('expected a review');
      expect(a.body.response.status?.message).to.equal(
        'UpdatePlan "shop/kafka": UPDATE refused: webhook /validate/instances handles Instance, not UpdatePlan; ' +
          'the webhook configuration sends this resource to the wrong path; fix its rules or clientConfig.service.path ' +
          '[rule webhook.unexpected-kind]',
      );
    });

    it('answers a failure without a uid with HTTP 400 and a JSON error', function () {
      const d = decodeAdmissionReview('{', ['Instance']);
      if (d.ok) throw new Error('expected a failure');
      const a = answerDecodeFailure(d.failure, '/validate/instances');
      expect(a.status).to.equal(400);
      expect(a.body)
        .to.have.property('error')
        .that.matches(/^body is not JSON/);
    });
  });

  describe('encodeVerdict', function () {
    it('encodes an allowance with warnings and a base64 JSON Patch', function () {
      const patch = [{ op: 'add' as const, path: '/spec/planExecution/id', value: '2026-11-22T10:00:00Z' }];
      const r = encodeVerdict('uid-1', allow(['plan "backup" is already running; it restarts'], patch));
      expect(r).to.deep.equal({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: {
          uid: 'uid-1',
          allowed: true,
          warnings: ['plan "backup" is already running; it restarts'],
          patchType: 'JSONPatch',
          patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
        },
      });
      expect(JSON.parse(Buffer.from(r.response.patch!, 'base64').toString('utf8'))).to.deep.equal(patch);
    });

    it('leaves out an empty patch (validating webhooks may not send one) and empty warnings', function () {
      expect(encodeVerdict('uid-2', allow()).response).to.deep.equal({ uid: 'uid-2', allowed: true });
    });

    it('encodes a denial with code, reason and the one-line message', function () {
      const v = deny({
        rule: 'instance.unknown-plan',
        object: 'Instance "shop/kafka"',
        refused: 'trigger of plan "bakup"',
        why: 'OperatorVersion "kafka-1.2.0" has no plan "bakup"',
        fix: 'use one of: backup, deploy',
        warnings: ['w'],
      });
      expect(encodeVerdict('uid-3', v).response).to.deep.equal({
        uid: 'uid-3',
        allowed: false,
        status: { code: 403, reason: 'Forbidden', message: v.message },
        warnings: ['w'],
      });
    });

    it('bounds what one answer carries: 10 warnings of < 120 characters plus a count, a denial message of 4096', function () {
      const many = Array.from(
        { length: 20_000 },
        (_, i) => `parameter p${i} is not declared${' by the OperatorVersion'.repeat(i === 0 ? 10 : 1)}`,
      );
      const allowed = encodeVerdict('uid-4', allow(many)).response;
      expect(allowed.warnings).to.have.length(11);
      expect(allowed.warnings![0]).to.have.length(119).and.match(/…$/);
      expect(allowed.warnings![1]).to.equal(many[1]);
      expect(allowed.warnings![10]).to.equal('…and 19990 more warnings');
      const denied = deny({ rule: FAKE_RULE, object: 'Instance "a/b"', refused: 'x', why: 'y'.repeat(10_000), fix: 'z', warnings: many });
      const r = encodeVerdict('uid-5', denied).response;
      expect(r.status?.message)
        .to.have.length(4096)
        .and.match(/…; z \[rule r\]$/);
      expect(r.warnings).to.have.length(11);
      expect(JSON.stringify(r).length).to.be.below(6_000);
    });

    it('reports an internal error as a 500 denial that points at the logs by uid', function () {
      const v = internalErrorVerdict(decodeOk(body(validReview())));
      const r = encodeVerdict('705ab4f5-6393-11e8-b7cc-42010a800002', v).response;
      expect(r.allowed).to.equal(false);
      expect(r.status?.code).to.equal(500);
      expect(r.status?.reason).to.equal('InternalError');
      expect(r.status?.message).to.contain('internal error, see webhook logs (uid 705ab4f5-6393-11e8-b7cc-42010a800002)');
    });
  });

  describe('isVerdict', function () {
    const rows: { sentence: string; value: unknown; ok: boolean }[] = [
      { sentence: 'an allowance is a verdict', value: allow(), ok: true },
      { sentence: 'a denial is a verdict', value: deny({ rule: FAKE_RULE, object: 'o', refused: 'x', why: 'y', fix: 'z' }), ok: true },
      { sentence: 'undefined is not', value: undefined, ok: false },
      { sentence: '{allowed: true} without warnings is not', value: { allowed: true }, ok: false },
      { sentence: 'a truthy non-boolean allowed is not', value: { allowed: 'yes', warnings: [], patch: [] }, ok: false },
      {
        sentence: 'a denial with code 200 is not',
        value: { ...deny({ rule: FAKE_RULE, object: 'o', refused: 'x', why: 'y', fix: 'z' }), code: 200 },
        ok: false,
      },
      {
        sentence: 'a denial without message is not',
        value: { allowed: false, code: 403, reason: 'Forbidden', rule: FAKE_RULE, warnings: [] },
        ok: false,
      },
    ];
    for (const row of rows) {
      it(row.sentence, function () {
        expect(isVerdict(row.value)).to.equal(row.ok);
      });
    }
  });

  describe('never allowed by accident', function () {
    function answerOf(text: string | undefined): unknown {
      const d = decodeAdmissionReview(text, ['Instance']);
      if (d.ok) return 'decoded';
      return answerDecodeFailure(d.failure, '/validate/instances');
    }
    const neverAllowed = (answer: unknown) => {
      expect(answer).to.not.equal('decoded');
      const text = JSON.stringify(answer);
      expect(text).to.not.match(/"allowed":true/);
      const a = answer as { status: number; body: { response?: { allowed: unknown; status?: { code: number } } } };
      if (a.status === 200) {
        expect(a.body.response?.allowed).to.equal(false);
        expect(a.body.response?.status?.code).to.equal(400);
      } else {
        expect(a.status).to.equal(400);
      }
    };

    it('no arbitrary JSON value decodes or is answered allowed', function () {
      fc.assert(
        fc.property(fc.jsonValue(), (v) => neverAllowed(answerOf(JSON.stringify(v)))),
        { numRuns: 300 },
      );
    });

    it('no arbitrary string decodes or is answered allowed', function () {
      fc.assert(
        fc.property(fc.string(), (s) => neverAllowed(answerOf(s))),
        { numRuns: 300 },
      );
    });

    it('a valid review with any required field replaced by a value of the wrong type is never allowed', function () {
      const required = ['uid', 'kind', 'resource', 'operation', 'userInfo', 'object', 'oldObject'];
      const wrongTyped = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }), fc.constant(''));
      fc.assert(
        fc.property(fc.constantFrom(...required), wrongTyped, (field, value) => {
          neverAllowed(answerOf(withRequest({ [field]: value })));
        }),
        { numRuns: 300 },
      );
    });

    it('a review with a field removed at any depth of its envelope is never allowed', function () {
      const paths = [
        ['apiVersion'],
        ['kind'],
        ['request'],
        ['request', 'uid'],
        ['request', 'kind', 'kind'],
        ['request', 'kind', 'version'],
        ['request', 'resource', 'resource'],
        ['request', 'operation'],
        ['request', 'userInfo'],
        ['request', 'object', 'metadata'],
        ['request', 'object', 'kind'],
        ['request', 'oldObject', 'apiVersion'],
      ];
      for (const path of paths) {
        const r = validReview() as Record<string, unknown>;
        let node = r;
        for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
        delete node[path[path.length - 1]!];
        neverAllowed(answerOf(body(r)));
      }
    });
  });
});
