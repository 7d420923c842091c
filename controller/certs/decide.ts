// What keeping the webhook's self-signed serving certificate valid takes next, decided from
// the certificate Secret and the caBundles of planwarden's webhook configurations at `now`.
// Pure: no clock, no key generation, no API calls — certs/rotator.ts does those.
//
// The Secret carries the whole state of a rotation, so a new leader picks it up where the
// last one stopped:
//   tls.crt, tls.key   the serving pair the webhook mounts
//   ca.crt, ca.key     the CA that signed tls.crt
//   ca-next.crt/.key   a CA already trusted by every caBundle, not yet signing (CA rotation)
//   ca-previous.crt    CAs retired from signing, still trusted until the annotation
//                      planwarden.dev/ca-previous-until: no certificate they signed is
//                      valid (so served) after that.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { webhookDnsNames } from '../../certs/webhook.ts';

export const SECRET_KEYS = {
  cert: 'tls.crt',
  key: 'tls.key',
  ca: 'ca.crt',
  caKey: 'ca.key',
  nextCa: 'ca-next.crt',
  nextCaKey: 'ca-next.key',
  previousCa: 'ca-previous.crt',
} as const;
/** When ca-next.crt was put into the Secret (and so, a moment later, into every caBundle). */
export const ANNOTATION_NEXT_SINCE = 'planwarden.dev/ca-next-since';
/** Until when ca-previous.crt stays trusted. */
export const ANNOTATION_PREVIOUS_UNTIL = 'planwarden.dev/ca-previous-until';

export interface CertSettings {
  service: string;
  namespace: string;
  leafValidityMs: number;
  /** Issue a new serving pair when the served one expires within this. */
  leafRenewBeforeMs: number;
  caValidityMs: number;
  /** Start a CA rotation when the CA expires within this. */
  caRenewBeforeMs: number;
  /** How long a new CA is trusted by the caBundles before it signs (apiserver caches catch up). */
  caTrustSettleMs: number;
}

/** Why settings cannot keep a certificate valid; empty when they can. */
export function settingsProblems(s: CertSettings): string[] {
  const problems: string[] = [];
  const durations = [s.leafValidityMs, s.leafRenewBeforeMs, s.caValidityMs, s.caRenewBeforeMs];
  if (durations.some((d) => !Number.isFinite(d) || d <= 0)) problems.push('every certificate lifetime and threshold must be positive');
  if (s.leafRenewBeforeMs >= s.leafValidityMs) problems.push('--cert-renew-before must be shorter than --cert-leaf-validity');
  if (s.caRenewBeforeMs >= s.caValidityMs) problems.push('--cert-ca-renew-before must be shorter than --cert-ca-validity');
  if (s.caRenewBeforeMs <= s.leafRenewBeforeMs + s.caTrustSettleMs) {
    problems.push(
      '--cert-ca-renew-before must exceed --cert-renew-before plus --cert-ca-trust-settle (a CA rotation must finish before the last leaf it signed needs renewing)',
    );
  }
  return problems;
}

/** The Secret as read: data decoded to text, and its annotations. */
export interface CertSecretState {
  data: Record<string, string>;
  annotations: Record<string, string>;
}

/** One Validating/MutatingWebhookConfiguration: each webhook's caBundle, decoded (undefined: none). */
export interface WebhookConfigState {
  kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration';
  name: string;
  caBundles: (string | undefined)[];
}

export type SecretStep =
  /** No usable CA (first run, expired, or the Secret edited into garbage): a new CA and pair. */
  | { step: 'issue-authority'; reasons: string[]; repair: boolean }
  /** The CA is expiring: create its successor, to be trusted before it signs. */
  | { step: 'introduce-next-authority'; reasons: string[] }
  /** The successor is trusted everywhere: it signs a new pair, the old CA is retired. */
  | { step: 'promote-next-authority'; reasons: string[] }
  /** A new serving pair from the current CA. */
  | { step: 'renew-leaf'; reasons: string[] }
  /** Tidy the Secret: drop a retired CA past its date, or an unusable successor. */
  | { step: 'tidy'; reasons: string[] };

export interface BundleFix {
  kind: WebhookConfigState['kind'];
  name: string;
  caBundle: string;
  reason: string;
}

export interface CertActions {
  /** Change the Secret first; the caBundles are decided again from its new contents. */
  secret?: SecretStep;
  /** Only when the Secret needs no change. */
  bundles: BundleFix[];
  /** When the decision may change by the clock alone. */
  recheckAt?: Date;
}

