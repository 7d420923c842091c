// Shell completion: what `__complete` offers for each position of a command line (command
// words, each verb's flags, flag values, names from the cluster with the line's connection
// flags), the scripts `completion bash|zsh` print (valid shell, every verb, working in bash),
// and bin/kubectl_complete-planwarden, which kubectl (>= 1.26) runs for `kubectl planwarden`.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planVerbSpecs } from '../../../cli/commands/plan.ts';
import { scheduleVerbSpecs } from '../../../cli/commands/schedule.ts';
import { fleetVerbSpecs } from '../../../cli/commands/fleet.ts';
import { policyVerbSpecs } from '../../../cli/commands/approve.ts';
import { rbacVerbSpecs } from '../../../cli/commands/rbac.ts';
import { updateVerbSpecs } from '../../../cli/commands/update.ts';
import { packageVerbSpecs } from '../../../cli/commands/package.ts';
import { renderVerbSpecs } from '../../../cli/commands/render.ts';
import { installVerbSpecs, upgradeVerbSpecs } from '../../../cli/commands/install.ts';
import { complete, completionScript, DIRECTIVE, type CommandTree, type LookupScope, type NameKind } from '../../../cli/completion.ts';
import { EXIT, memoryIO } from '../../../cli/io.ts';
import { run } from '../../../cli/run.ts';
import { PROJECT_ROOT } from '../../controlplane/build.ts';

const TREE: CommandTree = {
  plan: planVerbSpecs,
  update: updateVerbSpecs,
  schedule: scheduleVerbSpecs,
  fleet: fleetVerbSpecs,
  policy: policyVerbSpecs,
  rbac: rbacVerbSpecs,
  package: packageVerbSpecs,
  render: renderVerbSpecs,
  install: installVerbSpecs,
  upgrade: upgradeVerbSpecs,
};
const VERBS = [
  'plan trigger',
  'plan status',
  'plan history',
  'plan abort',
  'plan approve',
  'plan reject',
  'plan pending',
  'policy list',
  'update pre-checks',
  'schedule list',
  'fleet status',
  'fleet pause',
  'fleet resume',
  'package build',
  'package verify',
  'completion bash',
  'completion zsh',
];

/** A cluster with two Instances in shop (web has plans), one in prod; records what was asked. */
function fakeCluster() {
  const asked: [NameKind, LookupScope][] = [];
  const lookup = (kind: NameKind, scope: LookupScope): string[] => {
    asked.push([kind, scope]);
    if (kind === 'instances') return scope.namespace === 'prod' ? ['kafka'] : ['web', 'worker'];
    if (kind === 'plans') return scope.instance === 'web' ? ['backup', 'deploy', 'restore'] : [];
    if (kind === 'operatorversions') return ['app-1.0.0', 'app-1.1.0'];
    if (kind === 'namespaces') return ['default', 'prod', 'shop'];
    return ['kind', 'lab'];
  };
  return { asked, lookup };
}

function completeLine(line: string, toComplete: string) {
  const cluster = fakeCluster();
  const words = line === '' ? [] : line.split(' ');
  return { ...complete(TREE, words, toComplete, cluster.lookup), asked: cluster.asked };
}

