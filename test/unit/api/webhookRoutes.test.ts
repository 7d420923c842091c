// The route table is the one source of the webhook's paths and of its configurations: the
// handlers serve exactly its paths, and the committed manifests and chart template are what
// scripts/gen-webhooks.ts renders from it (CI runs `gen-webhooks --check` too).
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { ROUTES, WEBHOOK_POLICY, WEBHOOK_ROUTES } from '../../../shared/api/webhookRoutes.ts';
import { buildHandlers } from '../../../webhook/handlers.ts';
import { CHART_FILE, MUTATING_FILE, renderWebhookFiles, VALIDATING_FILE, webhookDrift } from '../../../scripts/gen-webhooks.ts';
import { memoryLookups } from '../../support/memoryLookups.ts';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface Webhook {
  name: string;
  clientConfig: { service: { path: string } };
  rules: { resources: string[]; operations: string[]; scope: string }[];
  failurePolicy: string;
  timeoutSeconds: number;
  sideEffects: string;
}

const webhooksIn = (text: string): Webhook[] => parseAllDocuments(text).flatMap((d) => (d.toJS() as { webhooks: Webhook[] }).webhooks);

describe('the webhook route table', () => {
  it('names each path, webhook and route key once', () => {
    for (const field of ['path', 'name', 'key'] as const) {
      const values = WEBHOOK_ROUTES.map((r) => r[field]);
      expect(new Set(values).size, field).to.equal(values.length);
    }
    expect(Object.values(ROUTES)).to.deep.equal(WEBHOOK_ROUTES.map((r) => r.path));
  });

  it('the webhook serves exactly the paths of the table, each for the kind the table gives', async () => {
    const built = await buildHandlers({ kubeConfig: new KubeConfig(), lookups: memoryLookups() });
    await built.stop();
    const routes = built.routes;
    expect(Object.keys(routes).sort()).to.deep.equal(WEBHOOK_ROUTES.map((r) => r.path).sort());
    for (const r of WEBHOOK_ROUTES) expect(routes[r.path]!.kinds, r.path).to.deep.equal([r.kind]);
  });

  it('the committed manifests and chart template are what scripts/gen-webhooks.ts renders (run it after changing the table)', () => {
    expect(webhookDrift(REPO_ROOT)).to.deep.equal([]);
  });

  it('the manifests register every route of the table at its path, for its resource and operations, with the policy', () => {
    const files = renderWebhookFiles();
    const rendered = [...webhooksIn(files.get(VALIDATING_FILE)!), ...webhooksIn(files.get(MUTATING_FILE)!)];
    expect(rendered.map((w) => w.name)).to.deep.equal(WEBHOOK_ROUTES.map((r) => r.name));
    for (const r of WEBHOOK_ROUTES) {
      const w = rendered.find((x) => x.name === r.name)!;
      expect(w.clientConfig.service.path, r.name).to.equal(r.path);
      expect(w.rules, r.name).to.deep.equal([
        {
          apiGroups: ['planwarden.dev'],
          apiVersions: ['v1alpha1'],
          resources: [r.resource],
          operations: [...r.operations],
          scope: r.scope,
        },
      ]);
      expect([w.failurePolicy, w.timeoutSeconds, w.sideEffects], r.name).to.deep.equal([
        WEBHOOK_POLICY.failurePolicy,
        WEBHOOK_POLICY.timeoutSeconds,
        WEBHOOK_POLICY.sideEffects,
      ]);
    }
  });

  it('--check finds a hand edit of a generated file', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'pw-gen-webhooks-'));
    try {
      for (const rel of [VALIDATING_FILE, MUTATING_FILE, CHART_FILE]) cpSync(path.join(REPO_ROOT, rel), path.join(root, rel));
      expect(webhookDrift(root)).to.deep.equal([]);
      const file = path.join(root, VALIDATING_FILE);
      writeFileSync(file, readFileSync(file, 'utf8').replace('timeoutSeconds: 5', 'timeoutSeconds: 10'));
      const drift = webhookDrift(root);
      expect(drift).to.have.length(1);
      expect(drift[0]).to.match(/^manifests\/base\/webhook\/validating-webhook-configuration\.yaml: differs\n/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
