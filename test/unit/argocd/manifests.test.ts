// The Argo CD snippets in manifests/argocd: argocd-cm.yaml carries every health.lua of
// resource_customizations byte for byte under the key Argo CD looks up, and every actions/
// directory as the actions entry Argo CD reads (discovery.lua and one definition per
// action.lua, byte for byte); ignore-differences.yaml ignores exactly the injected caBundle
// of planwarden's two webhook configurations; ignore-plan-execution.yaml, the snippet
// docs/gitops.md shows, keeps the Instances' spec.planExecution out of diff and sync.
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { PROJECT_ROOT } from '../../controlplane/build.ts';

const ARGOCD = join(PROJECT_ROOT, 'manifests', 'argocd');
const CUSTOMIZATIONS = join(ARGOCD, 'resource_customizations');
const HEALTH_KEY_PREFIX = 'resource.customizations.health.';
const ACTIONS_KEY_PREFIX = 'resource.customizations.actions.';
const REGENERATE = 'run `sh manifests/argocd/render-argocd-cm.sh` after editing a health.lua or an action';

interface ConfigMap {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  data: Record<string, string>;
}

interface IgnoreDifference {
  group?: string;
  kind: string;
  name?: string;
  namespace?: string;
  jsonPointers?: string[];
  jqPathExpressions?: string[];
  managedFieldsManagers?: string[];
}

interface Application {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { ignoreDifferences: IgnoreDifference[]; syncPolicy?: { syncOptions?: string[] } };
}

/** Every health.lua, by the argocd-cm key Argo CD reads it from (group_kind). */
function healthScripts(): Map<string, string> {
  const scripts = new Map<string, string>();
  for (const group of readdirSync(CUSTOMIZATIONS).sort()) {
    for (const kind of readdirSync(join(CUSTOMIZATIONS, group)).sort()) {
      const file = join(CUSTOMIZATIONS, group, kind, 'health.lua');
      if (statSync(join(CUSTOMIZATIONS, group, kind)).isDirectory() && existsSync(file)) {
        scripts.set(`${HEALTH_KEY_PREFIX}${group}_${kind}`, readFileSync(file, 'utf8'));
      }
    }
  }
  return scripts;
}

/** Every actions/ directory, by the argocd-cm key Argo CD reads it from: its scripts by name. */
function actionScripts(): Map<string, { discovery: string; actions: Map<string, string> }> {
  const found = new Map<string, { discovery: string; actions: Map<string, string> }>();
  for (const group of readdirSync(CUSTOMIZATIONS).sort()) {
    for (const kind of readdirSync(join(CUSTOMIZATIONS, group)).sort()) {
      const dir = join(CUSTOMIZATIONS, group, kind, 'actions');
      if (!existsSync(join(dir, 'discovery.lua'))) continue;
      const actions = new Map<string, string>();
      for (const name of readdirSync(dir).sort()) {
        if (existsSync(join(dir, name, 'action.lua'))) actions.set(name, readFileSync(join(dir, name, 'action.lua'), 'utf8'));
      }
      found.set(`${ACTIONS_KEY_PREFIX}${group}_${kind}`, { discovery: readFileSync(join(dir, 'discovery.lua'), 'utf8'), actions });
    }
  }
  return found;
}

/** Fails at the first line where `embedded` differs from `file`. */
function expectSameText(what: string, embedded: string | undefined, file: string): void {
  expect(embedded, `${what} is missing; ${REGENERATE}`).to.be.a('string');
  if (embedded === file) return;
  const a = embedded!.split('\n');
  const b = file.split('\n');
  const line = a.findIndex((l, i) => l !== b[i]);
  expect.fail(`${what} differs from the file at line ${line + 1}: ${JSON.stringify(a[line])} vs ${JSON.stringify(b[line])}; ${REGENERATE}`);
}

