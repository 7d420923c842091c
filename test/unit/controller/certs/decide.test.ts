// The self-signed certificate decisions: what the controller does next given the Secret,
// the caBundles and the time — and, over two simulated years, that the served certificate
// is always trusted by every caBundle.
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { createCA, createKeyPair, createServingCert, type CertPair } from '../../../../certs/pki.ts';
import { WEBHOOK_IP_ADDRESSES, webhookDnsNames } from '../../../../certs/webhook.ts';
import {
  ANNOTATION_NEXT_SINCE,
  ANNOTATION_PREVIOUS_UNTIL,
  certificatesIn,
  decideCertActions,
  materialFor,
  SECRET_KEYS,
  secretAfter,
  settingsProblems,
  trustedAuthorities,
  type CertSecretState,
  type CertSettings,
  type Generated,
  type SecretStep,
  type WebhookConfigState,
} from '../../../../controller/certs/decide.ts';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const T0 = new Date('2027-01-01T00:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const SETTINGS: CertSettings = {
  service: 'planwarden-webhook',
  namespace: 'planwarden-system',
  leafValidityMs: 30 * DAY,
  leafRenewBeforeMs: 10 * DAY,
  caValidityMs: 365 * DAY,
  caRenewBeforeMs: 60 * DAY,
  caTrustSettleMs: HOUR,
};

// RSA keys are slow to make: every certificate in these tests reuses these two.
let caKey: string;
let leafKey: string;
let otherKey: string;
const newCA = (now: Date, validityMs = SETTINGS.caValidityMs): CertPair =>
  createCA({ commonName: `ca ${now.toISOString()}`, validityDays: validityMs / DAY, keyPem: caKey, now });
const newLeaf = (ca: CertPair, now: Date, service = SETTINGS.service): CertPair =>
  createServingCert({
    ca,
    dnsNames: webhookDnsNames(service, SETTINGS.namespace),
    ipAddresses: WEBHOOK_IP_ADDRESSES,
    validityDays: SETTINGS.leafValidityMs / DAY,
    keyPem: leafKey,
    now,
  });

function healthy(now: Date): { secret: CertSecretState; ca: CertPair; leaf: CertPair } {
  const ca = newCA(now);
  const leaf = newLeaf(ca, now);
  return {
    ca,
    leaf,
    secret: { data: { 'tls.crt': leaf.certPem, 'tls.key': leaf.keyPem, 'ca.crt': ca.certPem, 'ca.key': ca.keyPem }, annotations: {} },
  };
}

/** A CA about to need its successor, with a pair issued a day before `now`. */
function expiringCA(): { secret: CertSecretState; ca: CertPair; leaf: CertPair; now: Date } {
  const { secret, ca } = healthy(T0);
  const now = new Date(notAfter(ca.certPem) - SETTINGS.caRenewBeforeMs + 1000);
  const leaf = newLeaf(ca, new Date(now.getTime() - DAY));
  return { ca, leaf, now, secret: { data: { ...secret.data, 'tls.crt': leaf.certPem }, annotations: {} } };
}

const configs = (...bundles: (string | undefined)[][]): WebhookConfigState[] =>
  bundles.map((caBundles, i) => ({
    kind: i % 2 === 0 ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration',
    name: 'planwarden',
    caBundles,
  }));

const notAfter = (pem: string) => Date.parse(new X509Certificate(pem).validTo);

/** What the rotator does for a step, with the test's reused keys. */
function generateFor(step: SecretStep, secret: CertSecretState, now: Date, settings = SETTINGS): Generated {
  const { newAuthority, leafSigner } = materialFor(step, secret.data);
  const authority = newAuthority ? newCA(now, settings.caValidityMs) : undefined;
  const signer = {
    new: authority,
    current: { certPem: secret.data['ca.crt']!, keyPem: secret.data['ca.key']! },
    next: { certPem: secret.data['ca-next.crt']!, keyPem: secret.data['ca-next.key']! },
  };
  const leaf = leafSigner ? newLeaf(signer[leafSigner]!, now) : undefined;
  return { ...(authority ? { authority } : {}), ...(leaf ? { leaf } : {}) };
}

