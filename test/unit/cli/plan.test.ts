// The plan verbs without a cluster: when a followed run has ended, trigger ids, and the
// dispatcher's help, usage errors and exit codes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { freshTriggerId, parseRunParameters, runEnd } from '../../../cli/commands/plan.ts';
import { connect } from '../../../cli/connect.ts';
import { CliError, EXIT, memoryIO } from '../../../cli/io.ts';
import { run } from '../../../cli/run.ts';
import type { Instance, InstanceStatus } from '../../../shared/api/schema.ts';

function instance(status: InstanceStatus, planExecution?: Instance['spec']['planExecution']): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'web', namespace: 'prod', generation: 4 },
    spec: { operatorVersion: { name: 'app-1.0.0' }, planExecution },
    status,
  };
}

const mine = { planName: 'backup', id: 'b-2', abort: false };
const awaited = { plan: 'backup', id: 'b-2', triggeredAt: 4 };

describe('cli plan: has the awaited run ended?', () => {
  const cases: [string, Instance, string | undefined][] = [
    [
      'not while the previous run of the plan is the one in status',
      instance({ planStatus: { backup: { status: 'COMPLETE', id: 'b-1' } } }, mine),
      undefined,
    ],
    [
      'not while it runs',
      instance(
        { applied: { planExecution: { planName: 'backup', id: 'b-2' } }, planStatus: { backup: { status: 'IN_PROGRESS', id: 'b-2' } } },
        mine,
      ),
      undefined,
    ],
    ['yes when it is COMPLETE', instance({ planStatus: { backup: { status: 'COMPLETE', id: 'b-2' } } }, mine), 'finished COMPLETE'],
    ['yes when it is FATAL_ERROR', instance({ planStatus: { backup: { status: 'FATAL_ERROR', id: 'b-2' } } }), 'finished FATAL_ERROR'],
    ['yes when it is ABORTED', instance({ planStatus: { backup: { status: 'ABORTED', id: 'b-2' } } }), 'finished ABORTED'],
    [
      'yes when it is already filed in history (a newer run followed)',
      instance({
        planStatus: { backup: { status: 'IN_PROGRESS', id: 'b-3' } },
        history: [{ plan: 'backup', id: 'b-2', status: 'COMPLETE' }],
      }),
      'finished COMPLETE',
    ],
    [
      'not by a skipped schedule tick that has its id (a tick is never a run)',
      instance(
        {
          applied: { planExecution: { planName: 'backup', id: 'b-2' } },
          planStatus: { backup: { status: 'IN_PROGRESS', id: 'b-2' } },
          history: [{ plan: 'backup', id: 'b-2', status: 'SKIPPED', trigger: 'schedule' }],
        },
        mine,
      ),
      undefined,
    ],
    [
      'refused when the trigger was replaced before it started',
      instance({ planStatus: { backup: { status: 'COMPLETE', id: 'b-1' } } }, { planName: 'restore', id: 'r-1' }),
      'refused the trigger was replaced before it started: spec.planExecution is now restore with id r-1',
    ],
    [
      'refused when the controller refused this generation',
      instance(
        {
          conditions: [
            {
              type: 'PlanRunning',
              status: 'False',
              reason: 'TriggerRefused',
              observedGeneration: 4,
              message: 'plan "backup" does not exist',
            },
          ],
        },
        mine,
      ),
      'refused the controller refused the trigger: plan "backup" does not exist',
    ],
    [
      'not refused by a refusal of an older generation',
      instance(
        { conditions: [{ type: 'PlanRunning', status: 'False', reason: 'TriggerRefused', observedGeneration: 3, message: 'old' }] },
        mine,
      ),
      undefined,
    ],
    [
      'not while another plan holds the Instance (it starts afterwards)',
      instance(
        {
          activePlan: { name: 'deploy', id: 'd', status: 'IN_PROGRESS' },
          conditions: [{ type: 'PlanRunning', status: 'True', reason: 'PlanBusy', observedGeneration: 4 }],
        },
        mine,
      ),
      undefined,
    ],
  ];
  for (const [sentence, inst, expected] of cases) {
    it(sentence, () => {
      const end = runEnd(inst, awaited);
      const text =
        end === undefined
          ? undefined
          : end.kind === 'finished'
            ? `finished ${end.state}`
            : end.kind === 'refused'
              ? `refused ${end.message}`
              : end.kind;
      expect(text).to.equal(expected);
    });
  }

  it('without a trigger of its own (status --wait, abort --wait) only the run counts', () => {
    expect(runEnd(instance({}, { planName: 'restore', id: 'r' }), { plan: 'backup', id: 'b-2' })).to.equal(undefined);
  });
});

