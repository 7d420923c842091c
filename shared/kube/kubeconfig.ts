// Credentials for the long-running processes (controller, webhook) without
// @kubernetes/client-node: its KubeConfig imports the package's generated API modules, ~20 MiB
// of heap that a process holding 10,000 Instances cannot spare (issue 40). What those
// processes are given — the in-cluster ServiceAccount, or a kubeconfig with a token or a client
// certificate — is read here; a kubeconfig whose user needs more (exec plugins, auth
// providers, basic auth, impersonation) or whose cluster names a proxy is handed to
// client-node's KubeConfig, loaded only then, so nothing that worked before stops working.
import fs from 'node:fs';
import type https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { KubeCredentials } from './client.ts';

/** Bytes given in the kubeconfig itself, or a file read again when older than FILE_REFRESH_MS. */
export type Source = { bytes: Buffer } | { file: string };

/** What a request to the API server needs, resolved from a kubeconfig or the in-cluster environment. */
export interface Access {
  server: string;
  ca?: Source;
  cert?: Source;
  key?: Source;
  /** A bearer token; a file (tokenFile, the in-cluster token) is re-read for bound-token rotation. */
  token?: Source;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
}

export type Resolution =
  | { kind: 'access'; access: Access }
  /** A kubeconfig this loader does not read itself; client-node's KubeConfig does. */
  | { kind: 'unsupported'; reason: string }
  | { kind: 'invalid'; reason: string };

/** One kubeconfig file's text and where it lies (relative file paths in it are relative to its folder). */
export interface KubeconfigText {
  path: string;
  text: string;
}

/** A ServiceAccount's mounted token, CA and namespace: the in-cluster credentials. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** Files (token, CA, certificate, key) are read again this long after they were last read. */
export const FILE_REFRESH_MS = 60_000;

const UNSUPPORTED_USER_FIELDS = ['exec', 'auth-provider', 'username', 'password', 'as', 'as-groups', 'as-uid', 'as-user-extra'];

interface Named {
  name: string;
  value: Record<string, unknown>;
  /** The folder of the file it came from. */
  dir: string;
}

/**
 * The access a kubeconfig's context (`context`, else current-context) gives. Several files are
 * merged as kubectl merges KUBECONFIG: the first file to set current-context wins, and the
 * first cluster, user or context of a name wins.
 */
