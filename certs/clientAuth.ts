// The API server's identity towards the webhook: a client CA of its own (the webhook's
// --client-ca), a client certificate it signs for kube-apiserver, and the two files
// kube-apiserver reads to present it — an AdmissionConfiguration (--admission-control-config-file)
// whose WebhookAdmissionConfiguration names a kubeconfig, and that kubeconfig, whose users are
// matched by webhook host (docs/operations.md, "Authenticating the API server to the webhook").
import { X509Certificate } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { stringify } from 'yaml';
import { createCA, createClientCert, type CertPair } from './pki.ts';
import { caProblems, keyMatches, readOptional, RENEW_BEFORE_DAYS, writeAtomically } from './webhook.ts';

/** The subject CN of the API server's client certificate (the User-Agent kube-apiserver sends to webhooks is the same). */
export const API_SERVER_CLIENT_NAME = 'kube-apiserver-admission';
const DAY_MS = 24 * 60 * 60 * 1000;

/** File names in the output directory. client-ca.crt is what the webhook trusts; the others stay with the API server (and the key of the CA with whoever issues). */
export const CLIENT_AUTH_FILES = {
  caCert: 'client-ca.crt',
  caKey: 'client-ca.key',
  cert: 'apiserver-client.crt',
  key: 'apiserver-client.key',
} as const;

export interface ClientAuthCerts {
  ca: CertPair;
  client: CertPair;
}

export interface ClientAuthCertOptions {
  /** Sign with this CA instead of creating one (renewal keeps the webhook's --client-ca unchanged). */
  ca?: CertPair;
  commonName?: string;
  validityDays?: number;
  caValidityDays?: number;
  now?: Date;
}

/** A client CA (new unless given) and the API server's client certificate it signs. */
export function generateClientAuthCerts({
  ca,
  commonName = API_SERVER_CLIENT_NAME,
  validityDays,
  caValidityDays,
  now,
}: ClientAuthCertOptions = {}): ClientAuthCerts {
  const authority =
    ca ??
    createCA({
      commonName: 'planwarden webhook client CA',
      ...(caValidityDays !== undefined ? { validityDays: caValidityDays } : {}),
      ...(now ? { now } : {}),
    });
  const client = createClientCert({
    ca: authority,
    commonName,
    ...(validityDays !== undefined ? { validityDays } : {}),
    ...(now ? { now } : {}),
  });
  return { ca: authority, client };
}

/** Why the client pair should be replaced; empty when it is fine. */
export function clientProblems(
  certs: { ca: CertPair; client: Partial<CertPair> },
  {
    commonName = API_SERVER_CLIENT_NAME,
    now,
    renewBeforeDays = RENEW_BEFORE_DAYS,
  }: { commonName?: string; now: Date; renewBeforeDays?: number },
): string[] {
  if (certs.client.certPem === undefined) return [`${CLIENT_AUTH_FILES.cert} is missing`];
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certs.client.certPem);
  } catch {
    return [`${CLIENT_AUTH_FILES.cert} is not a PEM certificate`];
  }
  const ca = new X509Certificate(certs.ca.certPem);
  const problems: string[] = [];
  if (!keyMatches(cert, certs.client.keyPem))
    problems.push(`${CLIENT_AUTH_FILES.key} is missing or does not match ${CLIENT_AUTH_FILES.cert}`);
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey))
    problems.push(`${CLIENT_AUTH_FILES.cert} is not signed by ${CLIENT_AUTH_FILES.caCert}`);
  if (new Date(cert.validTo).getTime() - now.getTime() < renewBeforeDays * DAY_MS)
    problems.push(`the client certificate expires ${cert.validTo}`);
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1];
  if (cn !== commonName) problems.push(`the client certificate is for ${JSON.stringify(cn ?? '')}, not ${JSON.stringify(commonName)}`);
  return problems;
}

export type ClientAuthAction = 'created' | 'renewed' | 'kept';

export interface EnsureClientAuthResult {
  /** created: a new CA (the webhook's --client-ca changes); renewed: a new client pair from the same CA; kept: nothing written. */
  action: ClientAuthAction;
  reasons: string[];
  certs: ClientAuthCerts;
  files: Record<keyof typeof CLIENT_AUTH_FILES, string>;
}

/**
 * Make `dir` hold a usable client CA and API server client pair, touching as little as
 * possible: a valid CA is kept (so the webhook's --client-ca stays valid), the client pair
 * is replaced when asked to, or when it is invalid, expiring, or for another name.
 */
