// Builds the local control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler in one multi-call binary, plus kwok) from the Kubernetes Go modules,
// caching the output until the Go sources or go.sum change; and, the same way from its own
// small module in test/lua, lua-health, which runs Argo CD health checks with the Lua
// interpreter Argo CD embeds; and helm, at a pinned version, for the chart's tests.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const KUBERNETES_VERSION = 'v1.33.13';
export const KWOK_MODULE = 'sigs.k8s.io/kwok/cmd/kwok';
export const KWOK_VERSION = 'v0.7.0';
export const HELM_MODULE = 'helm.sh/helm/v3/cmd/helm';
export const HELM_VERSION = 'v3.19.5';
export const MIN_GO = [1, 24] as const;

const here = fileURLToPath(new URL('.', import.meta.url));
export const GO_MODULE_DIR = resolve(here);
export const LUA_HEALTH_MODULE_DIR = resolve(here, '..', 'lua');
export const PROJECT_ROOT = resolve(here, '..', '..');
export const DEFAULT_BIN_DIR = join(PROJECT_ROOT, '.planwarden', 'bin');

export interface Binaries {
  k8s: string;
  kwok: string;
}

export class BuildError extends Error {}

/** Hash of a Go module's sources (its .go files, go.mod and go.sum), after `header`. */
function moduleStamp(moduleDir: string, header: string): string {
  const h = createHash('sha256');
  h.update(`${header}\n`);
  const files = readdirSync(moduleDir)
    .filter((f) => f.endsWith('.go') || f === 'go.mod' || f === 'go.sum')
    .sort();
  for (const f of files) h.update(`${f}\n`).update(readFileSync(join(moduleDir, f)));
  return h.digest('hex');
}

/** Hash of everything the binaries are built from. */
export function sourceStamp(moduleDir = GO_MODULE_DIR): string {
  return moduleStamp(moduleDir, `${KUBERNETES_VERSION} ${KWOK_MODULE}@${KWOK_VERSION}`);
}

/** The installed Go version, or a BuildError saying what is missing and what needs it. */
export function checkGo(purpose = 'its local Kubernetes control plane from the Kubernetes Go modules'): string {
  const r = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    throw new BuildError(
      `Go toolchain not found: planwarden builds ${purpose} and needs Go >= ${MIN_GO.join('.')} on PATH ` +
        '(https://go.dev/doc/install, or apt-get install golang-go)',
    );
  }
  const version = r.stdout.trim();
  const m = /^go(\d+)\.(\d+)/.exec(version);
  if (!m || Number(m[1]) < MIN_GO[0] || (Number(m[1]) === MIN_GO[0] && Number(m[2]) < MIN_GO[1])) {
    throw new BuildError(`Go ${version} is too old: planwarden builds ${purpose} and needs Go >= ${MIN_GO.join('.')}`);
  }
  return version;
}