export function resolveKubeconfig(files: readonly KubeconfigText[], context?: string): Resolution {
  const clusters = new Map<string, Named>();
  const users = new Map<string, Named>();
  const contexts = new Map<string, Named>();
  let current: string | undefined;
  for (const file of files) {
    let doc: unknown;
    try {
      doc = parseYaml(file.text);
    } catch (err) {
      return { kind: 'invalid', reason: `${file.path}: not YAML: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (doc === null || doc === undefined) continue;
    if (!isRecord(doc)) return { kind: 'invalid', reason: `${file.path}: not a kubeconfig (a mapping is expected)` };
    const dir = path.dirname(file.path);
    for (const [field, into, inner] of [
      ['clusters', clusters, 'cluster'],
      ['users', users, 'user'],
      ['contexts', contexts, 'context'],
    ] as const) {
      const list = doc[field] ?? [];
      if (!Array.isArray(list)) return { kind: 'invalid', reason: `${file.path}: ${field} is not a list` };
      for (const entry of list) {
        if (!isRecord(entry) || typeof entry.name !== 'string')
          return { kind: 'invalid', reason: `${file.path}: an entry of ${field} has no name` };
        const value = entry[inner] ?? {};
        if (!isRecord(value)) return { kind: 'invalid', reason: `${file.path}: ${field} ${entry.name}: ${inner} is not a mapping` };
        if (!into.has(entry.name)) into.set(entry.name, { name: entry.name, value, dir });
      }
    }
    const named = doc['current-context'];
    if (current === undefined && typeof named === 'string' && named !== '') current = named;
  }

  const contextName = context ?? current;
  if (!contextName) return { kind: 'invalid', reason: 'the kubeconfig names no current-context' };
  const ctx = contexts.get(contextName);
  if (!ctx) return { kind: 'invalid', reason: `the kubeconfig has no context ${contextName}` };
  const clusterName = ctx.value.cluster;
  const cluster = typeof clusterName === 'string' ? clusters.get(clusterName) : undefined;
  if (!cluster) return { kind: 'invalid', reason: `context ${contextName}: its cluster ${String(clusterName)} is not in the kubeconfig` };
  const userName = ctx.value.user;
  // A context without a user is anonymous, as kubectl has it.
  const user: Named =
    typeof userName === 'string' && userName !== ''
      ? (users.get(userName) ?? { name: userName, value: {}, dir: cluster.dir })
      : { name: '', value: {}, dir: cluster.dir };

  const c = cluster.value;
  if (typeof c.server !== 'string' || c.server === '') return { kind: 'invalid', reason: `cluster ${cluster.name} has no server` };
  if (c['proxy-url'] !== undefined) return { kind: 'unsupported', reason: `cluster ${cluster.name} names a proxy-url` };
  const u = user.value;
  const extra = UNSUPPORTED_USER_FIELDS.find((f) => u[f] !== undefined && u[f] !== null && u[f] !== '');
  if (extra) return { kind: 'unsupported', reason: `user ${user.name} uses ${extra}` };

  const access: Access = { server: c.server, insecureSkipTlsVerify: c['insecure-skip-tls-verify'] === true };
  if (typeof c['tls-server-name'] === 'string' && c['tls-server-name'] !== '') access.tlsServerName = c['tls-server-name'];
  const pairs: [keyof Pick<Access, 'ca' | 'cert' | 'key' | 'token'>, Named, string, string, 'base64' | 'utf8'][] = [
    ['ca', cluster, 'certificate-authority', 'certificate-authority-data', 'base64'],
    ['cert', user, 'client-certificate', 'client-certificate-data', 'base64'],
    ['key', user, 'client-key', 'client-key-data', 'base64'],
    ['token', user, 'tokenFile', 'token', 'utf8'],
  ];
  for (const [key, owner, fileField, dataField, encoding] of pairs) {
    const file = owner.value[fileField];
    const data = owner.value[dataField];
    // As client-node and kubectl: a file wins over data for certificates; an inline token over tokenFile.
    const fileFirst = key !== 'token';
    const fromFile = typeof file === 'string' && file !== '' ? { file: path.resolve(owner.dir, file) } : undefined;
    const fromData = typeof data === 'string' && data !== '' ? { bytes: Buffer.from(data, encoding) } : undefined;
    const source = fileFirst ? (fromFile ?? fromData) : (fromData ?? fromFile);
    if (source) access[key] = source;
  }
  if (access.cert && !access.key) return { kind: 'invalid', reason: `user ${user.name} has a client certificate but no client key` };
  return { kind: 'access', access };
}

/** The in-cluster access (KUBERNETES_SERVICE_HOST/PORT and the mounted ServiceAccount), as client-go builds it. */
export function inClusterAccess(env: Record<string, string | undefined>, dir = SERVICE_ACCOUNT_DIR): Resolution {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) return { kind: 'invalid', reason: 'in cluster, but KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT is not set' };
  const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
  const server = `${scheme}://${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
  return {
    kind: 'access',
    access: { server, ca: { file: path.join(dir, 'ca.crt') }, token: { file: path.join(dir, 'token') }, insecureSkipTlsVerify: false },
  };
}

/** Reads a file; the seam the tests replace. */
export type ReadFile = (file: string) => Buffer;

/**
 * KubeCredentials of an Access: TLS material and the bearer token, with files read again
 * when older than FILE_REFRESH_MS (a rotated bound token, a renewed client certificate).
 */
export class AccessCredentials implements KubeCredentials {
  private readonly files = new Map<string, { bytes: Buffer; readAt: number }>();

  constructor(
    readonly access: Access,
    private readonly readFile: ReadFile = (file) => fs.readFileSync(file),
    private readonly now: () => number = Date.now,
  ) {}

  getCurrentCluster(): { server: string } {
    return { server: this.access.server };
  }

  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    const { ca, cert, key, token, insecureSkipTlsVerify, tlsServerName } = this.access;
    if (insecureSkipTlsVerify) options.rejectUnauthorized = false;
    if (tlsServerName) options.servername = tlsServerName;
    if (ca) options.ca = this.bytes(ca);
    if (cert) options.cert = this.bytes(cert);
    if (key) options.key = this.bytes(key);
    if (token) {
      const text = this.bytes(token).toString('utf8').trim();
      if (text) options.headers = { ...options.headers, Authorization: `Bearer ${text}` };
    }
  }

  private bytes(source: Source): Buffer {
    if ('bytes' in source) return source.bytes;
    const now = this.now();
    const cached = this.files.get(source.file);
    if (cached && now - cached.readAt < FILE_REFRESH_MS) return cached.bytes;
    const bytes = this.readFile(source.file);
    this.files.set(source.file, { bytes, readAt: now });
    return bytes;
  }
}

/**
 * The credentials of `file`, else the default chain as client-node's loadFromDefault has it:
 * KUBECONFIG (files separated by the path delimiter), ~/.kube/config, the in-cluster
 * ServiceAccount, else http://localhost:8080. Throws on a kubeconfig that cannot be used (a
 * process cannot start without one).
 */
export async function loadKubeCredentials(file?: string, env: Record<string, string | undefined> = process.env): Promise<KubeCredentials> {
  const files = kubeconfigFiles(file, env);
  const resolution = files ? resolveKubeconfig(files.map((f) => ({ path: f, text: fs.readFileSync(f, 'utf8') }))) : defaultAccess(env);
  switch (resolution.kind) {
    case 'access':
      return new AccessCredentials(resolution.access);
    case 'invalid':
      throw new Error(`kubeconfig ${files?.join(path.delimiter) ?? '(in cluster)'}: ${resolution.reason}`);
    case 'unsupported': {
      const { loadKubeConfig } = await import('./clientNodeConfig.ts');
      return loadKubeConfig(file);
    }
  }
}

/** The kubeconfig files to read, or undefined for the in-cluster (or default) access. */
function kubeconfigFiles(file: string | undefined, env: Record<string, string | undefined>): string[] | undefined {
  if (file) return [file];
  const list = (env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
  if (list.length > 0) return list;
  const home = env.HOME || os.homedir();
  const config = home ? path.join(home, '.kube', 'config') : '';
  return config && fs.existsSync(config) ? [config] : undefined;
}

function defaultAccess(env: Record<string, string | undefined>): Resolution {
  if (fs.existsSync(path.join(SERVICE_ACCOUNT_DIR, 'token'))) return inClusterAccess(env);
  return { kind: 'access', access: { server: 'http://localhost:8080', insecureSkipTlsVerify: false } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