export async function ensureClientAuthCerts(o: {
  dir: string;
  renew?: boolean;
  commonName?: string;
  validityDays?: number;
  renewBeforeDays?: number;
  now?: Date;
}): Promise<EnsureClientAuthResult> {
  const now = o.now ?? new Date();
  const path = (f: keyof typeof CLIENT_AUTH_FILES) => join(o.dir, CLIENT_AUTH_FILES[f]);
  const files = { caCert: path('caCert'), caKey: path('caKey'), cert: path('cert'), key: path('key') };
  const [caCert, caKey, cert, key] = await Promise.all([files.caCert, files.caKey, files.cert, files.key].map(readOptional));
  const existingCA = { ...(caCert !== undefined ? { certPem: caCert } : {}), ...(caKey !== undefined ? { keyPem: caKey } : {}) };
  const existingClient = { ...(cert !== undefined ? { certPem: cert } : {}), ...(key !== undefined ? { keyPem: key } : {}) };
  const base = {
    now,
    ...(o.commonName !== undefined ? { commonName: o.commonName } : {}),
    ...(o.validityDays !== undefined ? { validityDays: o.validityDays } : {}),
  };
  const write = async (certs: ClientAuthCerts, withCA: boolean) => {
    await mkdir(o.dir, { recursive: true, mode: 0o700 });
    if (withCA) {
      await writeAtomically(files.caKey, certs.ca.keyPem, 0o600);
      await writeAtomically(files.caCert, certs.ca.certPem, 0o644);
    }
    await writeAtomically(files.key, certs.client.keyPem, 0o600);
    await writeAtomically(files.cert, certs.client.certPem, 0o644);
  };

  // caProblems names the webhook's file names; say which CA this is.
  const caIssues = caProblems(existingCA, now, o.renewBeforeDays).map((p) => `client CA: ${p}`);
  if (caIssues.length > 0) {
    const certs = generateClientAuthCerts(base);
    await write(certs, true);
    return { action: 'created', reasons: caIssues, certs, files };
  }
  const ca = existingCA as CertPair;
  const issues = clientProblems(
    { ca, client: existingClient },
    { ...base, ...(o.renewBeforeDays !== undefined ? { renewBeforeDays: o.renewBeforeDays } : {}) },
  );
  if (o.renew) issues.unshift('renewal requested');
  if (issues.length > 0) {
    const certs = generateClientAuthCerts({ ...base, ca });
    await write(certs, false);
    return { action: 'renewed', reasons: issues, certs, files };
  }
  return { action: 'kept', reasons: [], certs: { ca, client: existingClient as CertPair }, files };
}

/** The webhook hosts the API server matches a kubeconfig user against, for a Service webhook. */
export function webhookServiceHost(service: string, namespace: string): string {
  return `${service}.${namespace}.svc`;
}

/**
 * The kubeconfig kube-apiserver reads (WebhookAdmissionConfiguration.kubeConfigFile): one user
 * per webhook host presenting the client certificate. A user's name is matched against
 * `<service>.<namespace>.svc` (port 443) or `<service>.<namespace>.svc:<port>`, `host:port` for
 * a URL webhook, `*.<suffix>` wildcards, and `*` for every webhook without a user of its own.
 * Paths must be absolute: the API server reads them itself.
 */
export function renderAdmissionKubeconfig({
  hosts,
  certFile,
  keyFile,
}: {
  hosts: readonly string[];
  certFile: string;
  keyFile: string;
}): string {
  if (hosts.length === 0) throw new Error('name at least one webhook host');
  for (const f of [certFile, keyFile]) if (!isAbsolute(f)) throw new Error(`${f} must be an absolute path: kube-apiserver reads it`);
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    users: hosts.map((name) => ({ name, user: { 'client-certificate': certFile, 'client-key': keyFile } })),
  });
}

/** The file for kube-apiserver's --admission-control-config-file: both webhook admission plugins read `kubeconfigFile`. */
export function renderAdmissionConfiguration(kubeconfigFile: string): string {
  if (!isAbsolute(kubeconfigFile)) throw new Error(`${kubeconfigFile} must be an absolute path: kube-apiserver requires it`);
  const configuration = { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: kubeconfigFile };
  return stringify({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AdmissionConfiguration',
    plugins: [
      { name: 'ValidatingAdmissionWebhook', configuration },
      { name: 'MutatingAdmissionWebhook', configuration },
    ],
  });
}

/** The Secret the webhook mounts as its --client-ca: the CA certificate only, never its key. */
export function renderClientCASecret({ name, namespace, caPem }: { name: string; namespace: string; caPem: string }) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels: { 'app.kubernetes.io/name': 'planwarden', 'app.kubernetes.io/component': 'webhook' } },
    type: 'Opaque',
    data: { 'ca.crt': Buffer.from(caPem, 'utf8').toString('base64') },
  };
}