interface Parsed {
  cert: X509Certificate;
  notAfter: number;
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every certificate in a PEM bundle that parses; garbage between them is ignored. */
export function certificatesIn(bundle: string | undefined): X509Certificate[] {
  const out: X509Certificate[] = [];
  for (const pem of bundle?.match(PEM_CERT) ?? []) {
    try {
      out.push(new X509Certificate(pem));
    } catch {
      // a damaged entry is no trust anchor
    }
  }
  return out;
}

function parseCert(pem: string | undefined): Parsed | undefined {
  const cert = certificatesIn(pem)[0];
  return cert ? { cert, notAfter: Date.parse(cert.validTo) } : undefined;
}

function keyMatches(cert: X509Certificate, keyPem: string | undefined): boolean {
  if (!keyPem) return false;
  try {
    return cert.checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

const fingerprint = (c: X509Certificate) => c.fingerprint256;
const pemOf = (c: X509Certificate) => c.toString().trim();

/** Why a CA pair cannot sign at `now`; empty when it can. */
function authorityProblems(what: string, certPem: string | undefined, keyPem: string | undefined, now: number): string[] {
  if (!certPem) return [`${what} is missing`];
  const ca = parseCert(certPem);
  if (!ca) return [`${what} is not a PEM certificate`];
  const problems: string[] = [];
  if (!ca.cert.ca) problems.push(`${what} is not a CA certificate`);
  if (!keyMatches(ca.cert, keyPem)) problems.push(`the key of ${what} is missing or does not match it`);
  if (ca.notAfter <= now) problems.push(`${what} expired ${ca.cert.validTo}`);
  return problems;
}

/** Why the serving pair must be replaced; empty when it is fine until its renewal time. */
function leafProblems(data: Record<string, string>, ca: X509Certificate, now: number, s: CertSettings): string[] {
  const leaf = parseCert(data[SECRET_KEYS.cert]);
  if (!leaf) return [`${SECRET_KEYS.cert} is missing or not a PEM certificate`];
  const problems: string[] = [];
  if (!keyMatches(leaf.cert, data[SECRET_KEYS.key])) problems.push(`${SECRET_KEYS.key} is missing or does not match ${SECRET_KEYS.cert}`);
  if (!leaf.cert.checkIssued(ca) || !leaf.cert.verify(ca.publicKey))
    problems.push(`${SECRET_KEYS.cert} is not signed by ${SECRET_KEYS.ca}`);
  // A pair that already ends with its CA cannot be renewed into a longer one: the CA rotation will.
  const caNotAfter = Date.parse(ca.validTo);
  if (leaf.notAfter - now <= s.leafRenewBeforeMs && leaf.notAfter < caNotAfter)
    problems.push(`the serving certificate expires ${leaf.cert.validTo}`);
  const missing = webhookDnsNames(s.service, s.namespace).filter((n) => leaf.cert.checkHost(n, { subject: 'never' }) === undefined);
  if (missing.length > 0) problems.push(`the serving certificate does not cover ${missing.join(', ')}`);
  return problems;
}

function previousUntil(secret: CertSecretState): number {
  const at = Date.parse(secret.annotations[ANNOTATION_PREVIOUS_UNTIL] ?? '');
  return Number.isNaN(at) ? 0 : at;
}

/** The CAs every caBundle must hold, in a stable order: retired, current, next. */
export function trustedAuthorities(secret: CertSecretState, now: Date): X509Certificate[] {
  const t = now.getTime();
  const previous = previousUntil(secret) > t ? certificatesIn(secret.data[SECRET_KEYS.previousCa]) : [];
  const current = certificatesIn(secret.data[SECRET_KEYS.ca]).slice(0, 1);
  const next = certificatesIn(secret.data[SECRET_KEYS.nextCa]).slice(0, 1);
  const seen = new Set<string>();
  return [...previous, ...current, ...next].filter(
    (c) => c.ca && Date.parse(c.validTo) > t && !seen.has(fingerprint(c)) && seen.add(fingerprint(c)),
  );
}

const bundleText = (cas: X509Certificate[]) => `${cas.map(pemOf).join('\n')}\n`;

function sameTrust(bundle: string | undefined, cas: X509Certificate[]): boolean {
  const have = certificatesIn(bundle).map(fingerprint).sort();
  const want = cas.map(fingerprint).sort();
  return have.length === want.length && have.every((f, i) => f === want[i]);
}

function containsAuthority(bundle: string | undefined, ca: X509Certificate): boolean {
  return certificatesIn(bundle).some((c) => fingerprint(c) === fingerprint(ca));
}

/**
 * The next thing to do. Order: an unusable CA is replaced at once (with a new serving pair);
 * an expiring CA gets a successor, which signs only once every caBundle trusts it for
 * caTrustSettleMs; an expiring or broken serving pair is renewed; a retired CA is forgotten
 * after its date; finally every caBundle is made to hold exactly the trusted CAs.
 */
export function decideCertActions(secret: CertSecretState, configs: WebhookConfigState[], now: Date, s: CertSettings): CertActions {
  const t = now.getTime();
  const { data, annotations } = secret;
  const caIssues = authorityProblems(SECRET_KEYS.ca, data[SECRET_KEYS.ca], data[SECRET_KEYS.caKey], t);
  if (caIssues.length > 0) {
    const empty = Object.values(data).every((v) => v.trim() === '');
    // certs/generate.ts keeps ca.key off the cluster: taking over from it is no repair.
    const handedOver = !data[SECRET_KEYS.caKey] && caIssues.every((p) => p.startsWith(`the key of ${SECRET_KEYS.ca}`));
    return { secret: { step: 'issue-authority', reasons: caIssues, repair: !empty && !handedOver }, bundles: [] };
  }
  const ca = parseCert(data[SECRET_KEYS.ca])!;
  const wakeTimes: number[] = [];

  const hasNext = data[SECRET_KEYS.nextCa] !== undefined || data[SECRET_KEYS.nextCaKey] !== undefined;
  const nextIssues = hasNext ? authorityProblems(SECRET_KEYS.nextCa, data[SECRET_KEYS.nextCa], data[SECRET_KEYS.nextCaKey], t) : [];
  if (hasNext && nextIssues.length > 0) return { secret: { step: 'tidy', reasons: nextIssues }, bundles: [] };
  const next = hasNext ? parseCert(data[SECRET_KEYS.nextCa]) : undefined;

  if (next) {
    const trustedEverywhere = configs.every((c) => c.caBundles.every((b) => containsAuthority(b, next.cert)));
    const since = Date.parse(annotations[ANNOTATION_NEXT_SINCE] ?? '');
    const settled = Number.isNaN(since) ? 0 : since + s.caTrustSettleMs;
    if (trustedEverywhere && settled <= t) {
      return { secret: { step: 'promote-next-authority', reasons: [`${SECRET_KEYS.ca} expires ${ca.cert.validTo}`] }, bundles: [] };
    }
    if (trustedEverywhere) wakeTimes.push(settled);
  } else if (ca.notAfter - t <= s.caRenewBeforeMs) {
    return { secret: { step: 'introduce-next-authority', reasons: [`${SECRET_KEYS.ca} expires ${ca.cert.validTo}`] }, bundles: [] };
  } else {
    wakeTimes.push(ca.notAfter - s.caRenewBeforeMs);
  }

  const leafIssues = leafProblems(data, ca.cert, t, s);
  if (leafIssues.length > 0) return { secret: { step: 'renew-leaf', reasons: leafIssues }, bundles: [] };
  wakeTimes.push(parseCert(data[SECRET_KEYS.cert])!.notAfter - s.leafRenewBeforeMs);

  const until = previousUntil(secret);
  const hasPrevious = data[SECRET_KEYS.previousCa] !== undefined;
  if (hasPrevious && until <= t) return { secret: { step: 'tidy', reasons: ['the retired CA is past its date'] }, bundles: [] };
  if (hasPrevious) wakeTimes.push(until);

  const trusted = trustedAuthorities(secret, now);
  const bundles = configs
    .filter((c) => c.caBundles.some((b) => !sameTrust(b, trusted)))
    .map((c) => ({
      kind: c.kind,
      name: c.name,
      caBundle: bundleText(trusted),
      reason: c.caBundles.some((b) => certificatesIn(b).length === 0) ? 'a caBundle is missing or unreadable' : 'the trusted CAs changed',
    }));
  return { bundles, ...(wakeTimes.length > 0 ? { recheckAt: new Date(Math.min(...wakeTimes)) } : {}) };
}

/** What was generated for a step: a new CA and/or a serving pair (PEM). */
export interface Generated {
  authority?: { certPem: string; keyPem: string };
  leaf?: { certPem: string; keyPem: string };
}

/** Which material a step needs, and who signs the serving pair. */
export function materialFor(
  step: SecretStep,
  data: Record<string, string>,
): { newAuthority: boolean; leafSigner?: 'new' | 'current' | 'next' } {
  switch (step.step) {
    case 'issue-authority':
      return { newAuthority: true, leafSigner: 'new' };
    case 'introduce-next-authority':
      return { newAuthority: true };
    case 'promote-next-authority':
      return { newAuthority: false, leafSigner: 'next' };
    case 'renew-leaf':
      return { newAuthority: false, leafSigner: data[SECRET_KEYS.ca] ? 'current' : 'new' };
    case 'tidy':
      return { newAuthority: false };
  }
}

/**
 * The Secret after a step, from what was generated for it. A CA retired from signing stays
 * trusted until the serving certificate it signed expires (no later than the CA itself).
 */
export function secretAfter(
  secret: CertSecretState,
  configs: WebhookConfigState[],
  step: SecretStep,
  generated: Generated,
  now: Date,
  s: CertSettings,
): CertSecretState {
  const t = now.getTime();
  const data = { ...secret.data };
  const annotations = { ...secret.annotations };
  const need = (what: keyof Generated) => {
    const g = generated[what];
    if (!g) throw new Error(`step ${step.step} needs a generated ${what}`);
    return g;
  };
  const retire = (cas: X509Certificate[], until: number) => {
    const keep = cas.filter((c) => c.ca && Date.parse(c.validTo) > t);
    if (keep.length === 0) return;
    const previous = previousUntil(secret) > t ? certificatesIn(data[SECRET_KEYS.previousCa]) : [];
    const all = [...previous, ...keep].filter((c, i, list) => list.findIndex((x) => fingerprint(x) === fingerprint(c)) === i);
    data[SECRET_KEYS.previousCa] = bundleText(all);
    annotations[ANNOTATION_PREVIOUS_UNTIL] = new Date(Math.max(until, previousUntil(secret))).toISOString();
  };
  const servedUntil = () => {
    const leaf = parseCert(data[SECRET_KEYS.cert]);
    return leaf && leaf.notAfter > t ? leaf.notAfter : t + s.leafValidityMs;
  };
  const setLeaf = () => {
    const leaf = need('leaf');
    data[SECRET_KEYS.cert] = leaf.certPem;
    data[SECRET_KEYS.key] = leaf.keyPem;
  };

  switch (step.step) {
    case 'issue-authority': {
      // Whatever the pods serve now chains to a CA in the caBundles (or the old ca.crt):
      // keep trusting those until that pair could have expired, so a repair is no outage.
      const old = [...certificatesIn(data[SECRET_KEYS.ca]), ...configs.flatMap((c) => c.caBundles.flatMap((b) => certificatesIn(b)))];
      const until = t + s.leafValidityMs;
      for (const k of Object.values(SECRET_KEYS)) delete data[k];
      delete annotations[ANNOTATION_NEXT_SINCE];
      delete annotations[ANNOTATION_PREVIOUS_UNTIL];
      const authority = need('authority');
      data[SECRET_KEYS.ca] = authority.certPem;
      data[SECRET_KEYS.caKey] = authority.keyPem;
      setLeaf();
      const fresh = fingerprint(new X509Certificate(authority.certPem));
      retire(
        old.filter((c) => fingerprint(c) !== fresh),
        until,
      );
      break;
    }
    case 'introduce-next-authority': {
      const authority = need('authority');
      data[SECRET_KEYS.nextCa] = authority.certPem;
      data[SECRET_KEYS.nextCaKey] = authority.keyPem;
      annotations[ANNOTATION_NEXT_SINCE] = now.toISOString();
      break;
    }
    case 'promote-next-authority': {
      const old = certificatesIn(data[SECRET_KEYS.ca]).slice(0, 1);
      const until = Math.min(servedUntil(), ...old.map((c) => Date.parse(c.validTo)));
      data[SECRET_KEYS.ca] = data[SECRET_KEYS.nextCa]!;
      data[SECRET_KEYS.caKey] = data[SECRET_KEYS.nextCaKey]!;
      delete data[SECRET_KEYS.nextCa];
      delete data[SECRET_KEYS.nextCaKey];
      delete annotations[ANNOTATION_NEXT_SINCE];
      setLeaf();
      retire(old, until);
      break;
    }
    case 'renew-leaf':
      setLeaf();
      break;
    case 'tidy': {
      if (authorityProblems(SECRET_KEYS.nextCa, data[SECRET_KEYS.nextCa], data[SECRET_KEYS.nextCaKey], t).length > 0) {
        delete data[SECRET_KEYS.nextCa];
        delete data[SECRET_KEYS.nextCaKey];
        delete annotations[ANNOTATION_NEXT_SINCE];
      }
      if (previousUntil(secret) <= t) {
        delete data[SECRET_KEYS.previousCa];
        delete annotations[ANNOTATION_PREVIOUS_UNTIL];
      }
      break;
    }
  }
  return { data, annotations };
}
