// Starts and stops a local Kubernetes control plane: etcd, kube-apiserver (RBAC, admission
// webhooks and policies on), kube-controller-manager, kube-scheduler and kwok-simulated
// nodes, each a background process recorded by pid so that another command can stop it.
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { join, resolve } from 'node:path';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { ensureClientAuthCerts, renderAdmissionConfiguration, renderAdmissionKubeconfig } from '../../certs/clientAuth.ts';
import { ensureBinaries, PROJECT_ROOT, type Binaries } from './build.ts';
import { generateClusterPki, type ClusterPki } from './pki.ts';

export const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'] as const;
export type Component = (typeof COMPONENTS)[number];

export const DEFAULT_DIR = join(PROJECT_ROOT, '.planwarden', 'cluster');
export const DEFAULT_KUBECONFIG = join(PROJECT_ROOT, '.planwarden', 'kubeconfig');

export interface ClusterOptions {
  /** Where data, logs, certificates and the state file live. */
  dir?: string;
  /** Where the admin kubeconfig is written (default `<dir>/kubeconfig`, or .planwarden/kubeconfig for the default dir). */
  kubeconfig?: string;
  timeoutSeconds?: number;
  nodes?: number;
  log?: (s: string) => void;
  /** Serve kube-apiserver's /debug/pprof (off by default; the bench turns it on for --apiserver-profile). */
  profiling?: boolean;
}

/** How a component was started: enough to start it again the same way (restartComponent). */
export interface ComponentCommand {
  cmd: string;
  args: string[];
}

export interface ClusterState {
  dir: string;
  kubeconfig: string;
  server: string;
  ports: Record<string, number>;
  pids: Partial<Record<Component, number>>;
  startedAt: string;
  /** Each component's command line; absent in state files written before it was recorded. */
  commands?: Partial<Record<Component, ComponentCommand>>;
  /**
   * The client certificate kube-apiserver presents to every admission webhook (an
   * AdmissionConfiguration whose kubeconfig has user "*"), and the CA a webhook's --client-ca
   * trusts. Absent in state files written before it existed.
   */
  webhookClientAuth?: WebhookClientAuthFiles;
}

export interface WebhookClientAuthFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
}

export class ClusterError extends Error {}

function paths(opts: ClusterOptions) {
  const dir = resolve(opts.dir ?? DEFAULT_DIR);
  const kubeconfig = resolve(opts.kubeconfig ?? (dir === resolve(DEFAULT_DIR) ? DEFAULT_KUBECONFIG : join(dir, 'kubeconfig')));
  return { dir, kubeconfig, state: join(dir, 'state.json'), logs: join(dir, 'logs'), pki: join(dir, 'pki') };
}

