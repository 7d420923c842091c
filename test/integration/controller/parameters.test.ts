// Typed parameters, per-run values and who asked, on the real control plane (apiserver,
// webhook and controller): refusals leave nothing stored and the generation unchanged; a
// per-run value reaches the run's objects, its status and history, never spec.parameters;
// requestedBy is the user of the write (kubectl --as), not what a client writes.
import { expect } from 'chai';
import type { OperatorVersion, PlanStatus } from '../../../shared/api/schema.ts';
import { kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { runPlugin as plugin } from '../../support/plugin.ts';
import { instance, json, webOperatorVersion } from '../objects.ts';
import { getInstance, waitForPlan } from '../instanceHandle.ts';

/** The wait for a run, with this file's 60 s default. */
const waitForRun = (ns: string, name: string, plan: string, done: (run: PlanStatus) => boolean, timeoutMs = 60_000) =>
  waitForPlan(ns, name, plan, done, timeoutMs);

/** The web blueprint with typed parameters: REPLICAS an integer 1..5, LOG_LEVEL an enum given per run. */
function typedOperatorVersion(name: string, ns: string): OperatorVersion {
  const ov = webOperatorVersion(name, ns);
  ov.spec.parameters = [
    { name: 'REPLICAS', default: '1', trigger: 'deploy', type: 'integer', minimum: 1, maximum: 5 },
    { name: 'IMAGE_TAG', default: '1.27', pattern: '[0-9]+\\.[0-9]+' },
    { name: 'LOG_LEVEL', default: 'info', trigger: 'reconfigure', enum: ['info', 'debug', 'warn'], perRun: true },
  ];
  return ov;
}

describe('typed and per-run parameters, requestedBy (real control plane)', function () {
  this.timeout(150_000);
  const ns = useNamespace('params');

  before(async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(typedOperatorVersion('typed-1.0.0', ns())) });
    // alice and bob may edit Instances here, nothing else (impersonated with kubectl --as).
    await kubectlOk([
      '-n',
      ns(),
      'create',
      'role',
      'instance-editor',
      '--verb=get,list,watch,patch,update',
      '--resource=instances.planwarden.dev',
    ]);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'instance-editors', '--role=instance-editor', '--user=alice', '--user=bob']);
  });

  it('refuses an OperatorVersion whose default does not fit its own type', async function () {
    const ov = typedOperatorVersion('bad-1.0.0', ns());
    ov.spec.parameters![0]!.default = 'five';
    const r = await kubectl(['apply', '-f', '-'], { input: json(ov) });
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include('[rule ov.parameter-declaration-invalid]').and.include('default "five"');
    expect((await kubectl(['-n', ns(), 'get', 'operatorversion', 'bad-1.0.0'])).code).to.not.equal(0);
  });

  it('refuses creating an Instance with an integer "1e3": nothing is stored', async function () {
    const r = await kubectl(['apply', '-f', '-'], {
      input: json(instance('bad', ns(), 'typed-1.0.0', { parameters: { REPLICAS: '1e3' } })),
    });
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.parameter-invalid]').and.include('REPLICAS');
    expect(await getInstance(ns(), 'bad')).to.equal(undefined);
  });

  it('refuses an update to a value above the maximum: the generation is unchanged', async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('shop', ns(), 'typed-1.0.0')) });
    await waitForRun(ns(), 'shop', 'deploy', (r) => r.status === 'COMPLETE');
    const before = (await getInstance(ns(), 'shop'))!.metadata.generation;
    for (const value of ['9', '0x10', ' 3']) {
      const r = await kubectl([
        '-n',
        ns(),
        'patch',
        'instance',
        'shop',
        '--type=merge',
        '-p',
        json({ spec: { parameters: { REPLICAS: value } } }),
      ]);
      expect(r.code, value).to.not.equal(0);
      expect(r.stderr).to.include('[rule instance.parameter-invalid]');
    }
    expect((await getInstance(ns(), 'shop'))!.metadata.generation).to.equal(before);
  });

  it('runs a per-run value given with plain kubectl --as alice: the ConfigMap gets it, status and history record it and alice, spec.parameters stay', async function () {
    const patch = { spec: { planExecution: { planName: 'reconfigure', id: 'r-1', abort: false, parameters: { LOG_LEVEL: 'debug' } } } };
    await kubectlOk(['-n', ns(), '--as=alice', 'patch', 'instance', 'shop', '--type=merge', '-p', json(patch)]);
    const run = await waitForRun(ns(), 'shop', 'reconfigure', (r) => r.id === 'r-1' && r.status === 'COMPLETE');
    expect(run.parameters).to.deep.equal({ LOG_LEVEL: 'debug' });
    expect(run.requestedBy).to.equal('alice');
    expect(await kubectlOk(['-n', ns(), 'get', 'configmap', 'shop-config', '-o', 'jsonpath={.data.logLevel}'])).to.equal('debug');
    const inst = (await getInstance(ns(), 'shop'))!;
    expect(inst.spec.parameters ?? {}).to.not.have.property('LOG_LEVEL');
    const events = await kubectlOk([
      '-n',
      ns(),
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=shop',
      '-o',
      'jsonpath={.items[*].message}',
    ]);
    expect(events).to.include('requested by alice');
  });

  it('refuses a per-run value for a parameter not declared perRun, and one outside the enum', async function () {
    const notPerRun = await kubectl([
      '-n',
      ns(),
      'patch',
      'instance',
      'shop',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'reconfigure', id: 'r-2', parameters: { REPLICAS: '2' } } } }),
    ]);
    expect(notPerRun.stderr).to.include('[rule instance.per-run-parameter-not-allowed]');
    const outside = await kubectl([
      '-n',
      ns(),
      'patch',
      'instance',
      'shop',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'reconfigure', id: 'r-2', parameters: { LOG_LEVEL: 'loud' } } } }),
    ]);
    expect(outside.stderr).to.include('[rule instance.parameter-invalid]');
  });

  it('runs a per-run value through the plugin as bob (-p, --as): the earlier run is in history with alice', async function () {
    const r = await plugin([
      'plan',
      'trigger',
      'reconfigure',
      '--instance',
      'shop',
      '-n',
      ns(),
      '-p',
      'LOG_LEVEL=warn',
      '--as',
      'bob',
      '--wait',
    ]);
    expect(r.code, r.stderr).to.equal(0);
    const run = await waitForRun(ns(), 'shop', 'reconfigure', (x) => x.status === 'COMPLETE' && x.parameters?.LOG_LEVEL === 'warn');
    expect(run.requestedBy).to.equal('bob');
    const inst = (await getInstance(ns(), 'shop'))!;
    const earlier = inst.status!.history!.find((h) => h.id === 'r-1');
    expect(earlier).to.include({ requestedBy: 'alice' });
    expect(earlier!.parameters).to.deep.equal({ LOG_LEVEL: 'debug' });
    const history = await plugin(['plan', 'history', '--instance', 'shop', '-n', ns()]);
    expect(history.stdout).to.include('REQUESTED BY').and.include('alice');
  });

  it('keeps the requested-by stamp: a client writing another name gets the stored one back', async function () {
    const stored = (await getInstance(ns(), 'shop'))!.metadata.annotations?.['planwarden.dev/requested-by'];
    expect(stored).to.include('"bob"');
    await kubectlOk([
      '-n',
      ns(),
      'annotate',
      '--overwrite',
      'instance',
      'shop',
      'planwarden.dev/requested-by={"manual":{"user":"mallory","trigger":"reconfigure/x"}}',
    ]);
    expect((await getInstance(ns(), 'shop'))!.metadata.annotations?.['planwarden.dev/requested-by']).to.equal(stored);
  });

  it('names the user of a parameter change (kubectl --as alice) on the run it starts', async function () {
    await kubectlOk([
      '-n',
      ns(),
      '--as=alice',
      'patch',
      'instance',
      'shop',
      '--type=merge',
      '-p',
      json({ spec: { parameters: { REPLICAS: '2' } } }),
    ]);
    const run = await waitForRun(ns(), 'shop', 'deploy', (r) => r.trigger === 'parameter' && r.status === 'COMPLETE');
    expect(run.requestedBy).to.equal('alice');
  });
});
