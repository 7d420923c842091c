// Builds planwarden's container image from the Dockerfile on a machine that reaches no
// container registry: both bases are made from Debian's packages with mmdebstrap and
// imported into podman, then `podman build` runs the Dockerfile with them as BUILD_IMAGE and
// RUNTIME_IMAGE. Every image is tagged with a content stamp, so podman's own storage is the
// cache: an unchanged recipe or source tree builds nothing.
//
//   build base    Debian trixie (variant apt: the Essential set, so RUN has a shell) with
//                 nodejs and ca-certificates, plus the npm this machine runs (copied in:
//                 Debian's npm package drags in ~400 packages and took 7 minutes here) and
//                 the CAs this machine adds in /usr/local/share/ca-certificates (npm ci
//                 reaches the registry through this machine's network)
//   runtime base  only the files of nodejs, ca-certificates and their library dependencies
//                 (variant extract: no Essential set, so no shell, no dpkg, no apt), the CA
//                 bundle, /etc/passwd and /etc/group with root and nonroot (65532), /tmp
//
// podman runs with runc and cgroupfs and without default ulimits (crun cannot set rlimits
// or use the hybrid cgroups of these machines): a containers.conf written under
// .planwarden/image, passed through CONTAINERS_CONF; nothing on the machine is changed
// beyond installing the tools.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PROJECT_ROOT } from './build.ts';

export const IMAGE_DIR = join(PROJECT_ROOT, '.planwarden', 'image');
export const IMAGE_REPOSITORY = 'localhost/planwarden';
export const DEBIAN_SUITE = 'trixie';
export const TOOLS = ['podman', 'mmdebstrap', 'runc'] as const;

export class ImageError extends Error {}

/** The image's ref (a content-stamped tag) and how it was obtained. */
export interface ImageBuild {
  ref: string;
  /** Also tagged <repository>:<package version>. */
  versionRef: string;
  sizeBytes: number;
  built: boolean;
  seconds: number;
}

const CONTAINERS_CONF = `# Written by test/controlplane/image.ts for podman on the test machines:
# runc instead of crun, cgroupfs instead of systemd, no default ulimits (setrlimit is not
# permitted here). Used through CONTAINERS_CONF, never installed on the machine.
[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
`;