describe('cli plan: trigger ids', () => {
  it('are the plan, the UTC time to the second and a random suffix', () => {
    const id = freshTriggerId('backup', new Date('2026-11-22T10:11:12.345Z'));
    expect(id).to.match(/^backup-20261122-101112-[0-9a-f]{4}$/);
    expect(freshTriggerId('backup', new Date('2026-11-22T10:11:12.345Z'))).not.to.equal(id);
  });
});

describe('cli: dispatch, help and exit codes', () => {
  const cases: [string, string[], number, 'out' | 'err', RegExp][] = [
    ['--help prints the overview on stdout', ['--help'], EXIT.ok, 'out', /^kubectl planwarden: trigger, follow and abort/],
    ['no command prints the overview on stderr, a usage error', [], EXIT.usage, 'err', /Usage:\n {2}kubectl planwarden plan trigger NAME/],
    ['a group without verb lists its verbs', ['plan'], EXIT.usage, 'err', /kubectl planwarden plan history --instance INSTANCE/],
    [
      'an unknown command is a usage error',
      ['plans', 'status'],
      EXIT.usage,
      'err',
      /^error: unknown command "plans"\nSee 'kubectl planwarden --help' for usage\.\n$/,
    ],
    [
      'an unknown verb names the known ones',
      ['plan', 'stop'],
      EXIT.usage,
      'err',
      /^error: unknown command "plan stop" \(known: trigger, status, history, abort, preview, approve, reject, pending\)/,
    ],
    [
      'plan trigger --help',
      ['plan', 'trigger', '--help'],
      EXIT.ok,
      'out',
      /^Start a plan on an Instance[\s\S]*--timeout DURATION[\s\S]*-n, --namespace NS/,
    ],
    ['plan status --help', ['plan', 'status', '-h'], EXIT.ok, 'out', /-o, --output FORMAT/],
    ['plan history --help', ['plan', 'history', '--help'], EXIT.ok, 'out', /status\.history/],
    ['plan abort --help', ['plan', 'abort', '--help'], EXIT.ok, 'out', /spec\.planExecution\.abort: true/],
    ['update pre-checks --help', ['update', 'pre-checks', '--help'], EXIT.ok, 'out', /--accept-all/],
    ['trigger without a plan name', ['plan', 'trigger', '--instance', 'web'], EXIT.usage, 'err', /^error: the plan name is required\n/],
    [
      'trigger with two plan names',
      ['plan', 'trigger', 'a', 'b', '--instance', 'web'],
      EXIT.usage,
      'err',
      /one plan name expected, got: a b/,
    ],
    [
      'trigger without --instance',
      ['plan', 'trigger', 'backup'],
      EXIT.usage,
      'err',
      /^error: --instance is required\nSee 'kubectl planwarden plan trigger --help'/,
    ],
    ['status with a stray argument', ['plan', 'status', 'web'], EXIT.usage, 'err', /unexpected argument: web/],
    ['status with a bad -o', ['plan', 'status', '--instance', 'web', '-o', 'wide'], EXIT.usage, 'err', /--output "wide"/],
    [
      'abort with a bad --timeout',
      ['plan', 'abort', '--instance', 'web', '--timeout', 'soon'],
      EXIT.usage,
      'err',
      /--timeout "soon": not a duration/,
    ],
    ['pre-checks without --target', ['update', 'pre-checks'], EXIT.usage, 'err', /--target is required/],
    [
      'pre-checks with words but no --accept',
      ['update', 'pre-checks', '--target', 'x', 'uid1'],
      EXIT.usage,
      'err',
      /unexpected argument: uid1/,
    ],
    [
      'a kubeconfig that does not exist',
      ['plan', 'status', '--instance', 'web', '--kubeconfig', '/nonexistent/kubeconfig'],
      EXIT.failed,
      'err',
      /^error: cannot load kubeconfig \/nonexistent\/kubeconfig: /,
    ],
  ];
  for (const [sentence, argv, code, stream, pattern] of cases) {
    it(`${sentence}: exit ${code}`, async () => {
      const io = memoryIO();
      expect(await run(argv, io)).to.equal(code);
      expect(stream === 'out' ? io.out() : io.err()).to.match(pattern);
      expect(stream === 'out' ? io.err() : io.out()).to.equal('');
    });
  }
});

