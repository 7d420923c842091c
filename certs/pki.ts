// A small X.509 toolkit on node-forge: a CA, serving and client certificates signed by it,
// and bare RSA key pairs (service-account signing). All PEM in, PEM out.
//
// Keys are 2048-bit RSA. Pure-JavaScript RSA key generation takes seconds; forge hands it to
// node's native generator when available, which still costs ~50-300 ms per key on a busy
// machine — so every function accepts an existing private key (`keyPem`) to reuse.
import { randomBytes } from 'node:crypto';
import forge from 'node-forge';

const { pki, md, util } = forge;

export interface CertPair {
  certPem: string;
  keyPem: string;
}

export interface KeyPairPem {
  /** SPKI "PUBLIC KEY". */
  publicKeyPem: string;
  /** PKCS#1 "RSA PRIVATE KEY". */
  privateKeyPem: string;
}

export const RSA_BITS = 2048;
export const CA_VALIDITY_DAYS = 3650;
export const LEAF_VALIDITY_DAYS = 365;
/** notBefore is set this far in the past, so a peer whose clock runs behind accepts a fresh certificate. */
export const CLOCK_SKEW_MS = 5 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

type ForgeKeys = { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey };

// forge PEM uses CRLF; plain LF is what every other tool writes.
const lf = (pem: string) => pem.replace(/\r\n/g, '\n');

function keysFor(keyPem: string | undefined): ForgeKeys {
  if (keyPem === undefined) return pki.rsa.generateKeyPair({ bits: RSA_BITS, e: 0x10001 });
  const privateKey = pki.privateKeyFromPem(keyPem);
  return { privateKey, publicKey: pki.setRsaPublicKey(privateKey.n, privateKey.e) };
}

/** 128 random bits as a positive DER INTEGER: high bit cleared, no leading zero byte. */
export function randomSerialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f || 0x01;
  return bytes.toString('hex');
}

interface Validity {
  notBefore: Date;
  notAfter: Date;
}

function validity(now: Date, days: number, limit?: Validity): Validity {
  if (!Number.isFinite(days) || days <= 0) throw new Error(`validityDays must be positive, got ${days}`);
  let notBefore = new Date(now.getTime() - CLOCK_SKEW_MS);
  let notAfter = new Date(now.getTime() + days * DAY_MS);
  // A leaf never outlives (or predates) the CA that signs it.
  if (limit) {
    if (notAfter > limit.notAfter) notAfter = new Date(limit.notAfter);
    if (notBefore < limit.notBefore) notBefore = new Date(limit.notBefore);
  }
  return { notBefore, notAfter };
}

interface Issuer {
  cert: forge.pki.Certificate;
  key: forge.pki.rsa.PrivateKey;
}

function subjectKeyId(cert: forge.pki.Certificate): string {
  const ext: { subjectKeyIdentifier?: string } | undefined = cert.getExtension('subjectKeyIdentifier');
  return ext?.subjectKeyIdentifier ? util.hexToBytes(ext.subjectKeyIdentifier) : cert.generateSubjectKeyIdentifier().getBytes();
}

function issue(opts: {
  subject: forge.pki.CertificateField[];
  keys: ForgeKeys;
  issuer?: Issuer;
  validity: Validity;
  extensions: object[];
}): CertPair {
  const cert = pki.createCertificate();
  cert.serialNumber = randomSerialNumber();
  cert.publicKey = opts.keys.publicKey;
  cert.validity.notBefore = opts.validity.notBefore;
  cert.validity.notAfter = opts.validity.notAfter;
  cert.setSubject(opts.subject);
  cert.setIssuer(opts.issuer ? opts.issuer.cert.subject.attributes : opts.subject);
  const keyId = opts.issuer ? subjectKeyId(opts.issuer.cert) : cert.generateSubjectKeyIdentifier().getBytes();
  cert.setExtensions([...opts.extensions, { name: 'subjectKeyIdentifier' }, { name: 'authorityKeyIdentifier', keyIdentifier: keyId }]);
  cert.sign(opts.issuer?.key ?? opts.keys.privateKey, md.sha256.create());
  return { certPem: lf(pki.certificateToPem(cert)), keyPem: lf(pki.privateKeyToPem(opts.keys.privateKey)) };
}

