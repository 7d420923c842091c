// `kubectl planwarden install` and `upgrade` of a package in KUDO's layout
// (test/packages/kv-store: a StatefulSet behind a headless Service, a ConfigMap) on the real
// control plane: the webhook judges the writes, the controller runs the plans, kwok runs the
// Pods. The plugin runs as a child process, as a person would run it.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Instance } from '../../../shared/api/schema.ts';
import { PROJECT_ROOT } from '../../controlplane/build.ts';
import { kubectlOk, testKubeconfig, useNamespace } from '../fixture.ts';

const BIN = join(PROJECT_ROOT, 'bin', 'kubectl-planwarden.js');
const KV = join(PROJECT_ROOT, 'test', 'packages', 'kv-store');
const KV2 = join(PROJECT_ROOT, 'test', 'packages', 'kv-store-v2');

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args, '--kubeconfig', testKubeconfig()], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 170_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

describe('kubectl-planwarden install / upgrade of a KUDO-layout package (real apiserver, webhook and controller)', function () {
  this.timeout(180_000);
  const ns = useNamespace('pkg');

  it('install --wait: the OperatorVersion is applied, the Instance created, deploy reaches COMPLETE with the StatefulSet ready', async function () {
    const r = await cli(['install', KV, '--instance', 'cache', '-n', ns(), '-p', 'REPLICAS=2', '--wait', '--timeout', '150s']);
    expect(r.code, `${r.stdout}\n${r.stderr}`).to.equal(0);
    expect(r.stdout).to.contain(`operatorversion ${ns()}/kv-store-1.0.0 created (server-side apply)`);
    expect(r.stdout).to.contain(`instance ${ns()}/cache created on kv-store-1.0.0`);
    expect(r.stdout).to.match(/plan deploy COMPLETE in \S+ \(run deploy-\S+\)/);
    const sts = JSON.parse(await kubectlOk(['-n', ns(), 'get', 'statefulset', 'cache', '-o', 'json'])) as { spec: { replicas: number } };
    expect(sts.spec.replicas).to.equal(2);
    const managers = await kubectlOk([
      '-n',
      ns(),
      'get',
      'operatorversion',
      'kv-store-1.0.0',
      '--show-managed-fields',
      '-o',
      'jsonpath={.metadata.managedFields[*].manager}',
    ]);
    expect(managers).to.contain('kubectl-planwarden');
  });

  it('a refusal is printed as the webhook gave it, exit 1: a value that does not fit its parameter', async function () {
    const r = await cli(['install', KV, '--instance', 'bad', '-n', ns(), '-p', 'REPLICAS=many']);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.contain('kv-store-1.0.0 unchanged');
    expect(r.stderr).to.match(/^error: admission webhook "[^"]+" denied the request: .*REPLICAS/m);
    expect(r.stderr).to.contain('instance.parameter-invalid');
  });

  it('upgrade --wait to the second version: pre-checks done, spec.operatorVersion moved, the upgrade plan COMPLETE', async function () {
    const r = await cli(['upgrade', KV2, '--instance', 'cache', '-n', ns(), '-p', 'MAX_CLIENTS=2000', '--wait', '--timeout', '150s']);
    expect(r.code, `${r.stdout}\n${r.stderr}`).to.equal(0);
    expect(r.stdout).to.contain(`operatorversion ${ns()}/kv-store-1.1.0 created (server-side apply)`);
    expect(r.stdout).to.contain(`created UpdatePlan ${ns()}/kv-store-1.1.0 for target kv-store-1.1.0`);
    expect(r.stdout).to.contain(`instance ${ns()}/cache upgraded from kv-store-1.0.0 to kv-store-1.1.0`);
    expect(r.stdout).to.match(/plan upgrade COMPLETE in \S+ \(run upgrade-\S+\)/);
    const inst = JSON.parse(await kubectlOk(['-n', ns(), 'get', 'instance', 'cache', '-o', 'json'])) as Instance;
    expect(inst.spec.operatorVersion.name).to.equal('kv-store-1.1.0');
    expect(inst.spec.parameters).to.deep.equal({ REPLICAS: '2', MAX_CLIENTS: '2000' });
    const conf = await kubectlOk(['-n', ns(), 'get', 'configmap', 'cache-config', '-o', 'jsonpath={.data.kv\\.conf}']);
    expect(conf).to.contain('maxclients 2000');
  });

  it('upgrade to the version it runs, without values: nothing to do, exit 0', async function () {
    const r = await cli(['upgrade', KV2, '--instance', 'cache', '-n', ns()]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('already runs kv-store-1.1.0: nothing to upgrade');
  });
});