describe('cli completion: what __complete offers', () => {
  const rows: [string, string, string, string[]][] = [
    [
      'the groups first',
      '',
      '',
      ['plan', 'update', 'schedule', 'fleet', 'policy', 'rbac', 'package', 'render', 'install', 'upgrade', 'completion'],
    ],
    ['no verb after rbac (a command of one word)', 'rbac', '', []],
    [
      'the flags of rbac',
      'rbac',
      '--',
      [
        '--operator-version',
        '--service-account',
        '--plans',
        '--output',
        '--strict',
        '--controller-service-account',
        '--secret',
        '--instance',
        '--kubeconfig',
        '--context',
        '--namespace',
        '--as',
        '--as-group',
        '--help',
      ],
    ],
    ['OperatorVersions after rbac --operator-version', 'rbac --operator-version', 'app-1.0', ['app-1.0.0']],
    ['output formats after rbac -o', 'rbac --operator-version app-1.0.0 -o', '', ['json', 'yaml']],
    ['a group by its prefix', '', 'pl', ['plan']],
    ['the verbs of plan', 'plan', '', ['trigger', 'status', 'history', 'abort', 'preview', 'approve', 'reject', 'pending']],
    ['the verbs of update', 'update', '', ['pre-checks']],
    ['the shells of completion', 'completion', '', ['bash', 'zsh']],
    ['the verbs after global flags', '-n shop --context kind plan', 'st', ['status']],
    ['the global flags before a verb', '', '--', ['--kubeconfig', '--context', '--namespace', '--as', '--as-group', '--help']],
    [
      "the flags of plan status, its own and kubectl's",
      'plan status',
      '--',
      [
        '--instance',
        '--plan',
        '--wait',
        '--timeout',
        '--output',
        '--color',
        '--kubeconfig',
        '--context',
        '--namespace',
        '--as',
        '--as-group',
        '--help',
      ],
    ],
    ['the flags of update pre-checks by prefix', 'update pre-checks', '--acc', ['--accept', '--accept-all']],
    ['output formats after -o', 'plan status --instance web -o', '', ['json', 'yaml']],
    ['colors after --color=', 'plan history', '--color=a', ['--color=auto', '--color=always']],
    ['Instances after --instance', 'plan status --instance', '', ['web', 'worker']],
    ['Instances of the namespace given before the command', '-n prod plan abort --instance', '', ['kafka']],
    ['Instances of the namespace given as -nX', 'plan abort -nprod --instance', '', ['kafka']],
    ['Instances of the namespace given as --namespace=x after', 'plan status --namespace=prod --instance', 'k', ['kafka']],
    ['the plans of the Instance for plan trigger', 'plan trigger --instance web', '', ['backup', 'deploy', 'restore']],
    ['the plans of the Instance after --plan, by prefix', 'plan status --instance web --plan', 're', ['restore']],
    ['no plans before the Instance is known', 'plan trigger', '', []],
    ['OperatorVersions after --target', 'update pre-checks --target', 'app-1.1', ['app-1.1.0']],
    ['namespaces after -n', 'plan status -n', 's', ['shop']],
    ['contexts after --context', '--context', '', ['kind', 'lab']],
    ['nothing after the plan name of trigger', 'plan trigger backup --instance web', '', []],
    ['nothing for --timeout', 'plan trigger backup --timeout', '', []],
  ];
  for (const [sentence, line, toComplete, expected] of rows) {
    it(`offers ${sentence}: "${line} ${toComplete}"`, () => {
      const got = completeLine(line, toComplete);
      expect(got.candidates).to.deep.equal(expected);
      expect(got.directive).to.equal(DIRECTIVE.noFileComp);
    });
  }

  it("passes the line's --kubeconfig, --context and namespace to the lookup", () => {
    const got = completeLine('--kubeconfig /k plan status --context=lab -n shop --instance', '');
    expect(got.asked).to.deep.equal([['instances', { kubeconfig: '/k', context: 'lab', namespace: 'shop', instance: undefined }]]);
  });

  it('lets the shell complete file names for --kubeconfig', () => {
    const got = completeLine('plan status --kubeconfig', '');
    expect(got).to.deep.include({ candidates: [], directive: DIRECTIVE.default });
  });

  it("answers in cobra's format through the hidden verb: candidates, then :directive", async () => {
    const io = memoryIO();
    expect(await run(['__complete', 'plan', 'status', '--o'], io)).to.equal(EXIT.ok);
    expect(io.out()).to.equal('--output\n:4\n');
    const none = memoryIO();
    await run(['__complete', 'plan', 'trigger', 'backup', '--timeout', ''], none);
    expect(none.out()).to.equal(':4\n');
  });
});

