// Onboarding a team on the real control plane (docs/operations.md, "Onboarding a team"):
// the built-in roles admin, edit and view include planwarden's kinds through the
// clusterrole-aggregation controller of kube-controller-manager, and a fresh namespace
// holding nothing but what `kubectl planwarden rbac` printed runs the example's deploy to
// COMPLETE, its ServiceAccount allowed nothing beyond what the blueprint uses.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import type { OperatorVersion } from '../../../shared/api/schema.ts';
import { PROJECT_ROOT } from '../../controlplane/build.ts';
import { kubectl, kubectlOk } from '../fixture.ts';
import { runPlugin as planwarden } from '../../support/plugin.ts';
import { json } from '../objects.ts';

const EXAMPLE = join(PROJECT_ROOT, 'examples', 'webapp');
const OV = 'webapp-1.0.0';
const USERS = { edit: 'team-editor', view: 'team-viewer', admin: 'team-admin' } as const;

function exampleOv(namespace: string, name = OV): OperatorVersion {
  const ov = parse(readFileSync(join(EXAMPLE, 'operatorversion.yaml'), 'utf8')) as OperatorVersion;
  return { ...ov, metadata: { name, namespace } };
}

/** `kubectl auth can-i` as `user` in `ns`: true for "yes". */
async function canI(user: string, verb: string, resource: string, ns: string): Promise<boolean> {
  const r = await kubectl(['auth', 'can-i', verb, resource, '-n', ns, `--as=${user}`]);
  return r.stdout.trim() === 'yes';
}

