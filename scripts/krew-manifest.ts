// The krew manifest at release: builds the plugin's release archive (unless --archive names
// one), and writes plugins/planwarden.yaml with the archive's download uri and sha256.
//   tsx scripts/krew-manifest.ts --release-url https://github.com/OWNER/planwarden/releases/download/v0.1.0
//   tsx scripts/krew-manifest.ts --release-url URL --archive dist/krew/kubectl-planwarden-v0.1.0.tar.gz
// The archive holds one directory, planwarden/: the package as `npm pack` packs it, with its
// production dependencies installed from package-lock.json (krew has no install hook, and
// the plugin is TypeScript run through tsx, a dependency). It needs Node.js on the machine.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';

const PROJECT_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
export const MANIFEST_PATH = join(PROJECT_ROOT, 'plugins', 'planwarden.yaml');
/** The directory at the archive's root. */
export const ARCHIVE_ROOT = 'planwarden';

export interface KrewPlugin {
  apiVersion: 'krew.googlecontainertools.github.com/v1alpha2';
  kind: 'Plugin';
  metadata: { name: string };
  spec: {
    version: string;
    homepage: string;
    shortDescription: string;
    description: string;
    caveats: string;
    platforms: {
      selector: { matchExpressions: { key: string; operator: string; values: string[] }[] };
      uri: string;
      sha256: string;
      files: { from: string; to: string }[];
      bin: string;
    }[];
  };
}

/** The digest the manifest carries before the first release. */
export const UNRELEASED_SHA256 = '0'.repeat(64);

export const HOMEPAGE = 'https://github.com/planwarden/planwarden';

/** The archive's file name for a version (`v0.1.0`). */
export const archiveName = (version: string) => `kubectl-planwarden-${version}.tar.gz`;

/** The manifest for the archive of `version` found at `uri` with digest `sha256`. */
export function krewManifest(opts: { version: string; uri: string; sha256: string }): KrewPlugin {
  return {
    apiVersion: 'krew.googlecontainertools.github.com/v1alpha2',
    kind: 'Plugin',
    metadata: { name: 'planwarden' },
    spec: {
      version: opts.version,
      homepage: HOMEPAGE,
      shortDescription: 'Trigger, follow and abort planwarden plans',
      description: `Operates planwarden, the admission webhook and controller that guard and run day-2
operation plans (deploy, update, upgrade, backup, restore ...) on Kubernetes services:
trigger a plan on an Instance and follow it to its end, show a run as a tree of phases,
steps and targets, list the run history, abort a running plan, and analyse an upgrade
before it happens (UpdatePlan pre-checks: list the informers' insights, accept them).
Every write goes through planwarden's admission webhook, whose refusals are shown as is.
`,
      caveats: `This plugin runs on Node.js (>= 20.19), which must be on PATH as "node".
Shell completion: "kubectl planwarden completion bash|zsh"; for "kubectl planwarden <TAB>"
(kubectl >= 1.26) link $KREW_ROOT/store/planwarden/${opts.version}/bin/kubectl_complete-planwarden
into a directory on PATH (krew does not install it).
`,
      platforms: [
        {
          // Node.js scripts: the same archive on every Unix; no Windows (a shebang starts it).
          selector: { matchExpressions: [{ key: 'os', operator: 'In', values: ['darwin', 'linux'] }] },
          uri: opts.uri,
          sha256: opts.sha256,
          files: [{ from: `${ARCHIVE_ROOT}/*`, to: '.' }],
          bin: 'bin/kubectl-planwarden.js',
        },
      ],
    },
  };
}

/** The manifest as the YAML file plugins/planwarden.yaml holds. */
export function renderManifest(plugin: KrewPlugin): string {
  const placeholder = plugin.spec.platforms.some((p) => p.sha256 === UNRELEASED_SHA256)
    ? '# No release yet: uri and sha256 are placeholders (see docs/cli.md#releasing-with-krew).\n'
    : '';
  return `# krew plugin manifest of kubectl-planwarden (https://krew.sigs.k8s.io/docs/developer-guide/plugin-manifest/).
# Written by scripts/krew-manifest.ts at release: it builds the archive and sets uri and sha256.
${placeholder}${stringify(plugin, { lineWidth: 0 })}`;
}

export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function run(command: string, args: string[], cwd: string): string {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error || r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${r.error?.message ?? r.stderr}`);
  return r.stdout;
}

/** Builds the release archive of `version` into `outDir`; returns its path. Needs npm and the registry. */
export function buildArchive(version: string, outDir: string): string {
  const stage = mkdtempSync(join(tmpdir(), 'planwarden-krew-'));
  try {
    run('npm', ['pack', '--ignore-scripts', '--pack-destination', stage], PROJECT_ROOT);
    const packed = readdirSync(stage).find((f) => f.endsWith('.tgz'));
    if (!packed) throw new Error('npm pack wrote no archive');
    run('tar', ['-xzf', packed], stage);
    renameSync(join(stage, 'package'), join(stage, ARCHIVE_ROOT));
    copyFileSync(join(PROJECT_ROOT, 'package-lock.json'), join(stage, ARCHIVE_ROOT, 'package-lock.json'));
    run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], join(stage, ARCHIVE_ROOT));
    mkdirSync(outDir, { recursive: true });
    const archive = join(outDir, archiveName(version));
    run('tar', ['-czf', archive, '-C', stage, ARCHIVE_ROOT], stage);
    return archive;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** The release version of the package: package.json's version with krew's leading v. */
export function releaseVersion(): string {
  const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
  return `v${version}`;
}

function main(argv: string[]): void {
  const { values } = parseArgs({
    args: argv,
    options: {
      'release-url': { type: 'string' },
      archive: { type: 'string' },
      out: { type: 'string' },
      'archive-dir': { type: 'string' },
    },
  });
  const base = values['release-url'];
  if (!base?.startsWith('https://')) {
    throw new Error(
      '--release-url https://… is required: where the release archive will be downloaded from (the uri is <release-url>/<archive name>)',
    );
  }
  const version = releaseVersion();
  const archive = values.archive ?? buildArchive(version, values['archive-dir'] ?? join(PROJECT_ROOT, 'dist', 'krew'));
  const uri = `${base.replace(/\/+$/, '')}/${archiveName(version)}`;
  const out = values.out ?? MANIFEST_PATH;
  writeFileSync(out, renderManifest(krewManifest({ version, uri, sha256: sha256File(archive) })));
  console.log(`wrote ${out}: ${uri}, sha256 of ${archive}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
