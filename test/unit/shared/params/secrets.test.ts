// Secret parameters, the pure parts (shared/params/secrets.ts): how a reference is shown and
// compared, which Secret keys a run reads, how a Secret's bytes become a value, and the
// redaction every message of a run with secrets goes through.
import { expect } from 'chai';
import fc from 'fast-check';
import type { OperatorVersionSpec } from '../../../../shared/api/schema.ts';
import {
  comparedParameters,
  decodeSecretValue,
  MAX_SECRET_VALUE_BYTES,
  Redactor,
  runSecretRefs,
  secretToken,
} from '../../../../shared/params/secrets.ts';
import { requestedPlans } from '../../../../shared/plan/triggers.ts';

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const ref = (name: string, key: string) => ({ secretKeyRef: { name, key } });

const OV: OperatorVersionSpec = {
  version: '1.0.0',
  parameters: [
    { name: 'PASSWORD', secret: true },
    { name: 'RESTORE_KEY', secret: true, perRun: true, trigger: 'restore' },
    { name: 'REPLICAS', default: '1' },
  ],
  tasks: [{ name: 'noop', kind: 'Dummy' }],
  plans: {
    deploy: { phases: [{ name: 'p', steps: [{ name: 's', tasks: ['noop'] }] }] },
    update: { phases: [{ name: 'p', steps: [{ name: 's', tasks: ['noop'] }] }] },
    restore: { phases: [{ name: 'p', steps: [{ name: 's', tasks: ['noop'] }] }] },
  },
};