describe('cli completion: the scripts', () => {
  let work = '';
  before(() => {
    work = mkdtempSync(join(tmpdir(), 'planwarden-completion-'));
  });
  after(() => {
    rmSync(work, { recursive: true, force: true });
  });

  it('`completion bash` and `completion zsh` print the scripts; another shell is a usage error', async () => {
    for (const shell of ['bash', 'zsh'] as const) {
      const io = memoryIO();
      expect(await run(['completion', shell], io)).to.equal(EXIT.ok);
      expect(io.out()).to.equal(completionScript(TREE, shell));
    }
    const io = memoryIO();
    expect(await run(['completion', 'fish'], io)).to.equal(EXIT.usage);
    expect(io.err()).to.contain('unknown command "completion fish" (known: bash, zsh)');
  });

  for (const shell of ['bash', 'zsh'] as const) {
    it(`the ${shell} script mentions every verb and completes the command kubectl-planwarden`, () => {
      const script = completionScript(TREE, shell);
      for (const verb of VERBS) {
        const [group, word] = verb.split(' ');
        expect(script, verb).to.match(new RegExp(`^\\s+${group}\\)[^\\n]*\\b${word}\\b`, 'm'));
      }
      expect(script).to.contain('kubectl-planwarden __complete');
    });
  }

  it('the bash script is valid bash (bash -n)', () => {
    const file = join(work, 'planwarden.bash');
    writeFileSync(file, completionScript(TREE, 'bash'));
    const r = spawnSync('bash', ['-n', file], { encoding: 'utf8' });
    expect(r.status, r.stderr).to.equal(0);
  });

  it('the zsh script is valid zsh (zsh -n), where zsh is installed', function () {
    if (spawnSync('zsh', ['--version']).error) this.skip();
    const file = join(work, '_kubectl-planwarden');
    writeFileSync(file, completionScript(TREE, 'zsh'));
    const r = spawnSync('zsh', ['-n', file], { encoding: 'utf8' });
    expect(r.status, r.stderr).to.equal(0);
  });

  /** COMPREPLY of the bash script for `kubectl-planwarden WORDS…` (cursor on the last word). */
  function bashComplete(words: string[]): string[] {
    const file = join(work, 'planwarden.bash');
    writeFileSync(file, completionScript(TREE, 'bash'));
    const quoted = ['kubectl-planwarden', ...words].map((w) => `'${w}'`).join(' ');
    const r = spawnSync(
      'bash',
      [
        '-c',
        `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length}; _kubectl_planwarden; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { encoding: 'utf8', timeout: 30_000, env: { ...process.env, PATH: `${join(PROJECT_ROOT, 'bin')}:${process.env.PATH ?? ''}` } },
    );
    expect(r.status, r.stderr).to.equal(0);
    return r.stdout.split('\n').filter(Boolean);
  }

  it('in bash, completes the command words without the plugin, and flags through it', function () {
    this.timeout(30_000);
    expect(bashComplete(['p'])).to.deep.equal(['plan', 'policy', 'package']);
    expect(bashComplete(['plan', ''])).to.deep.equal(['trigger', 'status', 'history', 'abort', 'preview', 'approve', 'reject', 'pending']);
    expect(bashComplete(['-n', 'shop', 'plan', 'status', '--ins'])).to.deep.equal(['--instance']);
    expect(bashComplete(['plan', 'status', '-o', ''])).to.deep.equal(['json', 'yaml']);
  });

  it('in zsh (where installed), offers the command words itself and asks the plugin for flags, values and files', function () {
    if (spawnSync('zsh', ['--version']).error) this.skip();
    this.timeout(30_000);
    const file = join(work, '_kubectl-planwarden');
    writeFileSync(file, completionScript(TREE, 'zsh'));
    // compadd and _files exist only inside zsh's completion system: stand-ins print what they get.
    const call = (words: string[]) =>
      `words=(kubectl-planwarden ${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length + 1}; PREFIX='${words.at(-1)}'; _kubectl-planwarden`;
    const script = [
      'compdef() { :; }',
      'compadd() { shift; print -r -- "$*"; }',
      '_files() { print FILES; }',
      `source '${file}'`,
      call(['']),
      call(['plan', 'st']),
      call(['-n', 'shop', 'plan', 'status', '--in']),
      call(['plan', 'status', '-o', '']),
      call(['plan', 'status', '--kubeconfig', '']),
    ].join('\n');
    const r = spawnSync('zsh', ['-f', '-c', script], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, PATH: `${join(PROJECT_ROOT, 'bin')}:${process.env.PATH ?? ''}` },
    });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout.split('\n').filter(Boolean)).to.deep.equal([
      'plan update schedule completion',
      'trigger status history abort',
      '--instance',
      'json yaml',
      'FILES',
    ]);
  });

  it('bin/kubectl_complete-planwarden is an executable sh script that asks the plugin', () => {
    const file = join(PROJECT_ROOT, 'bin', 'kubectl_complete-planwarden');
    accessSync(file, constants.X_OK);
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n')[0]).to.equal('#!/bin/sh');
    expect(text).to.contain('exec kubectl planwarden __complete "$@"');
    expect(spawnSync('sh', ['-n', file]).status).to.equal(0);
  });

  it('bin/kubectl-planwarden is the plugin, executable, with a node shebang', () => {
    const file = join(PROJECT_ROOT, 'bin', 'kubectl-planwarden');
    accessSync(file, constants.X_OK);
    expect(readFileSync(file, 'utf8').split('\n')[0]).to.equal('#!/usr/bin/env node');
  });
});