/** Parse a CA pair and check it can sign: a CA certificate and the key that matches it. */
function parseIssuer(ca: CertPair): Issuer {
  const cert = pki.certificateFromPem(ca.certPem);
  const key = pki.privateKeyFromPem(ca.keyPem);
  const bc: { cA?: boolean } | undefined = cert.getExtension('basicConstraints');
  if (!bc?.cA) throw new Error('the given CA certificate is not a CA (basicConstraints cA is not set)');
  const publicKey = cert.publicKey as forge.pki.rsa.PublicKey;
  if (publicKey.n.compareTo(key.n) !== 0) throw new Error('the given CA key does not match the CA certificate');
  return { cert, key };
}

export interface CAOptions {
  commonName: string;
  validityDays?: number;
  /** Reuse this private key instead of generating one. */
  keyPem?: string;
  now?: Date;
}

/** A self-signed root that may sign leaf certificates only (pathLen 0). */
export function createCA({ commonName, validityDays = CA_VALIDITY_DAYS, keyPem, now = new Date() }: CAOptions): CertPair {
  return issue({
    subject: [{ name: 'commonName', value: commonName }],
    keys: keysFor(keyPem),
    validity: validity(now, validityDays),
    extensions: [
      { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
}

export interface ServingCertOptions {
  ca: CertPair;
  dnsNames: string[];
  ipAddresses?: string[];
  /** Defaults to the first DNS name (or IP address). Clients check the SANs, not this. */
  commonName?: string;
  validityDays?: number;
  keyPem?: string;
  now?: Date;
}

/** A TLS server certificate (serverAuth) for the given DNS names and IP addresses. */
export function createServingCert({
  ca,
  dnsNames,
  ipAddresses = [],
  commonName,
  validityDays = LEAF_VALIDITY_DAYS,
  keyPem,
  now = new Date(),
}: ServingCertOptions): CertPair {
  const cn = commonName ?? dnsNames[0] ?? ipAddresses[0];
  if (cn === undefined) throw new Error('a serving certificate needs at least one DNS name or IP address');
  const issuer = parseIssuer(ca);
  return issue({
    subject: [{ name: 'commonName', value: cn }],
    keys: keysFor(keyPem),
    issuer,
    validity: validity(now, validityDays, issuer.cert.validity),
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [...dnsNames.map((value) => ({ type: 2, value })), ...ipAddresses.map((ip) => ({ type: 7, ip }))],
      },
    ],
  });
}

export interface ClientCertOptions {
  ca: CertPair;
  /** The user name Kubernetes sees, e.g. "system:kube-scheduler". */
  commonName: string;
  /** The groups Kubernetes sees, e.g. ["system:masters"]. */
  organizations?: string[];
  validityDays?: number;
  keyPem?: string;
  now?: Date;
}

/** A TLS client certificate (clientAuth): CN is the user, each O a group. */
export function createClientCert({
  ca,
  commonName,
  organizations = [],
  validityDays = LEAF_VALIDITY_DAYS,
  keyPem,
  now = new Date(),
}: ClientCertOptions): CertPair {
  const issuer = parseIssuer(ca);
  return issue({
    subject: [...organizations.map((value) => ({ name: 'organizationName', value })), { name: 'commonName', value: commonName }],
    keys: keysFor(keyPem),
    issuer,
    validity: validity(now, validityDays, issuer.cert.validity),
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  });
}

/** A bare RSA key pair, e.g. the service-account token signing key. */
export function createKeyPair(): KeyPairPem {
  const keys = keysFor(undefined);
  return {
    publicKeyPem: lf(pki.publicKeyToPem(keys.publicKey)),
    privateKeyPem: lf(pki.privateKeyToPem(keys.privateKey)),
  };
}
