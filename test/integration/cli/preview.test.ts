// `kubectl planwarden plan preview` on the real control plane (issue 37): a changed REPLICAS
// previews one field of one Deployment; a plan with a new object previews it as created; a
// Delete task lists what exists; nothing in the cluster changes; a person who may not act as
// the plan's ServiceAccount is told which right is missing.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../controlplane/build.ts';
import { expect } from 'chai';
import type { OperatorVersion } from '../../../shared/api/schema.ts';
import type { Preview } from '../../../shared/plan/preview.ts';
import { kubectl, kubectlOk } from '../fixture.ts';
import { runPlugin as planwarden } from '../../support/plugin.ts';
import { json } from '../objects.ts';

const OV = 'web-1.0.0';
const VIEWER = 'preview-viewer';
const EDITOR = 'preview-editor';

function blueprint(ns: string): OperatorVersion {
  const step = (name: string, task: string) => ({ name: 'main', steps: [{ name, tasks: [task] }] });
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'OperatorVersion',
    metadata: { name: OV, namespace: ns },
    spec: {
      version: '1.0.0',
      parameters: [{ name: 'REPLICAS', default: '1', type: 'integer' }],
      templates: {
        'deploy.yaml':
          'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Name }}\nspec:\n  replicas: {{ .Params.REPLICAS }}\n  selector:\n    matchLabels:\n      app: {{ .Name }}\n' +
          '  template:\n    metadata:\n      labels:\n        app: {{ .Name }}\n    spec:\n      containers:\n        - name: web\n          image: registry.invalid/web:1\n',
        'svc.yaml':
          'apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Name }}\nspec:\n  selector:\n    app: {{ .Name }}\n  ports:\n    - port: 80\n',
        'old.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-old\n',
        'scratch.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-scratch\n',
      },
      tasks: [
        { name: 'app', kind: 'Apply', spec: { resources: ['deploy.yaml'] } },
        { name: 'svc', kind: 'Apply', spec: { resources: ['svc.yaml'] } },
        { name: 'prune', kind: 'Delete', spec: { resources: ['old.yaml'] } },
        { name: 'scratch', kind: 'Apply', spec: { resources: ['scratch.yaml'] } },
        { name: 'scratch-cleanup', kind: 'Delete', spec: { resources: ['scratch.yaml'] } },
      ],
      plans: {
        deploy: { phases: [step('app', 'app')] },
        update: { phases: [step('app', 'app')] },
        expose: { phases: [step('svc', 'svc')] },
        prune: { phases: [step('prune', 'prune')] },
        // As a backup runs a Job, then deletes it.
        scratch: {
          phases: [
            {
              name: 'main',
              steps: [
                { name: 'make', tasks: ['scratch'] },
                { name: 'cleanup', tasks: ['scratch-cleanup'] },
              ],
            },
          ],
        },
      },
    },
  };
}