export function readState(opts: ClusterOptions = {}): ClusterState | undefined {
  const p = paths(opts);
  if (!existsSync(p.state)) return undefined;
  try {
    return JSON.parse(readFileSync(p.state, 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

/** True when `pid` is alive and its command line mentions `marker` (guards against pid reuse). */
export function isOurProcess(pid: number | undefined, marker: string): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
  } catch {
    return true;
  }
}

export function componentHealth(state: ClusterState): Record<Component, boolean> {
  const out = {} as Record<Component, boolean>;
  for (const c of COMPONENTS) out[c] = isOurProcess(state.pids[c], state.dir);
  return out;
}

/** Ports below this are left to well-known services. */
const LOWEST_PICKED_PORT = 10_000;

/**
 * The local ports the kernel hands to outgoing connections (Linux's
 * ip_local_port_range), or undefined where that cannot be read.
 */
export function ephemeralPortRange(text = readIfPresent('/proc/sys/net/ipv4/ip_local_port_range')): [number, number] | undefined {
  const m = /^\s*(\d+)\s+(\d+)\s*$/.exec(text ?? '');
  if (!m) return undefined;
  const [low, high] = [Number(m[1]), Number(m[2])];
  return low > 0 && low <= high && high <= 65_535 ? [low, high] : undefined;
}

function readIfPresent(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Ports this process handed out, so that two calls never give the same one before either is bound. */
const handedOut = new Set<number>();

function listenOnce(port: number): Promise<number | undefined> {
  return new Promise((resolvePort) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolvePort(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address();
      const bound = typeof addr === 'object' && addr ? addr.port : undefined;
      srv.close(() => resolvePort(bound));
    });
  });
}

/**
 * A port on 127.0.0.1 that nothing listens on, for a component to bind a moment later.
 * It is picked below the kernel's ephemeral range: a port from that range (what
 * `listen(0)` gives) can be taken, between the pick and the bind, as the local port of
 * one of the many connections the control plane opens while it starts — which made
 * kube-scheduler or kube-apiserver fail with "bind: address already in use" about once
 * in ten starts. Where the range cannot be read, or leaves too little room below it, the
 * kernel picks.
 */
export async function freePort(): Promise<number> {
  const range = ephemeralPortRange();
  const below = range ? range[0] - 1 : 0;
  if (below - LOWEST_PICKED_PORT >= 1_000) {
    for (let attempt = 0; attempt < 100; attempt++) {
      const port = LOWEST_PICKED_PORT + randomInt(below - LOWEST_PICKED_PORT + 1);
      if (handedOut.has(port)) continue;
      if ((await listenOnce(port)) === port) {
        handedOut.add(port);
        return port;
      }
    }
  }
  for (;;) {
    const port = await listenOnce(0);
    if (port === undefined) throw new Error('could not find a free port on 127.0.0.1');
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function logTail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function kubeconfigYaml(server: string, caPem: string, certPem: string, keyPem: string, user: string): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'planwarden-local', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
    users: [{ name: user, user: { 'client-certificate-data': b64(certPem), 'client-key-data': b64(keyPem) } }],
    contexts: [{ name: 'planwarden-local', context: { cluster: 'planwarden-local', user } }],
    'current-context': 'planwarden-local',
  });
}

interface HttpResult {
  status: number;
  body: string;
}

export type TlsOptions = { ca?: string; cert?: string; key?: string; rejectUnauthorized?: boolean };

function get(url: string, tls?: TlsOptions): Promise<HttpResult> {
  return new Promise((resolveGet) => {
    const u = new URL(url);
    const done = (status: number, body: string) => resolveGet({ status, body });
    const req = u.protocol === 'https:' ? httpsRequest(u, { ...tls, timeout: 3000 }) : httpRequest(u, { timeout: 3000 });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => done(res.statusCode ?? 0, body));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => done(0, e.message));
    req.end();
  });
}