describe('onboarding a team (built-in roles, kubectl planwarden rbac)', function () {
  this.timeout(180_000);
  // A fresh namespace: no plan rights but what `kubectl planwarden rbac` prints.
  const ns = `onboard-${randomBytes(3).toString('hex')}`;

  before(async function () {
    await kubectlOk(['create', 'namespace', ns]);
    for (const [role, user] of Object.entries(USERS)) {
      await kubectlOk(['-n', ns, 'create', 'rolebinding', `${role}-binding`, `--clusterrole=${role}`, `--user=${user}`]);
    }
    // The aggregation controller copies planwarden-edit's rules into edit on its own schedule.
    for (let i = 0; i < 120 && !(await canI(USERS.edit, 'create', 'instances.planwarden.dev', ns)); i++)
      await new Promise((r) => setTimeout(r, 500));
    for (let i = 0; i < 60 && !(await canI(USERS.admin, 'skip-pre-checks', 'instances.planwarden.dev', ns)); i++)
      await new Promise((r) => setTimeout(r, 500));
  });
  after(async function () {
    await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']);
  });

  describe('the built-in roles, as kubectl auth can-i answers through the aggregation controller', () => {
    const rows: [who: keyof typeof USERS, can: boolean, verb: string, resource: string, why: string][] = [
      ['edit', true, 'create', 'instances.planwarden.dev', 'a team creates its Instances'],
      ['edit', true, 'patch', 'instances.planwarden.dev', 'and triggers plans (a patch of spec.planExecution)'],
      ['edit', true, 'delete', 'instances.planwarden.dev', 'and deletes them'],
      ['edit', true, 'create', 'operatorversions.planwarden.dev', 'and brings its blueprints'],
      ['edit', true, 'patch', 'updateplans.planwarden.dev', 'and accepts an upgrade’s risks'],
      ['edit', false, 'update', 'instances.planwarden.dev/status', 'status is the controller’s'],
      ['edit', false, 'patch', 'updateplans.planwarden.dev/status', 'and the adapters’'],
      ['edit', false, 'create', 'updateinformers.planwarden.dev', 'cluster-scoped: a cluster admin’s'],
      ['view', true, 'list', 'instances.planwarden.dev', 'a viewer sees the Instances'],
      ['view', true, 'watch', 'updateplans.planwarden.dev', 'and the UpdatePlans'],
      ['view', true, 'get', 'operatorversions.planwarden.dev', 'and the blueprints'],
      ['view', false, 'patch', 'instances.planwarden.dev', 'but triggers nothing'],
      ['view', false, 'create', 'updateplans.planwarden.dev', 'and accepts no risk'],
      ['admin', true, 'create', 'instances.planwarden.dev', 'admin has what edit has'],
      ['admin', true, 'delete', 'operatorversions.planwarden.dev', 'blueprints included'],
      ['admin', false, 'update', 'instances.planwarden.dev/status', 'status is not a person’s, not even an admin’s'],
      [
        'admin',
        true,
        'skip-pre-checks',
        'instances.planwarden.dev',
        'an admin may opt an Instance out of an upgrade’s pre-checks (issue 34)',
      ],
      [
        'edit',
        false,
        'skip-pre-checks',
        'instances.planwarden.dev',
        'an editor may not: accepting risks stays apart from editing Instances',
      ],
      ['view', false, 'skip-pre-checks', 'instances.planwarden.dev', 'nor may a viewer'],
    ];
    for (const [who, can, verb, resource, why] of rows) {
      it(`${who} ${can ? 'can' : 'cannot'} ${verb} ${resource} (${why})`, async () => {
        const [res, sub] = resource.split('/');
        const args = ['auth', 'can-i', verb, res!, ...(sub ? [`--subresource=${sub}`] : []), '-n', ns, `--as=${USERS[who]}`];
        const r = await kubectl(args);
        expect(r.stdout.trim(), `kubectl ${args.join(' ')}`).to.equal(can ? 'yes' : 'no');
      });
    }
  });

  describe('kubectl planwarden rbac, then an edit user runs the blueprint', () => {
    const sa = `system:serviceaccount:${ns}:planwarden-plans`;

    before(async function () {
      // The team (edit) brings the blueprint; a cluster admin applies what rbac prints.
      await kubectlOk(['apply', '-f', '-', `--as=${USERS.edit}`], { input: json(exampleOv(ns)) });
    });

    it('prints what examples/webapp/plan-rights.yaml holds (discovery of the real API server agrees), and it applies', async () => {
      const r = await planwarden(['rbac', '--operator-version', OV, '-n', ns]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.equal('');
      expect(r.stdout).to.equal(
        readFileSync(join(EXAMPLE, 'plan-rights.yaml'), 'utf8').replaceAll(' demo', ` ${ns}`).replaceAll('demo/', `${ns}/`),
      );
      await kubectlOk(['apply', '-f', '-'], { input: r.stdout });
    });

    it('an edit user creates an Instance: its deploy runs to COMPLETE with nothing but the printed rights', async () => {
      const instance = parse(readFileSync(join(EXAMPLE, 'instance.yaml'), 'utf8')) as { metadata: { namespace?: string } };
      instance.metadata.namespace = ns;
      await kubectlOk(['apply', '-f', '-', `--as=${USERS.edit}`], { input: json(instance) });
      await kubectlOk(['-n', ns, 'wait', 'instance/shop', '--for=jsonpath={.status.planStatus.deploy.status}=COMPLETE', '--timeout=120s']);
      await kubectlOk(['-n', ns, 'get', 'deployment/shop-web', 'configmap/shop-config']);
    });

    it('an edit user triggers a plan (reconfigure), which runs to COMPLETE', async () => {
      const id = `reconfigure-${randomBytes(3).toString('hex')}`;
      await kubectlOk([
        '-n',
        ns,
        'patch',
        'instance',
        'shop',
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { planExecution: { planName: 'reconfigure', id } } }),
        `--as=${USERS.edit}`,
      ]);
      await kubectlOk([
        '-n',
        ns,
        'wait',
        'instance/shop',
        '--for=jsonpath={.status.planStatus.reconfigure.status}=COMPLETE',
        '--timeout=120s',
      ]);
    });

    it('a view user lists the Instances but cannot patch one', async () => {
      const list = await kubectlOk(['-n', ns, 'get', 'instances', '-o', 'name', `--as=${USERS.view}`]);
      expect(list.trim()).to.equal('instance.planwarden.dev/shop');
      const patch = await kubectl([
        '-n',
        ns,
        'patch',
        'instance',
        'shop',
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { planExecution: { planName: 'reconfigure', id: 'nope' } } }),
        `--as=${USERS.view}`,
      ]);
      expect(patch.code).to.not.equal(0);
      expect(patch.stderr).to.contain(`User "${USERS.view}" cannot patch resource "instances" in API group "planwarden.dev"`);
    });

    it('kubectl auth can-i --list: the plans’ ServiceAccount may do nothing beyond what the blueprint uses', async () => {
      const out = await kubectlOk(['auth', 'can-i', '--list', '-n', ns, `--as=${sa}`]);
      const granted = out
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(/\s{2,}/))
        .filter((cols) => cols.length >= 2 && cols[0] && !cols[0].startsWith('['))
        // What every authenticated user gets (system:basic-user, system:discovery …): not the Role's.
        .filter(([resource]) => !/^self(subject(accessreviews|rulesreviews|reviews))\./.test(resource!))
        .map(([resource, , , verbs]) => `${resource} ${verbs ?? ''}`.trim())
        .sort();
      expect(granted).to.deep.equal([
        'configmaps [get create patch delete]',
        'deployments.apps [get create patch delete]',
        'instances.planwarden.dev/finalizers [update]',
      ]);
    });
  });

  describe('kubectl planwarden rbac: bad input', () => {
    before(async function () {
      const ov = exampleOv(ns, 'crd-1.0.0');
      ov.spec.templates = {
        ...ov.spec.templates,
        'db.yaml': 'apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: "{{ .Name }}-db"\n',
      };
      ov.spec.tasks = [...(ov.spec.tasks ?? []), { name: 'db', kind: 'Apply', spec: { resources: ['db.yaml'] } }];
      const deployPhases = ov.spec.plans?.['deploy']?.phases ?? [];
      ov.spec.plans = { ...ov.spec.plans, deploy: { phases: [...deployPhases, { name: 'db', steps: [{ name: 'db', tasks: ['db'] }] }] } };
      await kubectlOk(['apply', '-f', '-'], { input: json(ov) });
    });

    it('an OperatorVersion that does not exist: a clear error, exit 1', async () => {
      const r = await planwarden(['rbac', '--operator-version', 'nope-1.0.0', '-n', ns]);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.equal('');
      expect(r.stderr).to.contain(`error: OperatorVersion "nope-1.0.0" not found in namespace "${ns}"`);
    });

    it('a kind the API server does not serve: listed as "unknown kind, not granted", exit 0 with a warning', async () => {
      const r = await planwarden(['rbac', '--operator-version', 'crd-1.0.0', '-n', ns]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.contain('Warning: unknown kind, not granted: Database (example.com/v1) in template db.yaml');
      expect(r.stdout).to.contain('# WARNING: unknown kind, not granted: Database');
      expect(r.stdout).to.not.contain('databases');
    });

    it('… and exit 1 with --strict', async () => {
      const r = await planwarden(['rbac', '--operator-version', 'crd-1.0.0', '-n', ns, '--strict']);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain('unknown kind, not granted: Database');
    });

    it("-o json prints a List of the ServiceAccount, the Role and the RoleBinding, then the controller's grant; --plans limits it", async () => {
      const r = await planwarden([
        'rbac',
        '--operator-version',
        OV,
        '-n',
        ns,
        '-o',
        'json',
        '--plans',
        'deploy',
        '--service-account',
        'deployer',
      ]);
      expect(r.code, r.stderr).to.equal(0);
      const list = JSON.parse(r.stdout) as {
        kind: string;
        items: { kind: string; metadata: { name: string }; rules?: { resources: string[]; verbs: string[] }[] }[];
      };
      expect(list.kind).to.equal('List');
      expect(list.items.map((i) => `${i.kind} ${i.metadata.name}`)).to.deep.equal([
        'ServiceAccount deployer',
        `Role deployer-${OV}`,
        `RoleBinding deployer-${OV}`,
        'Role planwarden-controller-as-deployer',
        'RoleBinding planwarden-controller-as-deployer',
      ]);
      expect(list.items[1]!.rules!.flatMap((x) => x.verbs)).to.not.include('delete');
    });
  });
});
