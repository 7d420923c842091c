// plugins/planwarden.yaml, the krew plugin manifest, against krew's own validation rules
// (sigs.k8s.io/krew internal/index/validation, and the krew-index guideline of a short
// description of at most 50 characters), and scripts/krew-manifest.ts, which writes it at
// release with the archive's uri and sha256.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parse } from 'yaml';
import {
  archiveName,
  krewManifest,
  MANIFEST_PATH,
  releaseVersion,
  renderManifest,
  sha256File,
  UNRELEASED_SHA256,
  type KrewPlugin,
} from '../../../scripts/krew-manifest.ts';
import { PROJECT_ROOT } from '../../controlplane/build.ts';

const SPEC_FIELDS = ['version', 'homepage', 'shortDescription', 'description', 'caveats', 'platforms'];
const PLATFORM_FIELDS = ['selector', 'uri', 'sha256', 'files', 'bin'];
// krew's semver: vMAJOR.MINOR.PATCH with optional pre-release and build metadata.
const KREW_VERSION = /^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
const WINDOWS_FORBIDDEN = ['CON', 'PRN', 'AUX', 'NUL', ...[1, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((n) => [`COM${n}`, `LPT${n}`])];

/** krew's validation of a manifest read from `<name>.yaml`: the problems found, none when valid. */
function krewProblems(name: string, doc: unknown): string[] {
  const problems: string[] = [];
  const p = doc as Partial<KrewPlugin> & Record<string, unknown>;
  if (p.apiVersion !== 'krew.googlecontainertools.github.com/v1alpha2') problems.push(`apiVersion ${String(p.apiVersion)}`);
  if (p.kind !== 'Plugin') problems.push(`kind ${String(p.kind)}`);
  if (!/^[\w-]+$/.test(name) || WINDOWS_FORBIDDEN.includes(name.toUpperCase())) problems.push(`unsafe plugin name ${name}`);
  if (p.metadata?.name !== name) problems.push(`metadata.name ${String(p.metadata?.name)} is not the file's name ${name}`);
  const spec = (p.spec ?? {}) as Partial<KrewPlugin['spec']> & Record<string, unknown>;
  for (const field of Object.keys(spec)) if (!SPEC_FIELDS.includes(field)) problems.push(`unknown field spec.${field}`);
  if (!spec.shortDescription) problems.push('no shortDescription');
  else {
    if (/[\r\n]/.test(spec.shortDescription)) problems.push('line break in shortDescription');
    if (spec.shortDescription.length > 50) problems.push(`shortDescription longer than 50 characters (${spec.shortDescription.length})`);
  }
  if (!spec.description) problems.push('no description');
  if (!spec.homepage?.startsWith('https://')) problems.push('homepage is not an https URL');
  if (!spec.version) problems.push('no version');
  else if (!KREW_VERSION.test(spec.version)) problems.push(`version ${spec.version} is not semver with a leading v`);
  if (!Array.isArray(spec.platforms) || spec.platforms.length === 0) problems.push('no platforms');
  for (const [i, platform] of (spec.platforms ?? []).entries()) {
    const at = `platforms[${i}]`;
    for (const field of Object.keys(platform)) if (!PLATFORM_FIELDS.includes(field)) problems.push(`unknown field ${at}.${field}`);
    if (!platform.uri) problems.push(`${at}: no uri`);
    else if (!platform.uri.startsWith('https://')) problems.push(`${at}: uri is not https`);
    if (!/^[a-f0-9]{64}$/.test(platform.sha256 ?? '')) problems.push(`${at}: sha256 is not 64 lowercase hex digits`);
    if (!platform.bin) problems.push(`${at}: no bin`);
    if (platform.files !== undefined) {
      if (platform.files.length === 0) problems.push(`${at}: files is empty`);
      for (const f of platform.files) if (!f.from || !f.to) problems.push(`${at}: a file without from or to`);
    }
    const selector = platform.selector as { matchLabels?: Record<string, string>; matchExpressions?: { key: string }[] } | undefined;
    if (!selector) problems.push(`${at}: no selector`);
    else {
      const keys = [...Object.keys(selector.matchLabels ?? {}), ...(selector.matchExpressions ?? []).map((e) => e.key)];
      if (keys.length === 0) problems.push(`${at}: empty selector`);
      for (const key of keys) if (key !== 'os' && key !== 'arch') problems.push(`${at}: selector key ${key} not supported`);
    }
  }
  return problems;
}

const committed = parse(readFileSync(MANIFEST_PATH, 'utf8')) as KrewPlugin;
const manifestName = basename(MANIFEST_PATH, '.yaml');

describe('plugins/planwarden.yaml: the krew plugin manifest', () => {
  it("passes krew's validation", () => {
    expect(krewProblems(manifestName, committed)).to.deep.equal([]);
  });

  it("is the release of package.json's version, with a leading v", () => {
    expect(committed.spec.version).to.equal(releaseVersion());
    expect(committed.spec.platforms[0]!.uri).to.match(new RegExp(`/${archiveName(releaseVersion()).replace(/\./g, '\\.')}$`));
  });

  it('is what scripts/krew-manifest.ts writes for its uri and sha256', () => {
    const platform = committed.spec.platforms[0]!;
    const expected = renderManifest(krewManifest({ version: committed.spec.version, uri: platform.uri, sha256: platform.sha256 }));
    expect(readFileSync(MANIFEST_PATH, 'utf8')).to.equal(expected);
  });

  it('says so while its sha256 is the placeholder of an unreleased version', () => {
    const text = readFileSync(MANIFEST_PATH, 'utf8');
    if (committed.spec.platforms.some((p) => p.sha256 === UNRELEASED_SHA256)) expect(text).to.contain('No release yet');
    else expect(text).to.not.contain('No release yet');
  });

  it('names as bin the plugin (and the completion helper exists beside it), under the archive root its files take', () => {
    const platform = committed.spec.platforms[0]!;
    expect(platform.files).to.deep.equal([{ from: 'planwarden/*', to: '.' }]);
    expect(existsSync(join(PROJECT_ROOT, platform.bin))).to.equal(true);
    expect(existsSync(join(PROJECT_ROOT, 'bin', 'kubectl_complete-planwarden'))).to.equal(true);
  });

  const broken: [string, (p: KrewPlugin) => void, string][] = [
    ['a version without the leading v', (p) => void (p.spec.version = '0.1.0'), 'version 0.1.0 is not semver with a leading v'],
    [
      'a short description over 50 characters',
      (p) => void (p.spec.shortDescription = 'x'.repeat(51)),
      'shortDescription longer than 50 characters (51)',
    ],
    ['a short description on two lines', (p) => void (p.spec.shortDescription = 'a\nb'), 'line break in shortDescription'],
    [
      'a sha256 in capitals',
      (p) => void (p.spec.platforms[0]!.sha256 = 'A'.repeat(64)),
      'platforms[0]: sha256 is not 64 lowercase hex digits',
    ],
    ['a platform without bin', (p) => void (p.spec.platforms[0]!.bin = ''), 'platforms[0]: no bin'],
    [
      'a selector on another key',
      (p) => void (p.spec.platforms[0]!.selector.matchExpressions[0]!.key = 'distro'),
      'platforms[0]: selector key distro not supported',
    ],
    ['no platforms', (p) => void (p.spec.platforms = []), 'no platforms'],
    ['an unknown field', (p) => void ((p.spec as unknown as Record<string, unknown>).sha = 'x'), 'unknown field spec.sha'],
  ];
  for (const [sentence, breakIt, problem] of broken) {
    it(`the validation here catches ${sentence}`, () => {
      const copy = structuredClone(committed);
      breakIt(copy);
      expect(krewProblems(manifestName, copy)).to.deep.equal([problem]);
    });
  }
});

describe('scripts/krew-manifest.ts', () => {
  let work = '';
  before(() => {
    work = mkdtempSync(join(tmpdir(), 'planwarden-krew-'));
  });
  after(() => {
    rmSync(work, { recursive: true, force: true });
  });

  const script = (args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'scripts', 'krew-manifest.ts'), ...args], {
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('writes the manifest of a given archive: its uri under the release URL, its sha256', function () {
    this.timeout(60_000);
    const archive = join(work, 'release.tar.gz');
    writeFileSync(archive, 'not really a tarball, but bytes to digest');
    const out = join(work, 'planwarden.yaml');
    const r = script(['--release-url', 'https://example.com/releases/v9/', '--archive', archive, '--out', out]);
    expect(r.status, r.stderr).to.equal(0);
    const written = parse(readFileSync(out, 'utf8')) as KrewPlugin;
    // As sha256sum computes it, which is how a user checks a download.
    const sum = spawnSync('sha256sum', [archive], { encoding: 'utf8' }).stdout.split(' ')[0];
    expect(written.spec.platforms[0]!.sha256).to.equal(sum).and.to.equal(sha256File(archive));
    expect(written.spec.platforms[0]!.uri).to.equal(`https://example.com/releases/v9/${archiveName(releaseVersion())}`);
    expect(krewProblems('planwarden', written)).to.deep.equal([]);
    expect(readFileSync(out, 'utf8')).to.not.contain('No release yet');
  });

  it('refuses to run without an https release URL', function () {
    this.timeout(60_000);
    const r = script(['--archive', join(work, 'x')]);
    expect(r.status).to.equal(1);
    expect(r.stderr).to.contain('--release-url https://… is required');
  });
});