function runGo(args: string[], cwd: string, env: NodeJS.ProcessEnv, what: string, log: (s: string) => void): void {
  const started = Date.now();
  log(`  go ${args.join(' ')}`);
  const r = spawnSync('go', args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.error || r.status !== 0) {
    const download =
      /(dial tcp|i\/o timeout|no such host|connection refused|proxy\.golang|404 Not Found|verifying module|missing go\.sum)/i.test(output);
    const hint = download ? 'a Go module download failed: check that the Go module proxy (GOPROXY) is reachable' : 'the Go build failed';
    const tail = output.trim().split('\n').slice(-15).join('\n');
    throw new BuildError(`building ${what}: ${hint}\n${tail}`);
  }
  log(`  built ${what} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/**
 * Returns the control-plane binaries, building them first when missing or stale.
 * The first build downloads the Kubernetes modules and compiles for several minutes.
 */
export function ensureBinaries(opts: { binDir?: string; log?: (s: string) => void; force?: boolean } = {}): Binaries {
  const binDir = opts.binDir ?? DEFAULT_BIN_DIR;
  const log = opts.log ?? ((s: string) => console.error(s));
  const bins: Binaries = { k8s: join(binDir, 'k8s-local'), kwok: join(binDir, 'kwok') };
  const stampFile = join(binDir, 'stamp');
  const stamp = sourceStamp();
  const fresh =
    !opts.force &&
    existsSync(bins.k8s) &&
    existsSync(bins.kwok) &&
    existsSync(stampFile) &&
    readFileSync(stampFile, 'utf8').trim() === stamp;
  if (fresh) return bins;

  const goVersion = checkGo();
  log(
    `building the local control plane (Kubernetes ${KUBERNETES_VERSION}, kwok ${KWOK_VERSION}) with ${goVersion}; ` +
      'the first build takes several minutes',
  );
  mkdirSync(binDir, { recursive: true });
  const env = { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' };
  runGo(['build', '-trimpath', '-ldflags=-s -w', '-o', bins.k8s, '.'], GO_MODULE_DIR, env, 'k8s-local', log);
  // kwok is built from its own module at a pinned version, with its own go.sum.
  runGo(
    ['install', '-trimpath', '-ldflags=-s -w', `${KWOK_MODULE}@${KWOK_VERSION}`],
    GO_MODULE_DIR,
    { ...env, GOBIN: binDir, GOFLAGS: '' },
    `kwok ${KWOK_VERSION}`,
    log,
  );
  writeFileSync(stampFile, `${stamp}\n`);
  return bins;
}

/**
 * Returns the path of lua-health (test/lua), building it first when missing or stale. It
 * has its own stamp file, so that it and the control plane never rebuild each other.
 */
export function ensureLuaHealth(opts: { binDir?: string; log?: (s: string) => void; force?: boolean } = {}): string {
  const binDir = opts.binDir ?? DEFAULT_BIN_DIR;
  const log = opts.log ?? ((s: string) => console.error(s));
  const bin = join(binDir, 'lua-health');
  const stampFile = join(binDir, 'lua-health.stamp');
  const stamp = moduleStamp(LUA_HEALTH_MODULE_DIR, 'lua-health');
  const fresh = !opts.force && existsSync(bin) && existsSync(stampFile) && readFileSync(stampFile, 'utf8').trim() === stamp;
  if (fresh) return bin;

  const goVersion = checkGo('lua-health (test/lua), the Lua runner of the Argo CD health-check tests,');
  log(`building lua-health with ${goVersion}`);
  mkdirSync(binDir, { recursive: true });
  const env = { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' };
  runGo(['build', '-trimpath', '-ldflags=-s -w', '-o', bin, '.'], LUA_HEALTH_MODULE_DIR, env, 'lua-health', log);
  writeFileSync(stampFile, `${stamp}\n`);
  return bin;
}

/**
 * Returns the path of helm (charts/planwarden's tests), `go install`ed at HELM_VERSION when
 * missing or of another version. Its own stamp file: a helm upgrade rebuilds helm only.
 */
export function ensureHelm(opts: { binDir?: string; log?: (s: string) => void; force?: boolean } = {}): string {
  const binDir = opts.binDir ?? DEFAULT_BIN_DIR;
  const log = opts.log ?? ((s: string) => console.error(s));
  const bin = join(binDir, 'helm');
  const stampFile = join(binDir, 'helm.stamp');
  const stamp = `${HELM_MODULE}@${HELM_VERSION}`;
  const fresh = !opts.force && existsSync(bin) && existsSync(stampFile) && readFileSync(stampFile, 'utf8').trim() === stamp;
  if (fresh) return bin;

  const goVersion = checkGo(`helm ${HELM_VERSION}, which the chart tests (charts/planwarden) run,`);
  log(`building helm ${HELM_VERSION} with ${goVersion}; the first build takes a few minutes`);
  mkdirSync(binDir, { recursive: true });
  runGo(
    ['install', '-trimpath', '-ldflags=-s -w', stamp],
    PROJECT_ROOT,
    { ...process.env, CGO_ENABLED: '0', GOBIN: binDir, GOFLAGS: '' },
    `helm ${HELM_VERSION}`,
    log,
  );
  writeFileSync(stampFile, `${stamp}\n`);
  return bin;
}