function post(url: string, body: unknown, tls: { ca: string; cert: string; key: string }): Promise<HttpResult> {
  return new Promise((resolvePost) => {
    const data = JSON.stringify(body);
    const req = httpsRequest(new URL(url), {
      ...tls,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
      timeout: 5000,
    });
    req.on('response', (res) => {
      let out = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (out += c));
      res.on('end', () => resolvePost({ status: res.statusCode ?? 0, body: out }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolvePost({ status: 0, body: e.message }));
    req.end(data);
  });
}

/** Starts `cmd args` in the background, detached, appending to `logFile`; returns its pid. */
function spawnComponent(component: Component, command: ComponentCommand, logFile: string, cwd: string): number {
  const fd = openSync(logFile, 'a');
  // The data dir is on every command line: it marks the process as this cluster's.
  const child = spawn(command.cmd, command.args, { detached: true, stdio: ['ignore', fd, fd], cwd });
  closeSync(fd);
  child.unref();
  if (!child.pid) throw new ClusterError(`could not start ${component} (${command.cmd})`);
  return child.pid;
}

class Starter {
  readonly pids: Partial<Record<Component, number>> = {};
  readonly commands: Partial<Record<Component, ComponentCommand>> = {};
  constructor(
    private readonly dir: string,
    private readonly logs: string,
    private readonly bins: Binaries,
  ) {}

  start(component: Component, args: string[]): number {
    const command: ComponentCommand =
      component === 'kwok' ? { cmd: this.bins.kwok, args } : { cmd: this.bins.k8s, args: [component, ...args] };
    const pid = spawnComponent(component, command, join(this.logs, `${component}.log`), this.dir);
    this.commands[component] = command;
    this.pids[component] = pid;
    return pid;
  }

  /** Polls `probe` until it returns true; fails fast when the component died. */
  async waitFor(component: Component, what: string, deadline: number, probe: () => Promise<boolean>): Promise<void> {
    const logFile = join(this.logs, `${component}.log`);
    for (;;) {
      if (!isOurProcess(this.pids[component], this.dir)) {
        const tail = logTail(logFile);
        const portHint = /address already in use/i.test(tail) ? ' (a port it needs is in use)' : '';
        throw new ClusterError(`${component} exited while waiting for ${what}${portHint}; last log lines of ${logFile}:\n${tail}`);
      }
      if (await probe()) return;
      if (Date.now() > deadline) {
        throw new ClusterError(`timed out waiting for ${component}: ${what}; last log lines of ${logFile}:\n${logTail(logFile)}`);
      }
      await sleep(250);
    }
  }
}

async function stopPids(pids: Partial<Record<Component, number>>, marker: string, log: (s: string) => void): Promise<string[]> {
  const stopped: string[] = [];
  for (const c of [...COMPONENTS].reverse()) {
    const pid = pids[c];
    if (!isOurProcess(pid, marker)) continue;
    try {
      process.kill(-pid!, 'SIGTERM');
    } catch {
      try {
        process.kill(pid!, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
    const deadline = Date.now() + 10_000;
    while (isOurProcess(pid, marker) && Date.now() < deadline) await sleep(100);
    if (isOurProcess(pid, marker)) {
      log(`${c} (pid ${pid}) did not stop on SIGTERM; sending SIGKILL`);
      try {
        process.kill(pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    stopped.push(`${c} (pid ${pid})`);
  }
  return stopped;
}

export interface UpResult {
  state: ClusterState;
  alreadyRunning: boolean;
}

/** Starts the control plane, or reports the one already running in `dir`. */
export async function up(opts: ClusterOptions = {}): Promise<UpResult> {
  const p = paths(opts);
  const log = opts.log ?? ((s: string) => console.error(s));
  const timeoutMs = (opts.timeoutSeconds ?? 180) * 1000;

  const existing = readState(opts);
  if (existing) {
    const health = componentHealth(existing);
    const dead = COMPONENTS.filter((c) => !health[c]);
    if (dead.length === 0) return { state: existing, alreadyRunning: true };
    log(`found a stale control plane in ${p.dir} (not running: ${dead.join(', ')}); stopping what is left and starting afresh`);
    await stopPids(existing.pids, existing.dir, log);
    rmSync(p.dir, { recursive: true, force: true });
  } else if (existsSync(join(p.dir, 'etcd'))) {
    log(`removing a stale data directory ${p.dir} left without a state file`);
    rmSync(p.dir, { recursive: true, force: true });
  }

  const bins = ensureBinaries({ log });
  const deadline = Date.now() + timeoutMs;
  mkdirSync(p.logs, { recursive: true });
  mkdirSync(p.pki, { recursive: true });

  const ports = {
    etcdClient: await freePort(),
    etcdPeer: await freePort(),
    apiserver: await freePort(),
    controllerManager: await freePort(),
    scheduler: await freePort(),
  };
  const server = `https://127.0.0.1:${ports.apiserver}`;
  const pki: ClusterPki = generateClusterPki(p.pki);
  // The API server authenticates to admission webhooks with this certificate. The user is "*"
  // (every webhook without a user of its own): the tests' webhooks are URL webhooks on ports
  // chosen after the API server starts, and kube-apiserver reads this kubeconfig only once.
  // A webhook that does not ask for a client certificate never sees it.
  const clientAuth = await ensureClientAuthCerts({ dir: join(p.pki, 'webhook-client'), validityDays: 30 });
  const admissionKc = join(p.dir, 'admission-kubeconfig.yaml');
  writeFileSync(admissionKc, renderAdmissionKubeconfig({ hosts: ['*'], certFile: clientAuth.files.cert, keyFile: clientAuth.files.key }), {
    mode: 0o600,
  });
  const admissionConfig = join(p.dir, 'admission-config.yaml');
  writeFileSync(admissionConfig, renderAdmissionConfiguration(admissionKc), { mode: 0o600 });
  const write = (name: string, content: string) => {
    const f = join(p.dir, name);
    writeFileSync(f, content, { mode: 0o600 });
    return f;
  };
  const adminKc = kubeconfigYaml(server, pki.ca.certPem, pki.admin.certPem, pki.admin.keyPem, 'planwarden-admin');
  writeFileSync(p.kubeconfig, adminKc, { mode: 0o600 });
  write('kubeconfig', adminKc);
  const kcmKc = write(
    'controller-manager.kubeconfig',
    kubeconfigYaml(server, pki.ca.certPem, pki.controllerManager.certPem, pki.controllerManager.keyPem, 'system:kube-controller-manager'),
  );
  const schedKc = write(
    'scheduler.kubeconfig',
    kubeconfigYaml(server, pki.ca.certPem, pki.scheduler.certPem, pki.scheduler.keyPem, 'system:kube-scheduler'),
  );
  const kwokKc = write('kwok.kubeconfig', kubeconfigYaml(server, pki.ca.certPem, pki.kwok.certPem, pki.kwok.keyPem, 'kwok'));
  const tls = { ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem };
  const starter = new Starter(p.dir, p.logs, bins);
  const state: ClusterState = {
    dir: p.dir,
    kubeconfig: p.kubeconfig,
    server,
    ports,
    pids: starter.pids,
    startedAt: new Date().toISOString(),
    commands: starter.commands,
    webhookClientAuth: { caFile: clientAuth.files.caCert, certFile: clientAuth.files.cert, keyFile: clientAuth.files.key },
  };
  const saveState = () => writeFileSync(p.state, JSON.stringify(state, null, 2));

  try {
    const etcdUrl = `http://127.0.0.1:${ports.etcdClient}`;
    starter.start('etcd', [
      '--name=planwarden',
      `--data-dir=${join(p.dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
      `--initial-cluster=planwarden=http://127.0.0.1:${ports.etcdPeer}`,
      '--listen-metrics-urls=',
      '--unsafe-no-fsync',
      '--quota-backend-bytes=4294967296',
      '--log-level=warn',
    ]);
    saveState();
    await starter.waitFor('etcd', `${etcdUrl}/health`, deadline, async () => {
      const r = await get(`${etcdUrl}/health`);
      return r.status === 200 && r.body.includes('true');
    });

    starter.start('kube-apiserver', [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${ports.apiserver}`,
      `--cert-dir=${p.pki}`,
      `--tls-cert-file=${pki.files.apiserverCert}`,
      `--tls-private-key-file=${pki.files.apiserverKey}`,
      `--client-ca-file=${pki.files.caCert}`,
      `--service-account-key-file=${pki.files.serviceAccountPublic}`,
      `--service-account-signing-key-file=${pki.files.serviceAccountPrivate}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      '--service-cluster-ip-range=10.96.0.0/16',
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy',
      `--admission-control-config-file=${admissionConfig}`,
      '--endpoint-reconciler-type=none',
      '--allow-privileged=true',
      `--profiling=${opts.profiling === true}`,
      '--v=1',
    ]);
    saveState();
    await starter.waitFor('kube-apiserver', `${server}/readyz`, deadline, async () => {
      const r = await get(`${server}/readyz`, tls);
      return r.status === 200 && r.body.trim() === 'ok';
    });

    starter.start('kube-controller-manager', [
      `--kubeconfig=${kcmKc}`,
      `--authentication-kubeconfig=${kcmKc}`,
      `--authorization-kubeconfig=${kcmKc}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${ports.controllerManager}`,
      `--cert-dir=${join(p.pki, 'kcm')}`,
      '--leader-elect=false',
      '--use-service-account-credentials=true',
      `--service-account-private-key-file=${pki.files.serviceAccountPrivate}`,
      `--root-ca-file=${pki.files.caCert}`,
      `--cluster-signing-cert-file=${pki.files.caCert}`,
      `--cluster-signing-key-file=${pki.files.caKey}`,
      '--controllers=*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller,-persistentvolume-expander,-ttl',
      '--concurrent-gc-syncs=10',
      '--v=1',
    ]);
    starter.start('kube-scheduler', [
      `--kubeconfig=${schedKc}`,
      `--authentication-kubeconfig=${schedKc}`,
      `--authorization-kubeconfig=${schedKc}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${ports.scheduler}`,
      `--cert-dir=${join(p.pki, 'scheduler')}`,
      '--leader-elect=false',
      '--v=1',
    ]);
    // An explicit (empty) configuration: kwok then uses its built-in "fast" node and pod
    // stages, and never reads ~/.kwok of whoever runs the tests.
    write('kwok.yaml', 'apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\noptions: {}\n');
    starter.start('kwok', [
      `--kubeconfig=${kwokKc}`,
      `--config=${join(p.dir, 'kwok.yaml')}`,
      '--manage-all-nodes=true',
      '--cidr=10.244.0.1/16',
      '--node-ip=127.0.0.1',
      '--node-lease-duration-seconds=40',
    ]);
    saveState();

    const nodes = opts.nodes ?? 2;
    for (let i = 0; i < nodes; i++) {
      const r = await post(`${server}/api/v1/nodes`, simulatedNode(`kwok-node-${i}`), tls);
      if (r.status !== 201) throw new ClusterError(`creating simulated node kwok-node-${i}: HTTP ${r.status} ${r.body}`);
    }
    await starter.waitFor('kwok', 'simulated nodes Ready', deadline, async () => {
      const r = await get(`${server}/api/v1/nodes`, tls);
      if (r.status !== 200) return false;
      const list = JSON.parse(r.body) as { items: { status?: { conditions?: { type: string; status: string }[] } }[] };
      return (
        list.items.length >= nodes && list.items.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      );
    });
    // The service-account controllers must be up before Pods can be admitted.
    await starter.waitFor('kube-controller-manager', 'the default ServiceAccount', deadline, async () => {
      const r = await get(`${server}/api/v1/namespaces/default/serviceaccounts/default`, tls);
      return r.status === 200;
    });
    await starter.waitFor('kube-scheduler', 'scheduler healthz', deadline, async () => {
      // The scheduler serves /healthz with a self-signed certificate of its own.
      const r = await get(`https://127.0.0.1:${ports.scheduler}/healthz`, { rejectUnauthorized: false });
      return r.status === 200;
    });
  } catch (e) {
    log('start-up failed; stopping the components already started');
    await stopPids(starter.pids, p.dir, log);
    saveState();
    throw e;
  }
  saveState();
  return { state, alreadyRunning: false };
}

function simulatedNode(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'kwok.x-k8s.io/node': 'fake' },
      labels: {
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        'kubernetes.io/hostname': name,
        'node-role.kubernetes.io/agent': '',
        type: 'kwok',
      },
    },
    status: {
      allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
      capacity: { cpu: '32', memory: '256Gi', pods: '110' },
    },
  };
}

export interface DownResult {
  stopped: string[];
  wasRunning: boolean;
}

/** Stops every process `up` started in `dir` and removes the data directory. */
export async function down(opts: ClusterOptions = {}): Promise<DownResult> {
  const p = paths(opts);
  const log = opts.log ?? ((s: string) => console.error(s));
  const state = readState(opts);
  if (!state) {
    const leftovers = existsSync(p.dir);
    if (leftovers) rmSync(p.dir, { recursive: true, force: true });
    return { stopped: [], wasRunning: false };
  }
  const stopped = await stopPids(state.pids, state.dir, log);
  rmSync(p.dir, { recursive: true, force: true });
  if (p.kubeconfig !== join(p.dir, 'kubeconfig')) rmSync(p.kubeconfig, { force: true });
  return { stopped, wasRunning: true };
}

/** Stops one component (SIGKILL or SIGTERM) — for failure tests. */
export async function killComponent(state: ClusterState, component: Component, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  const pid = state.pids[component];
  if (!isOurProcess(pid, state.dir)) return;
  process.kill(pid!, signal);
  while (isOurProcess(pid, state.dir)) await sleep(50);
}

export interface RestartOptions {
  /** How the running process is stopped first (default SIGKILL). */
  signal?: NodeJS.Signals;
  /** How long to wait for the restarted component to be ready (default 120 s). */
  timeoutSeconds?: number;
}

/** The admin client credentials of a kubeconfig written by up(). */
export function adminTls(kubeconfig: string): TlsOptions {
  const config = parseYaml(readFileSync(kubeconfig, 'utf8')) as {
    clusters?: { cluster?: Record<string, string> }[];
    users?: { user?: Record<string, string> }[];
  };
  const decode = (v: string | undefined) => (v ? Buffer.from(v, 'base64').toString('utf8') : undefined);
  const cluster = config.clusters?.[0]?.cluster ?? {};
  const user = config.users?.[0]?.user ?? {};
  return {
    ca: decode(cluster['certificate-authority-data']),
    cert: decode(user['client-certificate-data']),
    key: decode(user['client-key-data']),
  };
}

/**
 * Stops one component (if it runs) and starts it again with the command line up() used,
 * then waits until it is ready again (kube-apiserver: /readyz; etcd: /health; the others:
 * still running after a second). The new pid is written to state.json (so that down()
 * stops it) and into `state.pids`. Returns the updated state.
 */
export async function restartComponent(state: ClusterState, component: Component, opts: RestartOptions = {}): Promise<ClusterState> {
  const p = paths({ dir: state.dir });
  const current = readState({ dir: state.dir }) ?? state;
  const command = current.commands?.[component];
  if (!command) {
    throw new ClusterError(
      `${p.state} records no command line for ${component} (written by an older version of cluster.ts); restart the control plane with down/up`,
    );
  }
  await killComponent(current, component, opts.signal ?? 'SIGKILL');
  const logFile = join(p.logs, `${component}.log`);
  const pid = spawnComponent(component, command, logFile, current.dir);
  current.pids[component] = pid;
  writeFileSync(p.state, JSON.stringify(current, null, 2));
  state.pids[component] = pid;

  const deadline = Date.now() + (opts.timeoutSeconds ?? 120) * 1000;
  const probe: () => Promise<boolean> =
    component === 'kube-apiserver'
      ? async () => {
          const r = await get(`${current.server}/readyz`, adminTls(current.kubeconfig));
          return r.status === 200 && r.body.trim() === 'ok';
        }
      : component === 'etcd'
        ? async () => {
            const r = await get(`http://127.0.0.1:${current.ports.etcdClient}/health`);
            return r.status === 200 && r.body.includes('true');
          }
        : (() => {
            const since = Date.now();
            return async () => Date.now() - since >= 1000;
          })();
  for (;;) {
    if (!isOurProcess(pid, current.dir)) {
      throw new ClusterError(`${component} exited after its restart; last log lines of ${logFile}:\n${logTail(logFile)}`);
    }
    if (await probe()) return current;
    if (Date.now() > deadline)
      throw new ClusterError(`timed out waiting for the restarted ${component}; last log lines of ${logFile}:\n${logTail(logFile)}`);
    await sleep(250);
  }
}
