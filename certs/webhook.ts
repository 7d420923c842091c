// The webhook's own TLS material: a CA and a serving certificate for its Service, the files
// the Deployment mounts, the Secret that carries them, and the caBundle the apiserver trusts.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { createCA, createServingCert, type CertPair } from './pki.ts';

export const DEFAULT_SERVICE = 'planwarden-webhook';
export const DEFAULT_NAMESPACE = 'planwarden-system';
/** Renew a serving certificate (or CA) that expires within this many days. */
export const RENEW_BEFORE_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The names the apiserver (and a port-forward, and local tests) may use to reach the Service. */
export function webhookDnsNames(service: string, namespace: string): string[] {
  return [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`, service, `${service}.${namespace}`, 'localhost'];
}
export const WEBHOOK_IP_ADDRESSES = ['127.0.0.1'];

export interface WebhookCerts {
  ca: CertPair;
  serving: CertPair;
}

export interface WebhookCertOptions {
  service: string;
  namespace: string;
  /** Sign with this CA instead of creating one (renewal keeps the caBundle unchanged). */
  ca?: CertPair;
  validityDays?: number;
  caValidityDays?: number;
  now?: Date;
}

export function generateWebhookCerts({ service, namespace, ca, validityDays, caValidityDays, now }: WebhookCertOptions): WebhookCerts {
  const authority =
    ca ??
    createCA({
      commonName: `${service}.${namespace} webhook CA`,
      ...(caValidityDays !== undefined ? { validityDays: caValidityDays } : {}),
      ...(now ? { now } : {}),
    });
  const serving = createServingCert({
    ca: authority,
    dnsNames: webhookDnsNames(service, namespace),
    ipAddresses: WEBHOOK_IP_ADDRESSES,
    ...(validityDays !== undefined ? { validityDays } : {}),
    ...(now ? { now } : {}),
  });
  return { ca: authority, serving };
}

/** File names in the output directory; the first three are also the Secret's keys. */
export const WEBHOOK_CERT_FILES = { caCert: 'ca.crt', cert: 'tls.crt', key: 'tls.key', caKey: 'ca.key' } as const;

/** Write through a temporary file and rename, so a watcher never reads half a file. */
export async function writeAtomically(path: string, content: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, content, { mode });
  await rename(tmp, path);
}

/** Writes ca.crt and tls.crt (0644), tls.key and ca.key (0600); returns their paths. */
export async function writeWebhookCerts(dir: string, certs: WebhookCerts): Promise<Record<keyof typeof WEBHOOK_CERT_FILES, string>> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = (f: keyof typeof WEBHOOK_CERT_FILES) => join(dir, WEBHOOK_CERT_FILES[f]);
  // Key before certificate: a server watching the pair sees a mismatch at worst, never an old key
  // served with a new certificate for good.
  await writeAtomically(path('caKey'), certs.ca.keyPem, 0o600);
  await writeAtomically(path('caCert'), certs.ca.certPem, 0o644);
  await writeAtomically(path('key'), certs.serving.keyPem, 0o600);
  await writeAtomically(path('cert'), certs.serving.certPem, 0o644);
  return { caCert: path('caCert'), cert: path('cert'), key: path('key'), caKey: path('caKey') };
}

export async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** The files written by writeWebhookCerts, as far as they exist. */
export async function readWebhookCerts(dir: string): Promise<{ ca: Partial<CertPair>; serving: Partial<CertPair> }> {
  const [caCert, caKey, cert, key] = await Promise.all(
    (['caCert', 'caKey', 'cert', 'key'] as const).map((f) => readOptional(join(dir, WEBHOOK_CERT_FILES[f]))),
  );
  return {
    ca: { ...(caCert !== undefined ? { certPem: caCert } : {}), ...(caKey !== undefined ? { keyPem: caKey } : {}) },
    serving: { ...(cert !== undefined ? { certPem: cert } : {}), ...(key !== undefined ? { keyPem: key } : {}) },
  };
}

function parse(pem: string | undefined, what: string): X509Certificate | string {
  if (pem === undefined) return `${what} is missing`;
  try {
    return new X509Certificate(pem);
  } catch {
    return `${what} is not a PEM certificate`;
  }
}

export function keyMatches(cert: X509Certificate, keyPem: string | undefined): boolean {
  if (keyPem === undefined) return false;
  try {
    return cert.checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

function expiresSoon(cert: X509Certificate, now: Date, renewBeforeDays: number): boolean {
  return new Date(cert.validTo).getTime() - now.getTime() < renewBeforeDays * DAY_MS;
}

/** Why the CA cannot keep signing; empty when it can. */
export function caProblems(ca: Partial<CertPair> | undefined, now: Date, renewBeforeDays = RENEW_BEFORE_DAYS): string[] {
  const cert = parse(ca?.certPem, WEBHOOK_CERT_FILES.caCert);
  if (typeof cert === 'string') return [cert];
  const problems: string[] = [];
  if (!cert.ca) problems.push(`${WEBHOOK_CERT_FILES.caCert} is not a CA certificate`);
  if (!keyMatches(cert, ca?.keyPem)) problems.push(`${WEBHOOK_CERT_FILES.caKey} is missing or does not match ${WEBHOOK_CERT_FILES.caCert}`);
  if (expiresSoon(cert, now, renewBeforeDays)) problems.push(`the CA expires ${cert.validTo}`);
  return problems;
}

/** Why the serving pair should be replaced; empty when it is fine for this Service. */
export function servingProblems(
  certs: { ca: CertPair; serving: Partial<CertPair> },
  {
    service,
    namespace,
    now,
    renewBeforeDays = RENEW_BEFORE_DAYS,
  }: { service: string; namespace: string; now: Date; renewBeforeDays?: number },
): string[] {
  const cert = parse(certs.serving.certPem, WEBHOOK_CERT_FILES.cert);
  if (typeof cert === 'string') return [cert];
  const ca = new X509Certificate(certs.ca.certPem);
  const problems: string[] = [];
  if (!keyMatches(cert, certs.serving.keyPem))
    problems.push(`${WEBHOOK_CERT_FILES.key} is missing or does not match ${WEBHOOK_CERT_FILES.cert}`);
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey))
    problems.push(`${WEBHOOK_CERT_FILES.cert} is not signed by ${WEBHOOK_CERT_FILES.caCert}`);
  if (expiresSoon(cert, now, renewBeforeDays)) problems.push(`the serving certificate expires ${cert.validTo}`);
  const missing = webhookDnsNames(service, namespace).filter((n) => cert.checkHost(n, { subject: 'never' }) === undefined);
  if (missing.length > 0) problems.push(`the serving certificate does not cover ${missing.join(', ')}`);
  return problems;
}

export type EnsureAction = 'created' | 'renewed' | 'kept';

export interface EnsureResult {
  /** created: a new CA (the caBundle changes); renewed: a new serving pair from the same CA; kept: nothing written. */
  action: EnsureAction;
  reasons: string[];
  certs: WebhookCerts;
  files: Record<keyof typeof WEBHOOK_CERT_FILES, string>;
}

export interface EnsureOptions {
  dir: string;
  service: string;
  namespace: string;
  /** Issue a new serving certificate even if the current one is fine. */
  renew?: boolean;
  validityDays?: number;
  renewBeforeDays?: number;
  now?: Date;
}

/**
 * Make `dir` hold a usable CA and serving pair for the Service, touching as little as possible:
 * an existing valid CA is kept (so the caBundle in the cluster stays valid), a serving pair
 * is replaced when asked to, or when it is invalid, expiring or for another Service.
 */
export async function ensureWebhookCerts(o: EnsureOptions): Promise<EnsureResult> {
  const now = o.now ?? new Date();
  const files = {
    caCert: join(o.dir, WEBHOOK_CERT_FILES.caCert),
    cert: join(o.dir, WEBHOOK_CERT_FILES.cert),
    key: join(o.dir, WEBHOOK_CERT_FILES.key),
    caKey: join(o.dir, WEBHOOK_CERT_FILES.caKey),
  };
  const existing = await readWebhookCerts(o.dir);
  const base = {
    service: o.service,
    namespace: o.namespace,
    now,
    ...(o.validityDays !== undefined ? { validityDays: o.validityDays } : {}),
  };

  const caIssues = caProblems(existing.ca, now, o.renewBeforeDays);
  if (caIssues.length > 0) {
    const certs = generateWebhookCerts(base);
    return { action: 'created', reasons: caIssues, certs, files: await writeWebhookCerts(o.dir, certs) };
  }
  const ca = existing.ca as CertPair;
  const serving = existing.serving;
  const issues = servingProblems(
    { ca, serving },
    { ...base, ...(o.renewBeforeDays !== undefined ? { renewBeforeDays: o.renewBeforeDays } : {}) },
  );
  if (o.renew) issues.unshift('renewal requested');
  if (issues.length > 0) {
    const certs = generateWebhookCerts({ ...base, ca });
    return { action: 'renewed', reasons: issues, certs, files: await writeWebhookCerts(o.dir, certs) };
  }
  return { action: 'kept', reasons: [], certs: { ca, serving: serving as CertPair }, files };
}

const base64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

export interface TlsSecret {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  type: 'kubernetes.io/tls';
  data: { 'tls.crt': string; 'tls.key': string; 'ca.crt': string };
}

/** The Secret the webhook Deployment mounts. The CA key stays out of the cluster. */
export function renderTlsSecret({ name, namespace, certs }: { name: string; namespace: string; certs: WebhookCerts }): TlsSecret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace,
      labels: { 'app.kubernetes.io/name': 'planwarden', 'app.kubernetes.io/component': 'webhook' },
    },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': base64(certs.serving.certPem), 'tls.key': base64(certs.serving.keyPem), 'ca.crt': base64(certs.ca.certPem) },
  };
}

const WEBHOOK_CONFIG_KINDS = ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'];

function isWebhookConfiguration(o: unknown): o is { kind: string; webhooks?: { clientConfig?: Record<string, unknown> }[] } {
  return typeof o === 'object' && o !== null && WEBHOOK_CONFIG_KINDS.includes((o as { kind?: unknown }).kind as string);
}

/**
 * Copies of `objects` where every webhook of every Validating/MutatingWebhookConfiguration
 * trusts `caPem`; other objects are returned as they are.
 */
export function injectCaBundle<T>(objects: readonly T[], caPem: string): T[] {
  const caBundle = base64(caPem);
  return objects.map((o) => {
    if (!isWebhookConfiguration(o)) return o;
    const copy = structuredClone(o);
    for (const w of copy.webhooks ?? []) w.clientConfig = { ...w.clientConfig, caBundle };
    return copy;
  });
}

/** injectCaBundle on YAML text (one or more documents), keeping comments and the other documents. */
export function injectCaBundleIntoYaml(text: string, caPem: string): string {
  const caBundle = base64(caPem);
  const docs = parseAllDocuments(text);
  return docs
    .map((doc, i) => {
      if ('errors' in doc && doc.errors.length > 0) throw new Error(`YAML document ${i + 1}: ${doc.errors[0]!.message}`);
      if (isWebhookConfiguration(doc.toJS())) {
        const count = (doc.toJS() as { webhooks?: unknown[] }).webhooks?.length ?? 0;
        for (let w = 0; w < count; w++) doc.setIn(['webhooks', w, 'clientConfig', 'caBundle'], caBundle);
      }
      const out = doc.toString({ flowCollectionPadding: false, lineWidth: 0 });
      return i === 0 || doc.directives?.docStart ? out : `---\n${out}`;
    })
    .join('');
}
