// The trigger policy end to end, with plain kubectl as a new user types it: an abort, then a
// merge patch with a new trigger (which keeps `abort: true`) is refused with a message —
// never admitted and silently dropped — for real writes and `--dry-run=server` alike; with
// `abort: false` the same trigger runs. Malformed planExecutions get the schema's verdict.
import { expect } from 'chai';
import type { Instance, PlanStatus } from '../../../shared/api/schema.ts';
import { kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function getInstance(ns: string, name: string): Promise<Instance> {
  return JSON.parse(await kubectlOk(['-n', ns, 'get', 'instance', name, '-o', 'json'])) as Instance;
}

async function waitForRun(
  ns: string,
  name: string,
  plan: string,
  done: (run: PlanStatus) => boolean,
  timeoutMs = 60_000,
): Promise<PlanStatus> {
  const until = Date.now() + timeoutMs;
  let last: Instance | undefined;
  while (Date.now() < until) {
    last = await getInstance(ns, name);
    const run = last.status?.planStatus?.[plan];
    if (run && done(run)) return run;
    await sleep(300);
  }
  throw new Error(`timed out waiting for plan ${plan}: ${JSON.stringify(last?.status?.planStatus?.[plan])}`);
}

const mergePatch = (ns: string, body: unknown, ...extra: string[]) =>
  kubectl(['-n', ns, 'patch', 'instance', 'db', '--type=merge', '-p', json(body), ...extra]);

describe('trigger policy: abort, then a new trigger, with plain kubectl', function () {
  this.timeout(120_000);
  const ns = useNamespace('policy');

  before(async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion('db-1.0.0', ns())) });
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('db', ns(), 'db-1.0.0')) });
    await waitForRun(ns(), 'db', 'deploy', (r) => r.status === 'COMPLETE');
  });

  it('aborts a running plan with a merge patch of abort: true', async function () {
    expect((await mergePatch(ns(), { spec: { planExecution: { planName: 'restore', id: 'r1' } } })).code).to.equal(0);
    await waitForRun(ns(), 'db', 'restore', (r) => r.id === 'r1' && r.status === 'IN_PROGRESS');
    const r = await mergePatch(ns(), { spec: { planExecution: { abort: true } } });
    expect(r.code, r.stderr).to.equal(0);
    await waitForRun(ns(), 'db', 'restore', (run) => run.id === 'r1' && run.status === 'ABORTED');
  });

  it('refuses a new trigger that keeps abort: true, for --dry-run=server and for real, saying to set abort: false', async function () {
    const before = await getInstance(ns(), 'db');
    for (const dry of [['--dry-run=server'], []]) {
      const r = await mergePatch(ns(), { spec: { planExecution: { planName: 'backup', id: 't5' } } }, ...dry);
      expect(r.code, `${dry.join(' ')} ${r.stdout}`).to.not.equal(0);
      expect(r.stderr)
        .to.contain('trigger of plan "backup" (id "t5") refused')
        .and.contain('abort: false')
        .and.contain('[rule instance.abort-still-set]');
    }
    const after = await getInstance(ns(), 'db');
    expect(after.metadata.generation).to.equal(before.metadata.generation);
    expect(after.spec.planExecution).to.deep.equal(before.spec.planExecution);
  });

  it('judges an unknown plan behind a lingering abort as unknown, for --dry-run=server and for real', async function () {
    for (const dry of [['--dry-run=server'], []]) {
      const r = await mergePatch(ns(), { spec: { planExecution: { planName: 'bakup', id: 't6' } } }, ...dry);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.contain('has no plan "bakup"').and.contain('did you mean "backup"?').and.contain('[rule instance.unknown-plan]');
    }
  });

  it('runs the trigger once it says abort: false, with its own id', async function () {
    const r = await mergePatch(ns(), { spec: { planExecution: { planName: 'backup', id: 't5', abort: false } } });
    expect(r.code, r.stderr).to.equal(0);
    const run = await waitForRun(ns(), 'db', 'backup', (x) => x.id === 't5' && x.status === 'COMPLETE');
    expect(run.trigger).to.equal('manual');
  });

  it("gives malformed planExecutions the API server's verdict: only abort, an empty id, abort as a string", async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('bare', ns(), 'db-1.0.0')) });
    const cases: { body: unknown; says: RegExp }[] = [
      { body: { spec: { planExecution: { abort: true } } }, says: /planName: Required value/ },
      {
        body: { spec: { planExecution: { planName: 'backup', id: '' } } },
        says: /spec\.planExecution\.id: Invalid value: "": spec\.planExecution\.id in body should be at least 1 chars long/,
      },
      {
        body: { spec: { planExecution: { planName: 'backup', id: 'x', abort: 'true' } } },
        says: /spec\.planExecution\.abort: Invalid value: "string": spec\.planExecution\.abort in body must be of type boolean/,
      },
    ];
    for (const c of cases) {
      const r = await kubectl(['-n', ns(), 'patch', 'instance', 'bare', '--type=merge', '-p', json(c.body)]);
      expect(r.code, json(c.body)).to.not.equal(0);
      expect(r.stderr).to.match(c.says);
    }
  });
});