describe('cli: connection flags as kubectl', () => {
  let dir = '';
  let file = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'pw-cli-'));
    file = join(dir, 'kubeconfig');
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [
          { name: 'plain', context: { cluster: 'c', user: 'u' } },
          { name: 'team', context: { cluster: 'c', user: 'u', namespace: 'team-a' } },
        ],
        'current-context': 'plain',
      }),
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cases: [string, { context?: string; namespace?: string }, string, string][] = [
    ['the current context without a namespace means "default"', {}, 'plain', 'default'],
    ['--context picks another context, and its namespace', { context: 'team' }, 'team', 'team-a'],
    ['-n wins over the context namespace', { context: 'team', namespace: 'ops' }, 'team', 'ops'],
  ];
  for (const [sentence, flags, context, namespace] of cases) {
    it(sentence, () => {
      const conn = connect({ kubeconfig: file, ...flags });
      expect({ context: conn.context, namespace: conn.namespace }).to.deep.equal({ context, namespace });
    });
  }

  it('an unknown --context is an error listing the contexts', () => {
    expect(() => connect({ kubeconfig: file, context: 'prod' }))
      .to.throw(CliError)
      .with.property('message', 'context "prod" does not exist in the kubeconfig (contexts: plain, team)');
  });

  it('--as-group without --as is refused, never ignored', () => {
    expect(() => connect({ kubeconfig: file, 'as-group': ['ops'] }))
      .to.throw(CliError)
      .with.property('message')
      .that.matches(/--as-group needs --as/);
  });

  it('--as with --as-group connects (the client sends Impersonate-User and Impersonate-Group)', () => {
    expect(connect({ kubeconfig: file, as: 'alice', 'as-group': ['ops'] }).namespace).to.equal('default');
  });
});

describe('cli plan trigger: -p KEY=VALUE', () => {
  const rows: [string, string[] | undefined, Record<string, string> | undefined | RegExp][] = [
    ['no -p gives no per-run values', undefined, undefined],
    ['one -p gives one value', ['LEVEL=full'], { LEVEL: 'full' }],
    ['a value may contain "=" (only the first splits)', ['Q=a=b'], { Q: 'a=b' }],
    ['an empty value is a value', ['Q='], { Q: '' }],
    ['a flag without "=" is a usage error', ['LEVEL'], /-p expects KEY=VALUE/],
    ['an empty key is a usage error', ['=x'], /-p expects KEY=VALUE/],
    ['a key given twice is a usage error', ['A=1', 'A=2'], /-p A given twice/],
  ];
  for (const [sentence, flags, expected] of rows) {
    it(sentence, () => {
      if (expected instanceof RegExp) expect(() => parseRunParameters('plan trigger', flags)).to.throw(expected);
      else expect(parseRunParameters('plan trigger', flags)).to.deep.equal(expected);
    });
  }
});