describe('manifests/argocd', function () {
  describe('argocd-cm.yaml', function () {
    const cm = parse(readFileSync(join(ARGOCD, 'argocd-cm.yaml'), 'utf8')) as ConfigMap;
    const scripts = healthScripts();

    it('is the argocd-cm ConfigMap of an Argo CD installed in namespace argocd', function () {
      expect(cm.apiVersion).to.equal('v1');
      expect(cm.kind).to.equal('ConfigMap');
      expect(cm.metadata.name).to.equal('argocd-cm');
      expect(cm.metadata.namespace).to.equal('argocd');
      expect(cm.metadata.labels?.['app.kubernetes.io/part-of']).to.equal('argocd');
    });

    it('has one health key per health.lua, and no other', function () {
      expect(scripts.size).to.equal(3);
      const keys = Object.keys(cm.data)
        .filter((k) => k.startsWith(HEALTH_KEY_PREFIX))
        .sort();
      expect(keys, REGENERATE).to.deep.equal([...scripts.keys()].sort());
      expect(keys).to.deep.equal([
        'resource.customizations.health.planwarden.dev_FleetRollout',
        'resource.customizations.health.planwarden.dev_Instance',
        'resource.customizations.health.planwarden.dev_UpdatePlan',
      ]);
    });

    for (const [key, script] of healthScripts()) {
      it(`holds ${key} exactly as the health.lua file`, function () {
        // Byte for byte, so that the first differing line is easy to find when it fails.
        expectSameText(key, cm.data[key], script);
      });
    }

    it('has one actions key per actions/ directory, and no other', function () {
      const keys = Object.keys(cm.data)
        .filter((k) => k.startsWith(ACTIONS_KEY_PREFIX))
        .sort();
      expect(keys, REGENERATE).to.deep.equal([...actionScripts().keys()].sort());
      expect(keys).to.deep.equal(['resource.customizations.actions.planwarden.dev_Instance']);
    });

    for (const [key, scripts] of actionScripts()) {
      it(`holds ${key} as Argo CD reads it: discovery.lua and one definition per action.lua, exactly as the files`, function () {
        const entry = parse(cm.data[key] ?? '') as {
          'discovery.lua'?: string;
          definitions?: { name: string; 'action.lua': string }[];
        } | null;
        expect(entry, `${key} is missing; ${REGENERATE}`).to.be.an('object');
        expect(Object.keys(entry!).sort()).to.deep.equal(['definitions', 'discovery.lua']);
        expectSameText(`${key} discovery.lua`, entry!['discovery.lua'], scripts.discovery);
        expect(
          entry!.definitions!.map((d) => d.name),
          REGENERATE,
        ).to.deep.equal([...scripts.actions.keys()]);
        for (const d of entry!.definitions!) expectSameText(`${key} ${d.name}/action.lua`, d['action.lua'], scripts.actions.get(d.name)!);
      });
    }
  });

  describe('ignore-differences.yaml', function () {
    const app = parse(readFileSync(join(ARGOCD, 'ignore-differences.yaml'), 'utf8')) as Application;
    const CA_BUNDLE = '.webhooks[]?.clientConfig.caBundle';

    /** planwarden's webhook configurations, by kind, as the base installs them. */
    function webhookConfigurations(): Map<string, string> {
      const dir = join(PROJECT_ROOT, 'manifests', 'base', 'webhook');
      const found = new Map<string, string>();
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
        for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
          const obj = doc.toJS() as { kind?: string; metadata?: { name?: string } } | null;
          if (obj?.kind?.endsWith('WebhookConfiguration')) found.set(obj.kind, obj.metadata?.name ?? '');
        }
      }
      return found;
    }

    it('is an Argo CD Application fragment', function () {
      expect(app.apiVersion).to.equal('argoproj.io/v1alpha1');
      expect(app.kind).to.equal('Application');
    });

    it('ignores the caBundle of every webhook of both planwarden webhook configurations, and nothing else', function () {
      const configurations = webhookConfigurations();
      expect([...configurations.keys()].sort()).to.deep.equal(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
      expect(app.spec.ignoreDifferences).to.have.deep.members(
        [...configurations].map(([kind, name]) => ({
          group: 'admissionregistration.k8s.io',
          kind,
          name,
          jqPathExpressions: [CA_BUNDLE],
        })),
      );
    });

    it('keeps a sync from resetting the ignored caBundle (RespectIgnoreDifferences)', function () {
      expect(app.spec.syncPolicy?.syncOptions).to.include('RespectIgnoreDifferences=true');
    });
  });

  describe('ignore-plan-execution.yaml', function () {
    const text = readFileSync(join(ARGOCD, 'ignore-plan-execution.yaml'), 'utf8');
    const app = parse(text) as Application;

    it('ignores spec.planExecution of Instances, and nothing else, also on sync', function () {
      expect(app.apiVersion).to.equal('argoproj.io/v1alpha1');
      expect(app.kind).to.equal('Application');
      expect(app.spec.ignoreDifferences).to.deep.equal([
        { group: 'planwarden.dev', kind: 'Instance', jsonPointers: ['/spec/planExecution'] },
      ]);
      expect(app.spec.syncPolicy?.syncOptions).to.include('RespectIgnoreDifferences=true');
    });

    it('is the snippet docs/gitops.md shows', function () {
      const docs = readFileSync(join(PROJECT_ROOT, 'docs', 'gitops.md'), 'utf8');
      const snippet = text.slice(text.indexOf('spec:\n'));
      const blocks = [...docs.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/^ {2}/gm, '').replace(/^\s*\n/, ''));
      expect(
        blocks.some((b) => b.includes('/spec/planExecution') && b.replace(/\s+/g, ' ').trim() === snippet.replace(/\s+/g, ' ').trim()),
        'docs/gitops.md shows ignore-plan-execution.yaml from spec: on',
      ).to.equal(true);
    });
  });
});