describe('controller/certs/decide', function () {
  this.timeout(60_000);
  before(() => {
    caKey = createKeyPair().privateKeyPem;
    leafKey = createKeyPair().privateKeyPem;
    otherKey = createKeyPair().privateKeyPem;
  });

  describe('settings', () => {
    it('accepts the defaults shape: leaf renewed before it expires, CA rotated before its last leaf needs renewing', () => {
      expect(settingsProblems(SETTINGS)).to.deep.equal([]);
    });
    it('refuses a renew-before as long as the validity', () => {
      expect(settingsProblems({ ...SETTINGS, leafRenewBeforeMs: SETTINGS.leafValidityMs })).to.have.length(1);
    });
    it('refuses a CA renew-before that leaves no time to rotate', () => {
      expect(settingsProblems({ ...SETTINGS, caRenewBeforeMs: SETTINGS.leafRenewBeforeMs })[0]).to.contain(
        '--cert-ca-renew-before must exceed',
      );
    });
  });

  describe('decideCertActions', () => {
    it('an empty Secret gets a first CA and pair (not a repair)', () => {
      const a = decideCertActions({ data: {}, annotations: {} }, configs([undefined]), T0, SETTINGS);
      expect(a.secret).to.deep.include({ step: 'issue-authority', repair: false });
    });

    it('a Secret edited into garbage is repaired with a new CA and pair', () => {
      const a = decideCertActions({ data: { 'ca.crt': 'garbage', 'tls.crt': 'y', 'tls.key': 'z' }, annotations: {} }, [], T0, SETTINGS);
      expect(a.secret).to.deep.include({ step: 'issue-authority', repair: true });
      expect(a.secret!.reasons).to.deep.equal(['ca.crt is not a PEM certificate']);
    });

    it('a Secret from certs/generate.ts (CA key kept off the cluster) is taken over with a CA of its own, not reported as a repair', () => {
      const { secret } = healthy(T0);
      delete secret.data['ca.key'];
      expect(decideCertActions(secret, [], at(DAY), SETTINGS).secret).to.deep.include({ step: 'issue-authority', repair: false });
    });

    it('a CA whose key was replaced by another is repaired', () => {
      const { secret } = healthy(T0);
      secret.data['ca.key'] = leafKey;
      const a = decideCertActions(secret, [], T0, SETTINGS);
      expect(a.secret?.step).to.equal('issue-authority');
      expect(a.secret!.reasons[0]).to.contain('does not match');
    });

    it('a healthy Secret with matching caBundles needs nothing until the leaf is due', () => {
      const { secret, ca, leaf } = healthy(T0);
      const a = decideCertActions(secret, configs([ca.certPem, ca.certPem], [ca.certPem]), at(DAY), SETTINGS);
      expect(a).to.deep.equal({ bundles: [], recheckAt: new Date(notAfter(leaf.certPem) - SETTINGS.leafRenewBeforeMs) });
    });

    it('a caBundle removed by hand is restored', () => {
      const { secret, ca } = healthy(T0);
      const a = decideCertActions(secret, configs([ca.certPem, undefined], [ca.certPem]), at(DAY), SETTINGS);
      expect(a.secret).to.equal(undefined);
      expect(a.bundles).to.have.length(1);
      expect(a.bundles[0]).to.deep.include({ kind: 'ValidatingWebhookConfiguration', reason: 'a caBundle is missing or unreadable' });
      expect(certificatesIn(a.bundles[0]!.caBundle).map((c) => c.fingerprint256)).to.deep.equal([
        new X509Certificate(ca.certPem).fingerprint256,
      ]);
    });

    it('the leaf is renewed when it expires within renew-before', () => {
      const { secret, leaf } = healthy(T0);
      const a = decideCertActions(secret, [], new Date(notAfter(leaf.certPem) - SETTINGS.leafRenewBeforeMs + 1000), SETTINGS);
      expect(a.secret?.step).to.equal('renew-leaf');
    });

    it('a leaf for another Service is renewed', () => {
      const { secret, ca } = healthy(T0);
      secret.data['tls.crt'] = newLeaf(ca, T0, 'other').certPem;
      expect(decideCertActions(secret, [], at(DAY), SETTINGS).secret?.step).to.equal('renew-leaf');
    });

    it('a leaf signed by another CA is renewed', () => {
      const { secret } = healthy(T0);
      const other = createCA({ commonName: 'another CA', keyPem: otherKey, now: T0 });
      secret.data['tls.crt'] = newLeaf(other, T0).certPem;
      const a = decideCertActions(secret, [], at(DAY), SETTINGS);
      expect(a.secret?.reasons).to.deep.equal(['tls.crt is not signed by ca.crt']);
    });

    it('an expiring CA gets a successor first, trusted before it signs', () => {
      const { secret, ca } = healthy(T0);
      const now = new Date(notAfter(ca.certPem) - SETTINGS.caRenewBeforeMs + 1000);
      expect(decideCertActions(secret, [], now, SETTINGS).secret?.step).to.equal('introduce-next-authority');
    });

    it('the successor is added to every caBundle, then signs once it has been trusted for the settle time', () => {
      const { secret, ca, now } = expiringCA();
      const step = decideCertActions(secret, [], now, SETTINGS).secret!;
      const withNext = secretAfter(secret, [], step, generateFor(step, secret, now), now, SETTINGS);
      expect(withNext.annotations[ANNOTATION_NEXT_SINCE]).to.equal(now.toISOString());

      const stale = decideCertActions(withNext, configs([ca.certPem]), now, SETTINGS);
      expect(stale.bundles).to.have.length(1);
      expect(certificatesIn(stale.bundles[0]!.caBundle)).to.have.length(2);

      const both = stale.bundles[0]!.caBundle;
      const early = decideCertActions(withNext, configs([both]), new Date(now.getTime() + 1000), SETTINGS);
      expect(early).to.deep.equal({ bundles: [], recheckAt: new Date(now.getTime() + SETTINGS.caTrustSettleMs) });
      const later = new Date(now.getTime() + SETTINGS.caTrustSettleMs);
      expect(decideCertActions(withNext, configs([both]), later, SETTINGS).secret?.step).to.equal('promote-next-authority');
    });

    it('a successor is never promoted while a caBundle lacks it', () => {
      const { secret, ca, now } = expiringCA();
      const step = decideCertActions(secret, [], now, SETTINGS).secret!;
      const withNext = secretAfter(secret, [], step, generateFor(step, secret, now), now, SETTINGS);
      const a = decideCertActions(withNext, configs([ca.certPem]), new Date(now.getTime() + 2 * SETTINGS.caTrustSettleMs), SETTINGS);
      expect(a.secret).to.equal(undefined);
      expect(a.bundles).to.have.length(1);
    });

    it('a damaged successor is dropped from the Secret', () => {
      const { secret } = healthy(T0);
      secret.data['ca-next.crt'] = 'garbage';
      const a = decideCertActions(secret, [], at(DAY), SETTINGS);
      expect(a.secret?.step).to.equal('tidy');
      const tidied = secretAfter(secret, [], a.secret!, {}, at(DAY), SETTINGS);
      expect(tidied.data).to.not.have.property('ca-next.crt');
    });
  });

  describe('secretAfter', () => {
    it('promotion retires the old CA until the pair it signed expires, then forgets it', () => {
      const { secret, ca, leaf, now } = expiringCA();
      const next = newCA(now);
      const staged = {
        data: { ...secret.data, 'ca-next.crt': next.certPem, 'ca-next.key': next.keyPem },
        annotations: { [ANNOTATION_NEXT_SINCE]: T0.toISOString() },
      };
      const step: SecretStep = { step: 'promote-next-authority', reasons: [] };
      const promoted = secretAfter(staged, [], step, generateFor(step, staged, now), now, SETTINGS);
      expect(promoted.data['ca.crt']).to.equal(next.certPem);
      expect(promoted.data).to.not.have.property('ca-next.crt');
      expect(promoted.annotations[ANNOTATION_PREVIOUS_UNTIL]).to.equal(
        new Date(Math.min(notAfter(leaf.certPem), notAfter(ca.certPem))).toISOString(),
      );
      expect(trustedAuthorities(promoted, now)).to.have.length(2);
      const until = new Date(promoted.annotations[ANNOTATION_PREVIOUS_UNTIL]!);
      expect(trustedAuthorities(promoted, until).map((c) => c.toString().trim())).to.deep.equal([next.certPem.trim()]);
      const renewed = secretAfter(promoted, [], { step: 'renew-leaf', reasons: [] }, { leaf: newLeaf(next, until) }, until, SETTINGS);
      expect(decideCertActions(renewed, [], until, SETTINGS).secret?.step).to.equal('tidy');
      expect(secretAfter(renewed, [], { step: 'tidy', reasons: [] }, {}, until, SETTINGS).data).to.not.have.property('ca-previous.crt');
    });

    it('a repair keeps trusting the CAs the caBundles held, so pods still serving the old pair keep working', () => {
      const { ca } = healthy(T0);
      const garbage: CertSecretState = { data: { 'ca.crt': 'garbage' }, annotations: {} };
      const step: SecretStep = { step: 'issue-authority', reasons: [], repair: true };
      const repaired = secretAfter(garbage, configs([ca.certPem]), step, generateFor(step, garbage, at(DAY)), at(DAY), SETTINGS);
      expect(Object.keys(repaired.data).sort()).to.deep.equal(['ca-previous.crt', 'ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
      expect(trustedAuthorities(repaired, at(DAY))).to.have.length(2);
      expect(decideCertActions(repaired, [], at(2 * DAY), SETTINGS)).to.deep.include({ bundles: [] });
    });
  });

  it('over 230 simulated days (two CA rotations), the served pair is always trusted by every caBundle and never expired', () => {
    const sim: CertSettings = { ...SETTINGS, caValidityMs: 120 * DAY, caRenewBeforeMs: 40 * DAY };
    // The world: one Secret, two webhook configurations; the pods serve the Secret's pair
    // as it was `lag` ago (the kubelet's sync), the apiserver trusts the caBundles at once.
    const lag = 10 * 60 * 1000;
    let secret: CertSecretState = { data: {}, annotations: {} };
    let world = configs([undefined, undefined], [undefined]);
    const history: { at: number; leaf?: string }[] = [];
    const steps: string[] = [];
    const step = DAY;
    for (let t = 0; t <= 230 * DAY; t += step) {
      const now = at(t);
      for (let pass = 0; pass < 6; pass++) {
        const a = decideCertActions(secret, world, now, sim);
        if (a.secret) {
          steps.push(a.secret.step);
          secret = secretAfter(secret, world, a.secret, generateFor(a.secret, secret, now, sim), now, sim);
          history.push({ at: t, leaf: secret.data[SECRET_KEYS.cert] });
          continue;
        }
        world = world.map((c) => {
          const fix = a.bundles.find((b) => b.kind === c.kind);
          return fix ? { ...c, caBundles: c.caBundles.map(() => fix.caBundle) } : c;
        });
        break;
      }
      if (t < lag) continue;
      // What the pods serve: the newest pair written at least `lag` ago, else the first one.
      const served = [...history].reverse().find((h) => h.at <= t - lag)?.leaf ?? history[0]!.leaf!;
      const leaf = new X509Certificate(served);
      expect(Date.parse(leaf.validTo), `served pair expired at ${now.toISOString()}`).to.be.greaterThan(now.getTime());
      for (const c of world) {
        for (const b of c.caBundles) {
          const trusted = certificatesIn(b).some((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
          expect(trusted, `${c.kind} does not trust the served pair at ${now.toISOString()}`).to.equal(true);
        }
      }
    }
    expect(steps.filter((s) => s === 'promote-next-authority')).to.have.length(2);
    expect(steps.filter((s) => s === 'renew-leaf').length).to.be.greaterThan(8);
    expect(steps.filter((s) => s === 'issue-authority')).to.have.length(1);
  });
});
