// The Argo CD snippets in manifests/argocd: argocd-cm.yaml carries every health.lua of
// resource_customizations byte for byte under the key Argo CD looks up, and
// ignore-differences.yaml ignores exactly the injected caBundle of planwarden's two
// webhook configurations.
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { PROJECT_ROOT } from '../../controlplane/build.ts';

const ARGOCD = join(PROJECT_ROOT, 'manifests', 'argocd');
const CUSTOMIZATIONS = join(ARGOCD, 'resource_customizations');
const HEALTH_KEY_PREFIX = 'resource.customizations.health.';
const REGENERATE = 'run `sh manifests/argocd/render-argocd-cm.sh` after editing a health.lua';

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
      expect(scripts.size).to.equal(2);
      const keys = Object.keys(cm.data).filter((k) => k.startsWith(HEALTH_KEY_PREFIX)).sort();
      expect(keys, REGENERATE).to.deep.equal([...scripts.keys()].sort());
      expect(keys).to.deep.equal([
        'resource.customizations.health.planwarden.dev_Instance',
        'resource.customizations.health.planwarden.dev_UpdatePlan',
      ]);
    });

    for (const [key, script] of healthScripts()) {
      it(`holds ${key} exactly as the health.lua file`, function () {
        const embedded = cm.data[key];
        expect(embedded, `${key} is missing; ${REGENERATE}`).to.be.a('string');
        // Byte for byte, so that the first differing line is easy to find when it fails.
        if (embedded !== script) {
          const a = embedded!.split('\n');
          const b = script.split('\n');
          const line = a.findIndex((l, i) => l !== b[i]);
          expect.fail(
            `${key} differs from the file at line ${line + 1}: ${JSON.stringify(a[line])} vs ${JSON.stringify(b[line])}; ${REGENERATE}`,
          );
        }
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
});
