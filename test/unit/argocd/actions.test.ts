// The Argo CD resource actions in manifests/argocd (resource_customizations/<group>/<kind>/
// actions/), run by the Lua interpreter Argo CD embeds (gopher-lua, through test/lua's
// lua-health): every case of every action_test.yaml — what discovery.lua offers, what each
// action returns or refuses with — in the argocd-cm sandbox and with all standard libraries.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../controlplane/build.ts';
import { luaHealth, MODES } from './lua.ts';

const CUSTOMIZATIONS = join(PROJECT_ROOT, 'manifests', 'argocd', 'resource_customizations');

interface OfferedAction {
  name: string;
  disabled?: boolean;
  iconClass?: string;
  displayName?: string;
  params?: { name: string }[];
}

interface ActionTests {
  discoveryTests: { inputPath: string; result: OfferedAction[] }[];
  actionTests: {
    action: string;
    inputPath: string;
    parameters?: Record<string, string>;
    expectedOutputPath?: string;
    expectedErrorMessage?: string;
  }[];
}

/** Every <group>/<kind>/actions directory, with its action_test.yaml and its action names. */
function actionSets(): { name: string; dir: string; tests: ActionTests; actions: string[] }[] {
  const sets = [];
  for (const group of readdirSync(CUSTOMIZATIONS).sort()) {
    for (const kind of readdirSync(join(CUSTOMIZATIONS, group)).sort()) {
      const dir = join(CUSTOMIZATIONS, group, kind, 'actions');
      if (!existsSync(join(dir, 'discovery.lua'))) continue;
      const tests = parse(readFileSync(join(dir, 'action_test.yaml'), 'utf8')) as ActionTests;
      const actions = readdirSync(dir)
        .filter((d) => statSync(join(dir, d)).isDirectory() && existsSync(join(dir, d, 'action.lua')))
        .sort();
      sets.push({ name: `${group}/${kind}`, dir, tests, actions });
    }
  }
  return sets;
}

let bin = '';

function lua(args: string[]) {
  const r = spawnSync(bin, args, { encoding: 'utf8', timeout: 20_000 });
  if (r.error) throw r.error;
  return r;
}

/** An offered action as Argo CD's ResourceAction reads it: absent fields are their zero values. */
const normalized = (a: OfferedAction) => ({
  name: a.name,
  disabled: a.disabled ?? false,
  iconClass: a.iconClass ?? '',
  displayName: a.displayName ?? '',
  params: a.params ?? [],
});
const byName = (list: OfferedAction[]) => list.map(normalized).sort((a, b) => a.name.localeCompare(b.name));

const sets = actionSets();

describe('Argo CD resource actions (manifests/argocd/resource_customizations/*/*/actions)', function () {
  before(function () {
    // The first build downloads gopher-lua from the Go module proxy; without Go this fails.
    this.timeout(600_000);
    bin = luaHealth();
  });

  it('finds the Instance actions: trigger and abort, each with cases, and no unused fixture', function () {
    expect(sets.map((s) => [s.name, s.actions])).to.deep.equal([['planwarden.dev/Instance', ['abort', 'trigger']]]);
    for (const set of sets) {
      const tested = new Set(set.tests.actionTests.map((t) => t.action));
      expect([...tested].sort(), `${set.name}: actions with cases`).to.deep.equal(set.actions);
      const used = new Set([
        ...set.tests.discoveryTests.map((t) => t.inputPath),
        ...set.tests.actionTests.flatMap((t) => [t.inputPath, ...(t.expectedOutputPath ? [t.expectedOutputPath] : [])]),
      ]);
      const fixtures = readdirSync(join(set.dir, 'testdata')).map((f) => `testdata/${f}`);
      expect(
        fixtures.filter((f) => !used.has(f)),
        `${set.name}: fixtures no case uses`,
      ).to.deep.equal([]);
    }
  });

  for (const set of sets) {
    describe(set.name, function () {
      for (const mode of MODES) {
        describe(mode.name, function () {
          for (const t of set.tests.discoveryTests) {
            it(`discovery of ${t.inputPath} offers ${t.result.map((a) => `${a.name}${a.disabled ? ' (disabled)' : ''}`).join(', ')}`, function () {
              const r = lua([...mode.args, '-discovery', join(set.dir, 'discovery.lua'), join(set.dir, t.inputPath)]);
              expect(r.status, r.stderr).to.equal(0);
              const offered = byName(JSON.parse(r.stdout) as OfferedAction[]);
              expect(offered).to.deep.equal(byName(t.result));
              // Argo CD runs an action by looking its script up by name: each offered one has one.
              for (const a of offered) expect(set.actions, `actions/${a.name}/action.lua`).to.include(a.name);
            });
          }
          for (const t of set.tests.actionTests) {
            const params = Object.entries(t.parameters ?? {});
            const title = `${t.action}${params.length ? ` ${params.map(([k, v]) => `${k}=${v}`).join(' ')}` : ''} on ${t.inputPath}`;
            it(
              t.expectedOutputPath ? `${title} returns ${t.expectedOutputPath}` : `${title} is refused: ${t.expectedErrorMessage ?? ''}`,
              function () {
                const r = lua([
                  ...mode.args,
                  '-action',
                  ...params.flatMap(([k, v]) => ['-param', `${k}=${v}`]),
                  join(set.dir, t.action, 'action.lua'),
                  join(set.dir, t.inputPath),
                ]);
                if (t.expectedOutputPath) {
                  expect(r.status, r.stderr).to.equal(0);
                  expect(JSON.parse(r.stdout)).to.deep.equal(parse(readFileSync(join(set.dir, t.expectedOutputPath), 'utf8')));
                } else {
                  expect(r.status, r.stdout).to.equal(1);
                  expect(r.stderr.trim()).to.equal(`lua-health: ${t.expectedErrorMessage ?? ''}`);
                }
              },
            );
          }
        });
      }
    });
  }

  describe('planwarden.dev/Instance: the trigger id', function () {
    const dir = join(CUSTOMIZATIONS, 'planwarden.dev', 'Instance', 'actions');
    it('is argocd-<plan>-g<generation>: new after any spec change, the same for a second click on an unchanged Instance', function () {
      const trigger = (input: string) => {
        const r = lua(['-action', '-param', 'plan=backup', join(dir, 'trigger', 'action.lua'), join(dir, 'testdata', input)]);
        expect(r.status, r.stderr).to.equal(0);
        return (JSON.parse(r.stdout) as { spec: { planExecution: { id: string } } }).spec.planExecution.id;
      };
      expect(trigger('complete.yaml')).to.equal('argocd-backup-g3');
      expect(trigger('complete.yaml')).to.equal(trigger('complete.yaml'));
      expect(trigger('in-progress.yaml')).to.equal('argocd-backup-g4');
    });
  });
});