/** The environment podman runs with: CONTAINERS_CONF pointing at our containers.conf. */
export function podmanEnv(): NodeJS.ProcessEnv {
  mkdirSync(IMAGE_DIR, { recursive: true });
  const conf = join(IMAGE_DIR, 'containers.conf');
  if (!existsSync(conf) || readFileSync(conf, 'utf8') !== CONTAINERS_CONF) writeFileSync(conf, CONTAINERS_CONF);
  return { ...process.env, CONTAINERS_CONF: conf };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

function runSync(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env, input?: string): RunResult {
  const r = spawnSync(cmd, args, { env, input, encoding: 'utf8', maxBuffer: 256 << 20 });
  if (r.error) return { code: 127, stdout: '', stderr: r.error.message };
  return { code: r.status ?? 1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** podman with our containers.conf. */
export function podman(args: string[]): RunResult {
  return runSync('podman', args, podmanEnv());
}

function tail(r: RunResult, lines = 15): string {
  return `${r.stdout}${r.stderr}`.trim().split('\n').slice(-lines).join('\n');
}

function ok(r: RunResult, what: string): string {
  if (r.code !== 0) throw new ImageError(`${what} failed (exit ${r.code}):\n${tail(r)}`);
  return r.stdout;
}

const missingTools = () => TOOLS.filter((t) => runSync(t, ['--version']).code !== 0);

/**
 * Installs podman, mmdebstrap and runc with apt-get when one is missing. Returns undefined
 * when they are there, or why they cannot be (not root, no apt-get): the caller skips.
 */
export function ensureTools(log: (s: string) => void = (s) => console.error(s)): string | undefined {
  let missing = missingTools();
  if (missing.length === 0) return undefined;
  if (process.getuid?.() !== 0 || runSync('apt-get', ['--version']).code !== 0) {
    return `${missing.join(', ')} not installed and not installable here (needs root and apt-get): ` + `apt-get install ${TOOLS.join(' ')}`;
  }
  log(`installing ${missing.join(', ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  ok(runSync('apt-get', ['update', '-qq'], env), 'apt-get update');
  ok(runSync('apt-get', ['install', '-y', '-qq', ...TOOLS], env), `apt-get install ${TOOLS.join(' ')}`);
  missing = missingTools();
  if (missing.length) throw new ImageError(`${missing.join(', ')} still missing after apt-get install`);
  return undefined;
}

/** Why podman cannot run containers here, or undefined when it can. */
export function podmanProblem(): string | undefined {
  const r = podman(['info', '--format', '{{.Host.OCIRuntime.Name}}']);
  return r.code === 0 ? undefined : `podman cannot run here: ${tail(r, 5)}`;
}

function hash(...parts: (string | Buffer)[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex').slice(0, 16);
}

function imageExists(ref: string): boolean {
  return podman(['image', 'exists', ref]).code === 0;
}

/** Where this machine's npm lives (copied into the build base). */
function hostNpm(): { dir: string; version: string } {
  const root = runSync('npm', ['root', '-g']);
  const version = runSync('npm', ['--version']);
  const dir = join(root.stdout.trim(), 'npm');
  if (root.code !== 0 || version.code !== 0 || !existsSync(join(dir, 'bin', 'npm-cli.js'))) {
    throw new ImageError('npm not found on this machine: the build base copies it in (npm root -g)');
  }
  return { dir, version: version.stdout.trim() };
}

interface BaseRecipe {
  name: string;
  mmdebstrap: string[];
  /** podman import --change instructions. */
  changes: string[];
}

/** Where this machine keeps the CAs it adds to Debian's (an egress proxy's, a company's). */
const LOCAL_CA_DIR = '/usr/local/share/ca-certificates';

function localCaHooks(): string[] {
  const files = existsSync(LOCAL_CA_DIR)
    ? readdirSync(LOCAL_CA_DIR)
        .filter((f) => f.endsWith('.crt'))
        .sort()
    : [];
  if (files.length === 0) return [];
  // Their content is part of the recipe (a changed CA rebuilds the base).
  const digest = hash(...files.map((f) => readFileSync(join(LOCAL_CA_DIR, f))));
  return [
    `--customize-hook=copy-in ${files.map((f) => join(LOCAL_CA_DIR, f)).join(' ')} ${LOCAL_CA_DIR}`,
    `--customize-hook=chroot "$1" update-ca-certificates # ${digest}`,
  ];
}

function buildBaseRecipe(): BaseRecipe {
  const npm = hostNpm();
  return {
    name: `localhost/planwarden-build-base`,
    mmdebstrap: [
      '--variant=apt',
      '--include=nodejs,ca-certificates',
      '--customize-hook=mkdir -p "$1/usr/lib/node_modules"',
      `--customize-hook=copy-in ${npm.dir} /usr/lib/node_modules`,
      '--customize-hook=ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/bin/npm"',
      '--customize-hook=ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/bin/npx"',
      // npm's version is part of the recipe, so a new one rebuilds the base.
      `--customize-hook=echo ${npm.version} > "$1/usr/lib/node_modules/npm/.planwarden-npm-version"`,
      // npm ci reaches the registry from the build: through this machine's TLS-inspecting
      // egress too, when it has one. Only the build base trusts these; the runtime base never.
      ...localCaHooks(),
    ],
    changes: ['ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
  };
}

function runtimeBaseRecipe(): BaseRecipe {
  const hooks = [
    // Merged /usr: the dynamic loader is /lib64/ld-linux-x86-64.so.2.
    'for d in bin sbin lib lib64; do [ -e "$1/$d" ] || ln -s usr/$d "$1/$d"; done',
    'printf "root:x:0:0:root:/root:/sbin/nologin\\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\\n" > "$1/etc/passwd"',
    'printf "root:x:0:\\nnonroot:x:65532:\\n" > "$1/etc/group"',
    'mkdir -p "$1/home/nonroot" "$1/root" "$1/tmp" && chown 65532:65532 "$1/home/nonroot" && chmod 1777 "$1/tmp"',
    // What update-ca-certificates would have written (no shell runs it here). Debian's node
    // reads this file as extra CAs next to its own bundle.
    'mkdir -p "$1/etc/ssl/certs" && cat "$1"/usr/share/ca-certificates/mozilla/*.crt > "$1/etc/ssl/certs/ca-certificates.crt"',
  ];
  return {
    name: `localhost/planwarden-runtime-base`,
    // The extract variant runs no customize hooks: these run once the packages are extracted.
    mmdebstrap: ['--variant=extract', '--include=nodejs,ca-certificates', ...hooks.map((h) => `--extract-hook=${h}`)],
    changes: ['ENV PATH=/usr/bin', 'USER 65532:65532'],
  };
}

function ensureBase(recipe: BaseRecipe, log: (s: string) => void): string {
  const ref = `${recipe.name}:${hash(DEBIAN_SUITE, ...recipe.mmdebstrap, ...recipe.changes)}`;
  if (imageExists(ref)) return ref;
  const started = Date.now();
  log(`building ${ref} from Debian ${DEBIAN_SUITE}'s packages (mmdebstrap)`);
  mkdirSync(IMAGE_DIR, { recursive: true });
  const tar = join(IMAGE_DIR, 'rootfs.tar');
  rmSync(tar, { force: true });
  try {
    ok(runSync('mmdebstrap', ['--quiet', ...recipe.mmdebstrap, DEBIAN_SUITE, tar]), `mmdebstrap (${recipe.name})`);
    ok(podman(['import', ...recipe.changes.flatMap((c) => ['--change', c]), tar, ref]), `podman import (${recipe.name})`);
  } finally {
    rmSync(tar, { force: true });
  }
  log(`  built ${ref} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return ref;
}

/** Files the image is built from: what tsconfig.image.json compiles, the package and ts configs. */
function sourceFiles(): string[] {
  const text = readFileSync(join(PROJECT_ROOT, 'tsconfig.image.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '');
  const build = JSON.parse(text) as { include: string[] };
  const files = [
    'Dockerfile',
    '.dockerignore',
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'tsconfig.image.json',
  ];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const p = join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile()) files.push(relative(PROJECT_ROOT, p));
    }
  };
  for (const d of build.include)
    if (existsSync(join(PROJECT_ROOT, d)) && statSync(join(PROJECT_ROOT, d)).isDirectory()) walk(join(PROJECT_ROOT, d));
  return files.sort();
}

/** Hash of everything the image is built from, and the bases it is built on. */
export function imageStamp(bases: string[]): string {
  const h = createHash('sha256');
  for (const b of bases) h.update(`${b}\n`);
  for (const f of sourceFiles()) h.update(`${f}\n`).update(readFileSync(join(PROJECT_ROOT, f)));
  return h.digest('hex').slice(0, 16);
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The image's size as podman stores it (uncompressed layers), in bytes. */
export function imageSize(ref: string): number {
  return Number(ok(podman(['image', 'inspect', '--format', '{{.Size}}', ref]), 'podman image inspect').trim());
}

/**
 * Returns planwarden's image, building the bases and the image first when their stamps
 * changed. Throws ImageError when a build fails; call ensureTools first.
 */
export function ensureImage(opts: { log?: (s: string) => void } = {}): ImageBuild {
  const log = opts.log ?? ((s: string) => console.error(s));
  const started = Date.now();
  const buildBase = ensureBase(buildBaseRecipe(), log);
  const runtimeBase = ensureBase(runtimeBaseRecipe(), log);
  const version = packageVersion();
  const ref = `${IMAGE_REPOSITORY}:${version}-${imageStamp([buildBase, runtimeBase])}`;
  const versionRef = `${IMAGE_REPOSITORY}:${version}`;
  let built = false;
  if (!imageExists(ref)) {
    log(`building ${ref} (podman build, the Dockerfile with the local bases)`);
    const revision = runSync('git', ['-C', PROJECT_ROOT, 'rev-parse', 'HEAD']);
    const r = runSync(
      'podman',
      [
        'build',
        '--network=host',
        '--pull=never',
        '--build-arg',
        `BUILD_IMAGE=${buildBase}`,
        '--build-arg',
        `RUNTIME_IMAGE=${runtimeBase}`,
        '--build-arg',
        `VERSION=${version}`,
        ...(revision.code === 0 ? ['--build-arg', `REVISION=${revision.stdout.trim()}`] : []),
        '--tag',
        ref,
        '--file',
        join(PROJECT_ROOT, 'Dockerfile'),
        PROJECT_ROOT,
      ],
      podmanEnv(),
    );
    ok(r, 'podman build');
    built = true;
    // The previous build's stamped tag goes: one stamped image per checkout, not one per edit.
    const lastFile = join(IMAGE_DIR, 'last-image');
    const last = existsSync(lastFile) ? readFileSync(lastFile, 'utf8').trim() : '';
    if (last && last !== ref) podman(['rmi', last]);
    writeFileSync(lastFile, `${ref}\n`);
  }
  ok(podman(['tag', ref, versionRef]), 'podman tag');
  const seconds = (Date.now() - started) / 1000;
  const sizeBytes = imageSize(ref);
  log(`${built ? 'built' : 'up to date:'} ${ref} (${(sizeBytes / 1e6).toFixed(0)} MB) in ${seconds.toFixed(1)} s`);
  return { ref, versionRef, sizeBytes, built, seconds };
}

/** What a manifest's container securityContext and /tmp emptyDir say, as podman flags take it. */
export interface ContainerSecurity {
  runAsUser: number;
  runAsGroup: number;
  readOnlyRootFilesystem: boolean;
  allowPrivilegeEscalation: boolean;
  /** capabilities.drop, e.g. ['ALL']. */
  dropCapabilities: string[];
  /** The /tmp emptyDir's sizeLimit (e.g. "16Mi"), when the manifest mounts one. */
  tmpSizeLimit?: string;
}

/** A container run as the manifests run planwarden's pods, on the host network. */
export interface ManifestContainer {
  name: string;
  image: string;
  /** The container's command (the manifest's, with ports this machine has free). */
  command: string[];
  security: ContainerSecurity;
  /** Host directory mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount (token, ca.crt, namespace). */
  serviceAccountDir: string;
  /** The apiserver as the in-cluster config finds it (KUBERNETES_SERVICE_HOST/PORT). */
  apiserver: { host: string; port: number };
  namespace: string;
  /** Further read-only mounts: host directory → container path. */
  mounts?: Record<string, string>;
  /** The manifests' terminationGracePeriodSeconds (30 unless set). */
  gracePeriodSeconds?: number;
}

/** "16Mi" → "16m" (podman's tmpfs size takes k/m/g, binary). */
function tmpfsSize(limit: string): string {
  const m = /^(\d+)(Ki|Mi|Gi)$/.exec(limit);
  if (!m) throw new ImageError(`unsupported emptyDir sizeLimit ${limit}: expected <n>Ki, Mi or Gi`);
  return `${m[1]}${m[2]![0]!.toLowerCase()}`;
}

/**
 * `podman run` arguments for a pod of the manifests: their user and group, read-only root
 * filesystem with /tmp as their emptyDir, capabilities dropped, no privilege escalation,
 * the ServiceAccount's token where the kubelet puts it, POD_NAME/POD_NAMESPACE.
 */
export function manifestRunArgs(c: ManifestContainer): string[] {
  const sec = c.security;
  return [
    'run',
    '--detach',
    '--name',
    c.name,
    '--network=host',
    `--user=${sec.runAsUser}:${sec.runAsGroup}`,
    ...(sec.readOnlyRootFilesystem ? ['--read-only', '--read-only-tmpfs=false'] : []),
    ...(sec.tmpSizeLimit ? [`--tmpfs=/tmp:rw,size=${tmpfsSize(sec.tmpSizeLimit)},mode=1777`] : []),
    ...sec.dropCapabilities.map((cap) => `--cap-drop=${cap}`),
    ...(sec.allowPrivilegeEscalation ? [] : ['--security-opt=no-new-privileges']),
    `--stop-timeout=${c.gracePeriodSeconds ?? 30}`,
    '--env',
    `POD_NAME=${c.name}`,
    '--env',
    `POD_NAMESPACE=${c.namespace}`,
    '--env',
    `KUBERNETES_SERVICE_HOST=${c.apiserver.host}`,
    '--env',
    `KUBERNETES_SERVICE_PORT=${c.apiserver.port}`,
    '--volume',
    `${c.serviceAccountDir}:/var/run/secrets/kubernetes.io/serviceaccount:ro`,
    ...Object.entries(c.mounts ?? {}).flatMap(([host, inside]) => ['--volume', `${host}:${inside}:ro`]),
    c.image,
    ...c.command,
  ];
}