describe('secret parameters (shared/params/secrets.ts)', function () {
  describe('a reference is shown as its token, never as a value', function () {
    it('<secret: NAME/KEY>', function () {
      expect(secretToken({ name: 'mysql-creds', key: 'password' })).to.equal('<secret: mysql-creds/password>');
    });
    it('the trigger rules compare the written values and the tokens of the references', function () {
      expect(comparedParameters({ REPLICAS: '3' }, { PASSWORD: ref('a', 'k') })).to.deep.equal({
        REPLICAS: '3',
        PASSWORD: '<secret: a/k>',
      });
      expect(comparedParameters({ REPLICAS: '3' }, undefined)).to.deep.equal({ REPLICAS: '3' });
    });
  });

  describe('changes: a changed reference runs the parameter’s plan; the Secret’s content is not in the Instance', function () {
    const applied = { operatorVersion: 'db-1', parameters: {}, parametersFrom: { PASSWORD: ref('creds', 'password') } };
    const instance = (from: Record<string, ReturnType<typeof ref>>) => ({
      spec: { operatorVersion: { name: 'db-1' }, parametersFrom: from },
      status: { applied },
    });
    it('another Secret name: update runs', function () {
      expect(requestedPlans(OV, instance({ PASSWORD: ref('creds-2', 'password') })).map((r) => r.plan)).to.deep.equal(['update']);
    });
    it('another key: update runs', function () {
      expect(requestedPlans(OV, instance({ PASSWORD: ref('creds', 'pw') })).map((r) => r.plan)).to.deep.equal(['update']);
    });
    it('the same reference (whatever the Secret now holds): nothing runs', function () {
      expect(requestedPlans(OV, instance({ PASSWORD: ref('creds', 'password') }))).to.deep.equal([]);
    });
    it('a per-run reference of a manual trigger travels with the request', function () {
      const inst = {
        spec: {
          operatorVersion: { name: 'db-1' },
          parametersFrom: applied.parametersFrom,
          planExecution: { planName: 'restore', id: 'r1', parametersFrom: { RESTORE_KEY: ref('rk', 'k') } },
        },
        status: { applied },
      };
      const [request] = requestedPlans(OV, inst);
      expect(request?.runParametersFrom).to.deep.equal({ RESTORE_KEY: ref('rk', 'k') });
    });
  });

  describe('the Secret keys a run reads', function () {
    it('the Instance’s, overridden by the run’s own, for declared secret parameters only, sorted', function () {
      const refs = runSecretRefs(
        OV,
        { PASSWORD: ref('a', 'p'), REPLICAS: ref('x', 'y') },
        { RESTORE_KEY: ref('r', 'k'), PASSWORD: ref('b', 'p') },
      );
      expect(refs).to.deep.equal([
        ['PASSWORD', { name: 'b', key: 'p' }],
        ['RESTORE_KEY', { name: 'r', key: 'k' }],
      ]);
    });
  });

  describe('a Secret’s bytes as a value', function () {
    const R = { name: 'creds', key: 'password' };
    it('UTF-8 text, NUL bytes and YAML document markers included: a value, never structure', function () {
      const value = 'a\u0000b\n---\nkind: Secret\n';
      expect(decodeSecretValue({ data: { password: b64(value) } }, R)).to.deep.equal({ ok: true, value });
    });
    it('a missing key: refused, naming the keys there are', function () {
      const r = decodeSecretValue({ data: { user: b64('u') } }, R);
      expect(r).to.deep.equal({ ok: false, why: 'Secret "creds" has no key "password" (its keys: user)' });
    });
    it('bytes that are not UTF-8: refused without quoting them', function () {
      const r = decodeSecretValue({ data: { password: b64(Buffer.from([0xff, 0xfe, 0x41])) } }, R);
      expect(r.ok).to.equal(false);
      expect(!r.ok && r.why)
        .to.include('is not UTF-8 text')
        .and.not.include('A');
    });
    it('1 MiB is taken, more is refused', function () {
      expect(decodeSecretValue({ data: { password: b64('x'.repeat(MAX_SECRET_VALUE_BYTES)) } }, R).ok).to.equal(true);
      const r = decodeSecretValue({ data: { password: b64('x'.repeat(MAX_SECRET_VALUE_BYTES + 1)) } }, R);
      expect(!r.ok && r.why).to.include(`more than ${MAX_SECRET_VALUE_BYTES}`);
    });
  });

  describe('redaction', function () {
    const secret = { parameter: 'PASSWORD', ref: { name: 'creds', key: 'password' }, value: 'hunter2"\n' };
    const redactor = new Redactor([secret]);
    const cases: [string, string][] = [
      ['the value itself', 'password is hunter2"\n!'],
      ['the value JSON-escaped, as an API error quotes the object it refused', 'Invalid value: "hunter2\\"\\n": must be short'],
      ['the value in base64, as a Secret object holds it', `data: {password: ${b64(secret.value)}}`],
      ['base64 without its padding', `token ${b64(secret.value).replace(/=+$/, '')}.`],
    ];
    for (const [what, message] of cases) {
      it(`replaces ${what} with the token`, function () {
        const out = redactor.text(message);
        expect(out).to.include('<secret: creds/password>');
        expect(out).to.not.include('hunter2');
        expect(out).to.not.include(b64(secret.value).replace(/=+$/, ''));
      });
    }
    it('redacts every string of a status-like object, keys too', function () {
      const out = redactor.deep({ message: 'x hunter2"\n y', list: ['hunter2"\n'], map: { 'hunter2"\n': 1 } });
      expect(JSON.stringify(out)).to.not.include('hunter2');
    });
    it('a value that contains another secret is replaced whole (longest first)', function () {
      const r = new Redactor([
        { parameter: 'A', ref: { name: 's', key: 'a' }, value: 'abc' },
        { parameter: 'B', ref: { name: 's', key: 'b' }, value: 'xxabcxx' },
      ]);
      expect(r.text('[xxabcxx]')).to.equal('[<secret: s/b>]');
    });

    // Property: whatever the secret, a message that carries it in any form the API or a
    // Secret would (raw, JSON-escaped, base64 with and without padding, base64url) comes out
    // without its bytes and without its base64. Removing one form from Redactor (e.g. the
    // JSON-escaped one) makes this fail with a secret holding a quote or a newline.
    it('property: no form of a generated secret survives redaction', function () {
      fc.assert(
        fc.property(fc.string({ minLength: 4, maxLength: 40, unit: 'binary' }), fc.string({ maxLength: 20 }), (value, noise) => {
          fc.pre(!value.includes('\uFFFD') && Buffer.from(value, 'utf8').toString('utf8') === value);
          const r = new Redactor([{ parameter: 'P', ref: { name: 'n', key: 'k' }, value }]);
          const bytes = Buffer.from(value, 'utf8');
          const message = [value, JSON.stringify({ value }), bytes.toString('base64'), bytes.toString('base64url')].join(noise);
          const out = r.text(message);
          return (
            !out.includes(value) &&
            !out.includes(bytes.toString('base64').replace(/=+$/, '')) &&
            !out.includes(JSON.stringify(value).slice(1, -1))
          );
        }),
        { numRuns: 300 },
      );
    });
  });
});
