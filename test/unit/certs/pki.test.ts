// The X.509 toolkit: chains verify (with forge and with OpenSSL through node), SANs, key
// usages, serial numbers and validity are what TLS peers — Go's apiserver among them — expect.
import { expect } from 'chai';
import { X509Certificate, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import forge from 'node-forge';
import {
  CA_VALIDITY_DAYS,
  CLOCK_SKEW_MS,
  createCA,
  createClientCert,
  createKeyPair,
  createServingCert,
  randomSerialNumber,
  type CertPair,
} from '../../../certs/pki.ts';

const DAY = 24 * 60 * 60 * 1000;
const days = (from: string, to: string) => (new Date(to).getTime() - new Date(from).getTime()) / DAY;

function forgeChainVerifies(ca: CertPair, leaf: CertPair): boolean {
  const store = forge.pki.createCaStore([ca.certPem]);
  return forge.pki.verifyCertificateChain(store, [forge.pki.certificateFromPem(leaf.certPem)]);
}

/** A TLS handshake through OpenSSL: the server presents `server`, the client may present `client`. */
async function handshake(
  ca: CertPair,
  server: CertPair,
  client?: CertPair,
): Promise<{ clientAuthorized: boolean; serverAuthorized: boolean; error?: string }> {
  const srv = tls.createServer({ cert: server.certPem, key: server.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false });
  let serverAuthorized = false;
  srv.on('secureConnection', (s) => {
    serverAuthorized = s.authorized;
    s.end();
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  try {
    return await new Promise((resolve) => {
      const s = tls.connect({
        host: '127.0.0.1',
        port: (srv.address() as AddressInfo).port,
        ca: ca.certPem,
        servername: 'localhost',
        ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
      });
      s.on('secureConnect', () => {
        s.on('close', () => resolve({ clientAuthorized: s.authorized, serverAuthorized }));
        s.resume();
      });
      s.on('error', (e) => resolve({ clientAuthorized: false, serverAuthorized, error: e.message }));
    });
  } finally {
    srv.close();
  }
}

describe('certs/pki', function () {
  this.timeout(30_000);
  let ca: CertPair;
  let serving: CertPair;

  before(function () {
    ca = createCA({ commonName: 'planwarden test CA' });
    serving = createServingCert({
      ca,
      dnsNames: ['planwarden-webhook.planwarden-system.svc', 'localhost'],
      ipAddresses: ['127.0.0.1', '::1'],
    });
  });

  describe('createCA', function () {
    it('is a self-signed CA certificate that may only sign leaves', function () {
      const x = new X509Certificate(ca.certPem);
      expect(x.ca).to.equal(true);
      expect(x.subject).to.equal('CN=planwarden test CA');
      expect(x.issuer).to.equal(x.subject);
      expect(x.verify(x.publicKey)).to.equal(true);
      const c = forge.pki.certificateFromPem(ca.certPem);
      expect(c.getExtension('basicConstraints')).to.include({ cA: true, pathLenConstraint: 0, critical: true });
      expect(c.getExtension('keyUsage')).to.include({ keyCertSign: true, cRLSign: true, critical: true });
      expect(c.getExtension('subjectKeyIdentifier')).to.not.equal(undefined);
    });

    it('is valid for ten years, from a few minutes ago', function () {
      const x = new X509Certificate(ca.certPem);
      expect(days(x.validFrom, x.validTo)).to.be.closeTo(CA_VALIDITY_DAYS + CLOCK_SKEW_MS / DAY, 1 / 24);
      const backdated = Date.now() - new Date(x.validFrom).getTime();
      expect(backdated).to.be.within(CLOCK_SKEW_MS - 60_000, CLOCK_SKEW_MS + 120_000);
    });

    it('uses a 2048-bit RSA key', function () {
      expect(createPrivateKey(ca.keyPem).asymmetricKeyDetails?.modulusLength).to.equal(2048);
    });

    it('reuses a given key', function () {
      const again = createCA({ commonName: 'again', keyPem: ca.keyPem });
      expect(new X509Certificate(again.certPem).publicKey.export({ format: 'pem', type: 'spki' })).to.equal(
        new X509Certificate(ca.certPem).publicKey.export({ format: 'pem', type: 'spki' }),
      );
      expect(again.keyPem).to.equal(ca.keyPem);
    });
  });

  describe('createServingCert', function () {
    it('chains to the CA, as forge and OpenSSL both verify', function () {
      expect(forgeChainVerifies(ca, serving)).to.equal(true);
      const x = new X509Certificate(serving.certPem);
      const caX = new X509Certificate(ca.certPem);
      expect(x.checkIssued(caX)).to.equal(true);
      expect(x.verify(caX.publicKey)).to.equal(true);
    });

    it('carries every DNS name and IP address as a SAN', function () {
      const x = new X509Certificate(serving.certPem);
      expect(x.checkHost('planwarden-webhook.planwarden-system.svc', { subject: 'never' })).to.equal(
        'planwarden-webhook.planwarden-system.svc',
      );
      expect(x.checkHost('localhost', { subject: 'never' })).to.equal('localhost');
      expect(x.checkIP('127.0.0.1')).to.equal('127.0.0.1');
      expect(x.checkIP('::1')).to.equal('::1');
      expect(x.checkHost('other.example', { subject: 'never' })).to.equal(undefined);
      expect(x.subject).to.equal('CN=planwarden-webhook.planwarden-system.svc');
    });

    it('is a leaf for server authentication only', function () {
      const x = new X509Certificate(serving.certPem);
      expect(x.ca).to.equal(false);
      expect(x.keyUsage).to.deep.equal(['1.3.6.1.5.5.7.3.1']);
      const c = forge.pki.certificateFromPem(serving.certPem);
      expect(c.getExtension('keyUsage')).to.include({ digitalSignature: true, keyEncipherment: true, critical: true });
      expect(c.getExtension('basicConstraints')).to.include({ cA: false });
    });

    it('names the CA key in its authority key identifier', function () {
      const caSki = (forge.pki.certificateFromPem(ca.certPem).getExtension('subjectKeyIdentifier') as { subjectKeyIdentifier: string })
        .subjectKeyIdentifier;
      const aki = forge.pki.certificateFromPem(serving.certPem).getExtension('authorityKeyIdentifier') as { value: string };
      // The extension value is SEQUENCE { [0] keyIdentifier }: the CA's key id ends it.
      expect(forge.util.bytesToHex(aki.value).endsWith(caSki)).to.equal(true);
    });

    it('is valid for a year by default, backdated for clock skew', function () {
      const x = new X509Certificate(serving.certPem);
      expect(days(x.validFrom, x.validTo)).to.be.closeTo(365 + CLOCK_SKEW_MS / DAY, 1 / 24);
    });

    it('never outlives the CA that signs it', function () {
      const shortCa = createCA({ commonName: 'short', validityDays: 2, keyPem: ca.keyPem });
      const leaf = createServingCert({ ca: shortCa, dnsNames: ['x'], validityDays: 365, keyPem: serving.keyPem });
      expect(new X509Certificate(leaf.certPem).validTo).to.equal(new X509Certificate(shortCa.certPem).validTo);
    });

    it('is accepted by an OpenSSL TLS client that trusts the CA', async function () {
      const r = await handshake(ca, serving);
      expect(r.error).to.equal(undefined);
      expect(r.clientAuthorized).to.equal(true);
    });

    it('refuses a CA pair whose key does not match, and a CA that is not one', function () {
      expect(() => createServingCert({ ca: { certPem: ca.certPem, keyPem: serving.keyPem }, dnsNames: ['x'] })).to.throw(/does not match/);
      expect(() => createServingCert({ ca: serving, dnsNames: ['x'] })).to.throw(/not a CA/);
    });

    it('needs at least one name', function () {
      expect(() => createServingCert({ ca, dnsNames: [] })).to.throw(/at least one DNS name or IP address/);
    });
  });

  describe('createClientCert', function () {
    let admin: CertPair;
    before(function () {
      admin = createClientCert({ ca, commonName: 'planwarden-admin', organizations: ['system:masters', 'platform'] });
    });

    it('carries the user as CN and each group as O, for client authentication', function () {
      const x = new X509Certificate(admin.certPem);
      expect(x.subject.split('\n')).to.have.members(['O=system:masters', 'O=platform', 'CN=planwarden-admin']);
      expect(x.keyUsage).to.deep.equal(['1.3.6.1.5.5.7.3.2']);
      expect(x.ca).to.equal(false);
      expect(forgeChainVerifies(ca, admin)).to.equal(true);
    });

    it('authenticates to an OpenSSL TLS server that trusts the CA', async function () {
      const r = await handshake(ca, serving, admin);
      expect(r.serverAuthorized).to.equal(true);
    });

    it('is not accepted as a serving certificate', async function () {
      const r = await handshake(ca, createClientCert({ ca, commonName: 'localhost', keyPem: admin.keyPem }));
      expect(r.clientAuthorized).to.equal(false);
    });
  });

  describe('serial numbers', function () {
    it('are 128 random bits with the high bit cleared and no leading zero byte', function () {
      for (let i = 0; i < 200; i++) {
        const s = randomSerialNumber();
        expect(s).to.match(/^[0-7][0-9a-f]{31}$/);
        expect(s.slice(0, 2)).to.not.equal('00');
      }
    });

    it('differ between certificates', function () {
      const serials = [
        ca,
        serving,
        createServingCert({ ca, dnsNames: ['x'], keyPem: serving.keyPem }),
        createServingCert({ ca, dnsNames: ['x'], keyPem: serving.keyPem }),
      ].map((p) => new X509Certificate(p.certPem).serialNumber);
      expect(new Set(serials).size).to.equal(serials.length);
    });
  });

  describe('createKeyPair', function () {
    it('gives a PEM key pair that signs and verifies (service-account tokens)', function () {
      const kp = createKeyPair();
      expect(kp.publicKeyPem).to.match(/^-----BEGIN PUBLIC KEY-----\n/);
      expect(kp.privateKeyPem).to.match(/^-----BEGIN RSA PRIVATE KEY-----\n/);
      const data = Buffer.from('header.payload');
      const sig = sign('sha256', data, createPrivateKey(kp.privateKeyPem));
      expect(verify('sha256', data, createPublicKey(kp.publicKeyPem), sig)).to.equal(true);
      expect(createPublicKey(kp.publicKeyPem).asymmetricKeyDetails?.modulusLength).to.equal(2048);
    });
  });
});
