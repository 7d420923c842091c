// The kubectl plugin against the real control plane: the webhook judges its writes and the
// controller runs the plans. Each call runs bin/kubectl-planwarden.js as a child process
// (one test goes through `kubectl planwarden`, found on PATH like any plugin).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { HistoryEntry, PlanStatus } from '../../../shared/api/schema.ts';
import { PROJECT_ROOT } from '../../controlplane/build.ts';
import { kubectlOk, testKubeconfig, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';

const BIN = join(PROJECT_ROOT, 'bin', 'kubectl-planwarden.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface Started {
  child: ChildProcess;
  done: Promise<Run>;
  stderr: () => string;
}

/** Starts the plugin with `args` and the test kubeconfig. */
function start(args: string[], opts: { env?: NodeJS.ProcessEnv; viaKubectl?: boolean; timeoutMs?: number } = {}): Started {
  const argv = [...args, '--kubeconfig', testKubeconfig()];
  const child = opts.viaKubectl
    ? spawn('kubectl', ['planwarden', ...argv], { env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [BIN, ...argv], { env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Run>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
  return { child, done, stderr: () => stderr };
}

const cli = (args: string[], opts: Parameters<typeof start>[1] = {}) => start(args, opts).done;

async function waitForJsonPath(ns: string, name: string, path: string, value: string): Promise<void> {
  await kubectlOk(['-n', ns, 'wait', `instance/${name}`, `--for=jsonpath={${path}}=${value}`, '--timeout=60s']);
}

describe('kubectl-planwarden (real apiserver, webhook and controller)', function () {
  this.timeout(120_000);
  const ns = useNamespace('cli');
  const inst = (...args: string[]) => [...args, '--instance', 'web', '-n', ns()];

  before(async function () {
    const ov = dummyOperatorVersion('app-1.0.0', ns());
    // A plan that fails for good, and a parameter that starts the stuck restore plan.
    ov.spec.tasks!.push({ name: 'boom', kind: 'Dummy', spec: { fatal: true } });
    ov.spec.plans.explode = { phases: [{ name: 'main', steps: [{ name: 'boom', tasks: ['boom'] }] }] };
    ov.spec.parameters!.push({ name: 'RESTORE_FROM', default: 'none', trigger: 'restore' });
    // A plan that never finishes and may be restarted: restarting it draws a webhook warning.
    ov.spec.plans.hang = { phases: [{ name: 'main', steps: [{ name: 'hang', tasks: ['stuck'] }] }] };
    await kubectlOk(['apply', '-f', '-'], { input: json(ov) });
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('web', ns(), 'app-1.0.0')) });
  });

  it('plan status --wait, right after the Instance is created, follows deploy to COMPLETE and prints its tree', async function () {
    const r = await cli(inst('plan', 'status', '--wait'));
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).to.match(
      /^Plan deploy \[COMPLETE\] serial, run deploy-\S+, trigger create, operatorVersion app-1.0.0, started .*, took \S+/,
    );
    expect(r.stdout).to.contain('└── Phase main [COMPLETE] serial');
    expect(r.stdout).to.match(/├── Step work \[COMPLETE\]/);
    expect(r.stdout).to.match(/└── Step slow \[COMPLETE\].*took \d/);
    expect(r.stdout, 'no colors when stdout is not a terminal').not.to.contain('\x1b[');
  });

  let backupId = '';

  it('plan trigger backup --wait prints the id, shows progress and exits 0 when COMPLETE', async function () {
    const r = await cli(inst('plan', 'trigger', 'backup', '--wait'));
    expect(r.code, r.stderr).to.equal(0);
    const id = /with id (\S+)/.exec(r.stdout)?.[1];
    expect(id).to.match(/^backup-\d{8}-\d{6}-[0-9a-f]{4}$/);
    backupId = id!;
    expect(r.stdout).to.match(new RegExp(`plan backup COMPLETE in \\S+ \\(run ${backupId}\\)`));
    // Not a terminal: one progress line per change, on stderr.
    expect(r.stderr).to.match(/^\[\S+\] (waiting for plan "backup" to start|plan backup (PENDING|IN_PROGRESS))/m);
    expect(r.stderr).not.to.contain('\r');
  });

  it('plan status shows the backup run as a tree, and -o json|yaml its planStatus entry', async function () {
    const r = await cli(inst('plan', 'status'));
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout.split('\n')[0]).to.match(
      new RegExp(`^Plan backup \\[COMPLETE\\] serial, run ${backupId}, trigger manual, operatorVersion app-1.0.0, started `),
    );
    expect(r.stdout).to.match(/└── Phase main \[COMPLETE\] serial\n {4}└── Step slow \[COMPLETE\] tasks done 1, finished \S+, took [2-9]/);

    const asJson = await cli(inst('plan', 'status', '-o', 'json'));
    const entry = JSON.parse(asJson.stdout) as PlanStatus;
    expect(entry).to.include({ status: 'COMPLETE', id: backupId, trigger: 'manual' });

    const asYaml = await cli(inst('plan', 'status', '--plan', 'deploy', '-o', 'yaml'));
    expect(asYaml.stdout).to.match(/^status: COMPLETE$/m);
    expect(asYaml.stdout).to.match(/^trigger: create$/m);
  });

  it('plan history lists deploy and backup', async function () {
    const r = await cli(inst('plan', 'history'));
    expect(r.code, r.stderr).to.equal(0);
    const [header, ...rows] = r.stdout.trimEnd().split('\n');
    expect(header).to.match(/^PLAN\s+ID\s+STATUS\s+TRIGGER\s+REQUESTED BY\s+STARTED\s+FINISHED\s+DURATION\s+MESSAGE$/);
    expect(rows.map((row) => row.split(/\s+/).slice(0, 4))).to.deep.include.members([['backup', backupId, 'COMPLETE', 'manual']]);
    expect(rows.some((row) => /^deploy\s+deploy-\S+\s+COMPLETE\s+create\s/.test(row))).to.equal(true, r.stdout);

    const asJson = JSON.parse((await cli(inst('plan', 'history', '-o', 'json'))).stdout) as HistoryEntry[];
    expect(asJson.map((h) => h.plan)).to.include.members(['deploy', 'backup']);
  });

  it('plan trigger of a plan that fails for good exits 1 and shows the message', async function () {
    const r = await cli(inst('plan', 'trigger', 'explode', '--wait'));
    expect(r.code, r.stderr).to.equal(1);
    expect(r.stdout).to.match(/plan explode FATAL_ERROR in \S+ \(run explode-\S+\): .*failing for good/);
  });

  it('plan trigger of an unknown plan prints the webhook denial as it was written and exits 1', async function () {
    const r = await cli(inst('plan', 'trigger', 'bakup'));
    expect(r.code).to.equal(1);
    expect(r.stdout).to.equal('');
    expect(r.stderr).to.equal(
      `error: admission webhook "instances.planwarden.dev" denied the request: Instance "${ns()}/web": trigger of plan "bakup" refused: ` +
        'OperatorVersion "app-1.0.0" has no plan "bakup" (its plans: backup, cleanup, deploy, explode, hang, restore, update); ' +
        'set spec.planExecution.planName to one of: backup, deploy, explode, hang, restore, update (did you mean "backup"?) [rule instance.unknown-plan]\n',
    );
  });

  it('plan trigger restore --wait in the background exits 1 once plan abort stops it', async function () {
    const waiting = start(inst('plan', 'trigger', 'restore', '--wait', '--timeout', '60s'));
    await waitForJsonPath(ns(), 'web', '.status.activePlan.name', 'restore');
    await waitForJsonPath(ns(), 'web', '.status.activePlan.status', 'IN_PROGRESS');

    const abort = await cli(inst('plan', 'abort'));
    expect(abort.code, abort.stderr).to.equal(0);
    expect(abort.stdout).to.match(/^abort requested for plan restore \(run restore-\S+\) on instance cli-\S+\/web$/m);

    const r = await waiting.done;
    expect(r.code, r.stderr).to.equal(1);
    expect(r.stdout).to.match(/plan restore ABORTED in \S+ \(run restore-\S+\): aborted on request/);
  });

  it('plan abort with nothing running says so and exits 1', async function () {
    const r = await cli(inst('plan', 'abort'));
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(
      /^error: no plan is running on instance cli-\S+\/web \(the last plan, restore, is ABORTED\): nothing to abort$/m,
    );
  });

  it('plan abort works again while an earlier abort is still set in the spec', async function () {
    // restore started by a parameter change: spec.planExecution still says abort: true.
    await kubectlOk([
      '-n',
      ns(),
      'patch',
      'instance',
      'web',
      '--type=merge',
      '-p',
      json({ spec: { parameters: { RESTORE_FROM: 'snap-1' } } }),
    ]);
    await waitForJsonPath(ns(), 'web', '.status.activePlan.status', 'IN_PROGRESS');
    const before = JSON.parse(await kubectlOk(['-n', ns(), 'get', 'instance', 'web', '-o', 'json'])) as {
      spec: { planExecution?: { abort?: boolean } };
    };
    expect(before.spec.planExecution?.abort).to.equal(true);

    const r = await cli(inst('plan', 'abort', '--wait', '--timeout', '60s'));
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/plan restore ABORTED in \S+ \(run restore-\S+\)/);
  });

  it('plan trigger --wait exits 3 when --timeout passes first', async function () {
    const r = await cli(inst('plan', 'trigger', 'restore', '--wait', '--timeout', '3s'));
    expect(r.code).to.equal(3);
    expect(r.stderr).to.match(/error: timed out after 3s waiting for plan restore \(id restore-\S+\); last seen: /);
    await waitForJsonPath(ns(), 'web', '.status.activePlan.status', 'IN_PROGRESS');
    expect((await cli(inst('plan', 'abort'))).code).to.equal(0);
    await waitForJsonPath(ns(), 'web', '.status.activePlan.status', 'ABORTED');
  });

  it('prints the warnings the webhook returns, as kubectl does (restarting a running plan)', async function () {
    const first = await cli(inst('plan', 'trigger', 'hang'));
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stderr).to.not.match(/^Warning: /m);
    await waitForJsonPath(ns(), 'web', '.status.activePlan.status', 'IN_PROGRESS');
    const again = await cli(inst('plan', 'trigger', 'hang'));
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stderr).to.match(/^Warning: plan "hang" is IN_PROGRESS .*this change restarts it$/m);
    expect((await cli(inst('plan', 'abort'))).code).to.equal(0);
    await waitForJsonPath(ns(), 'web', '.status.activePlan.status', 'ABORTED');
  });

  it('usage errors exit 2 before anything is sent', async function () {
    const r = await cli(['plan', 'trigger', '--instance', 'web', '-n', ns()]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.equal("error: the plan name is required\nSee 'kubectl planwarden plan trigger --help' for usage.\n");
    const bad = await cli(inst('plan', 'status', '--wat'));
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('unknown flag: --wat');
  });

  it('runs as a kubectl plugin found on PATH, taking -n and --context like kubectl', async function () {
    const dir = mkdtempSync(join(tmpdir(), 'pw-plugin-'));
    try {
      symlinkSync(BIN, join(dir, 'kubectl-planwarden'));
      const env = { PATH: `${dir}:${process.env.PATH ?? ''}` };
      const r = await cli(['plan', 'history', '--instance', 'web', '-n', ns(), '--plan', 'backup'], { env, viaKubectl: true });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(new RegExp(`^backup\\s+${backupId}\\s+COMPLETE\\s+manual\\s`, 'm'));
      const status = await cli(['plan', 'status', '--instance', 'web', '-n', ns(), '--plan', 'backup', '--context', 'no-such-context'], {
        env,
        viaKubectl: true,
      });
      expect(status.code).to.equal(1);
      expect(status.stderr).to.match(/error: context "no-such-context" does not exist in the kubeconfig/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs from bin/ on PATH (the README's set-up) with kubectl's flags before the command, and completes through kubectl_complete-planwarden", async function () {
    const env = { PATH: `${join(PROJECT_ROOT, 'bin')}:${process.env.PATH ?? ''}` };
    for (const args of [
      ['-n', ns(), 'plan', 'history', '--instance', 'web', '--plan', 'backup'],
      [`--namespace=${ns()}`, 'plan', 'history', '--plan=backup', '--instance', 'web'],
      ['plan', '-n', ns(), 'history', '--instance', 'web', '--plan', 'backup'],
    ]) {
      const r = await cli(args, { env, viaKubectl: true });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(new RegExp(`^backup\\s+${backupId}\\s+COMPLETE\\s+manual\\s`, 'm'));
    }
    // What kubectl (>= 1.26) runs to complete `kubectl planwarden … --instance <TAB>`.
    const completion = await new Promise<Run>((resolve, reject) => {
      const child = spawn(
        'kubectl_complete-planwarden',
        ['--kubeconfig', testKubeconfig(), '-n', ns(), 'plan', 'trigger', '--instance', 'web', ''],
        {
          env: { ...process.env, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
    expect(completion.code, completion.stderr).to.equal(0);
    // The plan names of the Instance, read with kubectl: every one but cleanup.
    expect(completion.stdout).to.equal('backup\ndeploy\nexplode\nhang\nrestore\nupdate\n:4\n');
  });
});
