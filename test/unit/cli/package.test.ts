// `package build|verify` and `render DIR`, offline, on the test packages in KUDO's layout
// (test/packages/): their output is compared with golden files in test/golden/cli/ (run
// with UPDATE_GOLDEN=1 to rewrite them after an intended change, and review the diff).
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { EXIT, memoryIO } from '../../../cli/io.ts';
import { run } from '../../../cli/run.ts';
import { PROJECT_ROOT } from '../../controlplane/build.ts';
import { expectGolden } from '../../support/golden.ts';

const KV = join(PROJECT_ROOT, 'test', 'packages', 'kv-store');
const KV2 = join(PROJECT_ROOT, 'test', 'packages', 'kv-store-v2');

async function cli(...argv: string[]) {
  const io = memoryIO();
  const code = await run(argv, io);
  return { code, out: io.out(), err: io.err() };
}

describe('cli package and render (offline, test packages)', () => {
  let work: string;
  before(() => {
    work = mkdtempSync(join(tmpdir(), 'pw-package-'));
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  /** A copy of kv-store with `files` written over it. */
  function variant(name: string, files: Record<string, string>): string {
    const dir = join(work, name);
    cpSync(KV, dir, { recursive: true });
    for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
    return dir;
  }

  it('package build prints the OperatorVersion kv-store-1.0.0 (golden), the notes on stderr', async () => {
    const r = await cli('package', 'build', KV, '-n', 'shop');
    expect(r.code).to.equal(EXIT.ok);
    expectGolden('cli/package-build-kv-store.yaml', r.out);
    expect(r.err).to.contain('params.yaml:29: parameter EXTRA_ARGS: its default is a list: type array');
  });

  it('package build of the second version prints kv-store-1.1.0 (golden)', async () => {
    const r = await cli('package', 'build', KV2, '-n', 'shop');
    expect(r.code, r.err).to.equal(EXIT.ok);
    expectGolden('cli/package-build-kv-store-v2.yaml', r.out);
  });

  it('render DIR --plan deploy prints the objects in the order the plan applies them (golden)', async () => {
    const r = await cli('render', KV, '--plan', 'deploy', '--instance', 'cache', '-n', 'shop', '-p', 'REPLICAS=2');
    expect(r.code, r.err).to.equal(EXIT.ok);
    expectGolden('cli/render-kv-store-deploy.yaml', r.out);
  });

  it('render DIR --plan backup names what the Delete task removes as a comment, then the Job (golden)', async () => {
    const r = await cli('render', KV, '--plan', 'backup', '-p', 'BACKUP_TARGET=s3://night/kv');
    expect(r.code, r.err).to.equal(EXIT.ok);
    expectGolden('cli/render-kv-store-backup.yaml', r.out);
  });

  it('render refuses a value that does not fit its declaration, naming the parameter', async () => {
    const r = await cli('render', KV, '--plan', 'deploy', '-p', 'REPLICAS=three');
    expect(r.code).to.equal(EXIT.failed);
    expect(r.err).to.contain('error: parameter REPLICAS: it is not a base-10 integer');
    expect(r.out).to.equal('');
  });

  it('render refuses an unknown plan, listing the plans', async () => {
    const r = await cli('render', KV, '--plan', 'restore');
    expect(r.code).to.equal(EXIT.failed);
    expect(r.err).to.contain('plan restore is not in OperatorVersion kv-store-1.0.0 (plans: backup, deploy, update, upgrade)');
  });

  it('render needs a value for a required parameter without a default', async () => {
    const dir = variant('required', { 'params.yaml': 'apiVersion: kudo.dev/v1beta1\nparameters:\n  - name: IMAGE\n' });
    const r = await cli('render', dir, '--plan', 'backup');
    expect(r.code).to.equal(EXIT.failed);
    expect(r.err).to.contain('parameter IMAGE is required and has no default: give it with -p IMAGE=VALUE');
  });

  it('render takes a folder or --operatorversion, not both and not neither', async () => {
    expect((await cli('render', KV, '--operatorversion', 'x', '--plan', 'deploy')).code).to.equal(EXIT.usage);
    expect((await cli('render', '--plan', 'deploy')).err).to.contain('give either a package folder or --operatorversion NAME');
    expect((await cli('render', KV)).err).to.contain('--plan is required');
  });

  it('package verify of kv-store: ok, every plan rendered, exit 0', async () => {
    const r = await cli('package', 'verify', KV);
    expect(r.code, r.out).to.equal(EXIT.ok);
    expect(r.out).to.contain('kv-store-1.0.0: ok (4 plans rendered: backup, deploy, update, upgrade)');
  });

  it('package verify names the webhook rule of each problem and exits 1', async () => {
    const dir = variant('broken', {
      'templates/service.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Name }}\n  namespace: kube-system\n',
      'templates/configmap.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Params.NOPE }}\n',
    });
    const r = await cli('package', 'verify', dir);
    expect(r.code).to.equal(EXIT.failed);
    expect(r.out).to.match(/^error: ov\.[a-z-]+: spec\.templates\["service\.yaml"\]/m);
    expect(r.out).to.match(/^error: instance\.preflight-invalid: plan deploy: task config: template configmap\.yaml: .*NOPE/m);
    expect(r.out).to.match(/^warning: ov.undeclared-parameter: .*NOPE$/m);
    expect(r.out).to.match(/^kv-store-1\.0\.0: 4 problems, 1 warning$/m);
  });

  it('package verify names an API version Kubernetes removed, the release and the replacement, and exits 1', async () => {
    const dir = variant('removed-api', {
      'templates/configmap.yaml':
        'apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: {{ .Name }}\nspec:\n  maxUnavailable: 1\n',
    });
    const r = await cli('package', 'verify', dir);
    expect(r.code).to.equal(EXIT.failed);
    expect(r.out).to.match(
      /^error: package\.api-removed: template configmap\.yaml: policy\/v1beta1 PodDisruptionBudget was removed in Kubernetes 1\.25; use policy\/v1$/m,
    );
  });

  it('package build of a folder without operator.yaml: exit 1 with the file and the rule id', async () => {
    const r = await cli('package', 'build', join(KV, 'templates'));
    expect(r.code).to.equal(EXIT.failed);
    expect(r.err).to.contain('operator.yaml: no operator.yaml in the package folder');
    expect(r.err).to.contain('[package.operator-missing]');
  });

  it('package build of a params.yaml that is not YAML: exit 1 naming file and line', async () => {
    const dir = variant('not-yaml', { 'params.yaml': 'parameters:\n  - name: A\n    default: "open\n' });
    const r = await cli('package', 'build', dir);
    expect(r.code).to.equal(EXIT.failed);
    expect(r.err).to.match(/params\.yaml:\d+: not valid YAML: .* \[package\.not-yaml\]/);
  });

  it('package build of a missing folder: exit 1', async () => {
    const r = await cli('package', 'build', join(work, 'nothing-here'));
    expect(r.code).to.equal(EXIT.failed);
    expect(r.err).to.contain('does not exist');
  });

  it('every verb has --help', async () => {
    for (const argv of [
      ['package', 'build', '--help'],
      ['package', 'verify', '--help'],
      ['render', '--help'],
      ['package', '--help'],
    ]) {
      const r = await cli(...argv);
      expect(r.code, argv.join(' ')).to.equal(EXIT.ok);
      expect(r.out, argv.join(' ')).to.contain('Usage:');
    }
  });
});