describe('kubectl planwarden plan preview (real apiserver, webhook and controller)', function () {
  this.timeout(180_000);
  const ns = `preview-${randomBytes(3).toString('hex')}`;
  const versions = async () =>
    kubectlOk([
      '-n',
      ns,
      'get',
      'instance,deployment,configmap',
      '-o',
      'jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion} {end}',
    ]);

  before(async function () {
    await kubectlOk(['create', 'namespace', ns]);
    await kubectlOk(['-n', ns, 'create', 'rolebinding', 'viewer', '--clusterrole=view', `--user=${VIEWER}`]);
    await kubectlOk(['-n', ns, 'create', 'rolebinding', 'editor', '--clusterrole=edit', `--user=${EDITOR}`]);
    for (
      let i = 0;
      i < 120 && (await kubectl(['auth', 'can-i', 'get', 'instances.planwarden.dev', '-n', ns, `--as=${VIEWER}`])).stdout.trim() !== 'yes';
      i++
    )
      await new Promise((r) => setTimeout(r, 500));
    await kubectlOk(['apply', '-f', '-'], { input: json(blueprint(ns)) });
    const rights = await planwarden(['rbac', '--operator-version', OV, '-n', ns]);
    expect(rights.code, rights.stderr).to.equal(0);
    await kubectlOk(['apply', '-f', '-'], { input: rights.stdout });
    await kubectlOk(['apply', '-f', '-'], {
      input: json({
        apiVersion: 'planwarden.dev/v1alpha1',
        kind: 'Instance',
        metadata: { name: 'web', namespace: ns },
        spec: { operatorVersion: { name: OV }, parameters: { REPLICAS: '1' } },
      }),
    });
    await kubectlOk(['-n', ns, 'wait', 'instance/web', '--for=jsonpath={.status.planStatus.deploy.status}=COMPLETE', '--timeout=120s']);
    await kubectlOk(['-n', ns, 'create', 'configmap', 'web-old']);
  });

  after(async function () {
    await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']);
  });

  it('a changed REPLICAS previews ~ spec.replicas 1 → 3 of the Deployment and nothing else; nothing in the cluster changes', async function () {
    const before = await versions();
    const r = await planwarden(['plan', 'preview', '--instance', 'web', '-n', ns, '--set', 'REPLICAS=3', '-o', 'json', '--as', EDITOR]);
    expect(r.code, r.stderr).to.equal(0);
    const p = JSON.parse(r.stdout) as Preview;
    expect(p.plan).to.equal('update');
    expect(p.trigger).to.equal('change of REPLICAS');
    expect(p.verdict.allowed).to.equal(true);
    const objects = p.tasks.flatMap((t) => t.objects);
    expect(objects.map((o) => [o.ref, o.state])).to.deep.equal([[`Deployment ${ns}/web`, 'change']]);
    expect(objects[0]!.changes).to.deep.equal([{ path: 'spec.replicas', op: '~', from: 1, to: 3 }]);
    expect(p.counts).to.deep.equal({ create: 0, change: 1, delete: 0, unchanged: 0, unknown: 0 });
    expect(p.digest).to.match(/^sha256:[0-9a-f]{32}$/);
    expect(await versions()).to.equal(before);
    const tree = await planwarden(['plan', 'preview', '--instance', 'web', '-n', ns, '--set', 'REPLICAS=3', '--as', EDITOR]);
    if (process.env.PREVIEW_SHOW) console.log(tree.stdout);
    expect(tree.stdout).to.include('~ spec.replicas: 1 → 3');
    expect(tree.stdout).to.include('0 to create, 1 to change, 0 to delete, 0 unchanged');
  });

  it('the same values preview the Deployment unchanged', async function () {
    const r = await planwarden(['plan', 'preview', 'update', '--instance', 'web', '-n', ns, '-o', 'json']);
    expect(r.code, r.stderr).to.equal(0);
    expect((JSON.parse(r.stdout) as Preview).tasks.flatMap((t) => t.objects).map((o) => o.state)).to.deep.equal(['unchanged']);
  });

  it('a plan with a new object previews it as created (+); a Delete task lists what exists (-)', async function () {
    const expose = JSON.parse(
      (await planwarden(['plan', 'preview', 'expose', '--instance', 'web', '-n', ns, '-o', 'json'])).stdout,
    ) as Preview;
    expect(expose.tasks.flatMap((t) => t.objects).map((o) => [o.ref, o.state])).to.deep.equal([[`Service ${ns}/web`, 'create']]);
    const prune = JSON.parse(
      (await planwarden(['plan', 'preview', 'prune', '--instance', 'web', '-n', ns, '-o', 'json'])).stdout,
    ) as Preview;
    expect(prune.tasks.flatMap((t) => t.objects).map((o) => [o.ref, o.state])).to.deep.equal([[`ConfigMap ${ns}/web-old`, 'delete']]);
    await kubectlOk(['-n', ns, 'get', 'configmap', 'web-old']);
    await kubectl(['-n', ns, 'get', 'service', 'web'], {}).then((g) => expect(g.code, 'no Service was created').to.not.equal(0));
  });

  it('an object an earlier step creates and a later one deletes previews as created, then deleted', async function () {
    const r = await planwarden(['plan', 'preview', 'scratch', '--instance', 'web', '-n', ns, '-o', 'json']);
    expect(r.code, r.stderr).to.equal(0);
    const p = JSON.parse(r.stdout) as Preview;
    expect(p.tasks.flatMap((t) => t.objects).map((o) => [o.ref, o.state])).to.deep.equal([
      [`ConfigMap ${ns}/web-scratch`, 'create'],
      [`ConfigMap ${ns}/web-scratch`, 'delete'],
    ]);
    expect(p.counts).to.deep.equal({ create: 1, change: 0, delete: 1, unchanged: 0, unknown: 0 });
    const tree = await planwarden(['plan', 'preview', 'scratch', '--instance', 'web', '-n', ns]);
    expect(tree.stdout).to.include(
      `- ConfigMap ${ns}/web-scratch (template scratch.yaml): deleted: an earlier task of this plan applies it`,
    );
    await kubectl(['-n', ns, 'get', 'configmap', 'web-scratch']).then((g) => expect(g.code, 'nothing was created').to.not.equal(0));
  });

  it('a person who may not impersonate the plan’s ServiceAccount is told which right is missing (exit 1)', async function () {
    const r = await planwarden(['plan', 'preview', 'update', '--instance', 'web', '-n', ns, '--as', VIEWER]);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.include(`you may not impersonate ServiceAccount ${ns}/planwarden-plans`);
    expect(r.stdout).to.include('1 not previewable');
  });

  it('a trigger the webhook would refuse is said first', async function () {
    const r = await planwarden(['plan', 'preview', 'update', '--instance', 'web', '-n', ns, '-p', 'REPLICAS=2', '--as', EDITOR]);
    expect(r.code).to.equal(1);
    expect(r.stdout.split('\n')[1]).to.match(/^The trigger would be REFUSED: .*instance\.per-run-parameter-not-allowed/);
  });

  // What a preview costs (issue 37's note): the webapp example's update, and a plan of 100
  // objects. Figures are logged, not asserted; the request count is a property of the code.
  it('costs one read and one dry run per object, plus a fixed few (figures logged)', async function () {
    const objects = 100;
    const templates = Object.fromEntries(
      Array.from({ length: objects }, (_, i) => [
        `cm-${i}.yaml`,
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: many-${i}\ndata:\n  v: "{{ .Params.REPLICAS }}"\n`,
      ]),
    );
    const many = blueprint(ns);
    many.metadata.name = 'many-1.0.0';
    many.spec.templates = { ...many.spec.templates, ...templates };
    many.spec.tasks = [...(many.spec.tasks ?? []), { name: 'many', kind: 'Apply', spec: { resources: Object.keys(templates) } }];
    many.spec.plans = { ...many.spec.plans, fill: { phases: [{ name: 'main', steps: [{ name: 'fill', tasks: ['many'] }] }] } };
    await kubectlOk(['apply', '-f', '-'], { input: json(many) });
    const rights = await planwarden(['rbac', '--operator-version', 'many-1.0.0', '-n', ns]);
    await kubectlOk(['apply', '-f', '-'], { input: rights.stdout });
    await kubectlOk(['apply', '-f', '-'], {
      input: json({
        apiVersion: 'planwarden.dev/v1alpha1',
        kind: 'Instance',
        metadata: { name: 'many', namespace: ns },
        spec: { operatorVersion: { name: 'many-1.0.0' } },
      }),
    });
    await kubectlOk(['-n', ns, 'wait', 'instance/many', '--for=jsonpath={.status.planStatus.deploy.status}=COMPLETE', '--timeout=120s']);
    // The example as a user applies it (examples/webapp), in this namespace.
    const example = (f: string) =>
      readFileSync(join(PROJECT_ROOT, 'examples', 'webapp', f), 'utf8')
        .replaceAll('namespace: demo', `namespace: ${ns}`)
        .replaceAll(' demo', ` ${ns}`);
    await kubectlOk(['apply', '-f', '-'], { input: example('operatorversion.yaml') });
    await kubectlOk(['apply', '-f', '-'], { input: example('plan-rights.yaml') });
    await kubectlOk(['apply', '-f', '-'], { input: example('instance.yaml') });
    await kubectlOk(['-n', ns, 'wait', 'instance/shop', '--for=jsonpath={.status.planStatus.deploy.status}=COMPLETE', '--timeout=120s']);
    process.env.PLANWARDEN_API_STATS = '1';
    try {
      const stats = (stderr: string) => /(\d+) API requests \(([^)]*)\) in (\d+) ms/.exec(stderr);
      const one = await planwarden(['plan', 'preview', '--instance', 'shop', '-n', ns, '--set', 'REPLICAS=3', '-o', 'json']);
      expect(one.code, one.stderr).to.equal(0);
      const hundred = await planwarden(['plan', 'preview', 'fill', '--instance', 'many', '-n', ns, '-o', 'json']);
      expect(hundred.code, hundred.stderr).to.equal(0);
      expect((JSON.parse(hundred.stdout) as Preview).counts.create).to.equal(objects);
      const [s1, s100] = [stats(one.stderr), stats(hundred.stderr)];
      const webapp = JSON.parse(one.stdout) as Preview;
      console.log(
        `      (preview of examples/webapp --set REPLICAS=3 (${Object.values(webapp.counts).reduce((a, b) => a + b, 0)} objects): ${s1?.[1]} API requests (${s1?.[2]}), ${s1?.[3]} ms; of ${objects} objects: ${s100?.[1]} API requests (${s100?.[2]}), ${s100?.[3]} ms)`,
      );
      // Per object: a GET of the live object and a dry-run PATCH; discovery once per kind.
      expect(Number(s100?.[1])).to.be.at.most(2 * objects + 12);
    } finally {
      delete process.env.PLANWARDEN_API_STATS;
    }
  });
});
