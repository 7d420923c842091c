// RBAC against the real control plane: the controller's and the webhook's ServiceAccounts
// can do what they need and nothing else, as `kubectl auth can-i --as=<ServiceAccount>`
// answers it (the RBAC authorizer of kube-apiserver, with the ClusterRoles, Roles and
// bindings of manifests/base/rbac installed by the stack).
//
// The controller writes nothing that plans create: every request of a plan is made as a
// ServiceAccount of the Instance's namespace (impersonation), so its own role holds only
// `get` on serviceaccounts, plus list/watch of the workload kinds it watches to wake their
// Instance; `impersonate` is granted by each namespace that runs plans, for its plan
// ServiceAccounts by name (what `kubectl planwarden rbac` prints). The single-tenant opt-in (manifests/overlays/
// single-tenant, planwarden-controller-apply) is not installed by default.
import { expect } from 'chai';
import { kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { controllerGrantObjects } from '../../../shared/plan/controllerGrant.ts';

const CONTROLLER = 'system:serviceaccount:planwarden-system:planwarden-controller';
const WEBHOOK = 'system:serviceaccount:planwarden-system:planwarden-webhook';
const SA = { controller: CONTROLLER, webhook: WEBHOOK };

interface Row {
  who: keyof typeof SA;
  can: boolean;
  verb: string;
  /** resource[.group][/subresource] */
  resource: string;
  /** A namespace, or undefined for cluster-wide (all namespaces / cluster-scoped). */
  ns?: string;
  why: string;
  /** One object, for grants limited by resourceNames. */
  name?: string;
}

const row = (who: Row['who'], can: boolean, verb: string, resource: string, ns: string | undefined, why: string): Row => ({
  who,
  can,
  verb,
  resource,
  ns,
  why,
});
/** A row about one named object (rules with resourceNames). */
const named = (who: Row['who'], can: boolean, verb: string, resource: string, name: string, ns: string | undefined, why: string): Row => ({
  ...row(who, can, verb, resource, ns, why),
  name,
});

const ROWS: Row[] = [
  // --- the controller ---
  row('controller', true, 'watch', 'instances.planwarden.dev', undefined, 'its informers watch Instances in every namespace'),
  row('controller', true, 'list', 'operatorversions.planwarden.dev', undefined, 'it reads blueprints'),
  row('controller', true, 'watch', 'updateplans.planwarden.dev', undefined, 'it reconciles UpdatePlans'),
  row('controller', true, 'list', 'updateinformers.planwarden.dev', undefined, 'it queries informers'),
  row('controller', true, 'update', 'instances.planwarden.dev/status', 'default', 'it writes plan status through the status subresource'),
  row('controller', true, 'update', 'updateplans.planwarden.dev/status', 'default', 'it writes UpdatePlan insights'),
  row(
    'controller',
    false,
    'patch',
    'instances.planwarden.dev/status',
    'default',
    'it writes status only by PUT with the resourceVersion it sealed the write against',
  ),
  row('controller', false, 'patch', 'updateplans.planwarden.dev/status', 'default', 'status is written by PUT only'),
  row('controller', true, 'update', 'instances.planwarden.dev', 'default', 'it keeps the cleanup finalizer in metadata'),
  row('controller', true, 'update', 'instances.planwarden.dev/finalizers', 'default', 'owner references with blockOwnerDeletion need it'),
  row('controller', false, 'create', 'instances.planwarden.dev', 'default', 'people create Instances, not the controller'),
  row('controller', false, 'delete', 'instances.planwarden.dev', 'default', 'deleting an Instance is a person’s decision'),
  row('controller', false, 'update', 'operatorversions.planwarden.dev', 'default', 'blueprints are read-only to it'),
  row('controller', false, 'delete', 'operatorversions.planwarden.dev', 'default', 'blueprints are read-only to it'),
  row('controller', false, 'create', 'updateplans.planwarden.dev', 'default', 'UpdatePlans are created by people'),
  row('controller', true, 'create', 'events', 'default', 'it records plan progress as Events'),
  row('controller', true, 'create', 'events.events.k8s.io', 'default', 'either Events API'),
  row('controller', false, 'delete', 'events', 'default', 'it never deletes Events'),
  row('controller', true, 'list', 'nodes', undefined, 'step targets may be discovered by node labels'),
  row('controller', true, 'get', 'nodes', undefined, 'a step target must be an existing Node (MissingSignalNode)'),
  row('controller', false, 'update', 'nodes', undefined, 'nodes are only read'),
  row('controller', false, 'delete', 'namespaces', undefined, 'it never deletes namespaces'),
  row('controller', false, 'create', 'namespaces', undefined, 'nor creates them'),
  row('controller', true, 'update', 'leases.coordination.k8s.io', 'planwarden-system', 'leader election'),
  row(
    'controller',
    true,
    'delete',
    'leases.coordination.k8s.io',
    'planwarden-system',
    'it deletes reservation Leases earlier versions left',
  ),
  row('controller', false, 'create', 'leases.coordination.k8s.io', 'default', 'Leases only in planwarden-system'),
  row('controller', false, 'update', 'leases.coordination.k8s.io', 'kube-system', 'it cannot touch other components’ leader Leases'),
  row(
    'controller',
    false,
    'impersonate',
    'serviceaccounts',
    'default',
    'plans act as a ServiceAccount of their Instance’s namespace only where that namespace granted it',
  ),
  named(
    'controller',
    false,
    'impersonate',
    'serviceaccounts',
    'namespace-controller',
    'kube-system',
    'its token cannot become a kube-system ServiceAccount',
  ),
  named(
    'controller',
    false,
    'impersonate',
    'serviceaccounts',
    'planwarden-plans',
    'kube-system',
    'nor one named like a plan ServiceAccount there',
  ),
  row('controller', false, 'impersonate', 'serviceaccounts', undefined, 'no impersonation cluster-wide'),
  row('controller', true, 'get', 'serviceaccounts', 'default', 'it checks that the plans’ ServiceAccount exists'),
  row('controller', false, 'create', 'deployments.apps', 'default', 'Apply tasks impersonate: the controller itself writes no workload'),
  row('controller', false, 'delete', 'configmaps', 'default', 'Delete tasks impersonate too'),
  row('controller', false, 'patch', 'configmaps', 'default', 'no ConfigMap writes of its own (the confused deputy of issue 10)'),
  row('controller', false, 'get', 'secrets', undefined, 'no Secrets anywhere'),
  row('controller', true, 'watch', 'deployments.apps', undefined, 'it watches what plans applied, to wake their Instance'),
  row('controller', false, 'list', 'pods', 'default', 'health is judged from what the apply returned'),
  row('controller', false, 'create', 'pods', 'default', 'pods are not written'),
  row('controller', false, 'create', 'clusterroles.rbac.authorization.k8s.io', undefined, 'it cannot grant itself more'),
  row('controller', false, 'create', 'rolebindings.rbac.authorization.k8s.io', 'default', 'it cannot bind roles'),
  row('controller', false, 'impersonate', 'users', undefined, 'it cannot act as a person'),
  row('controller', false, 'impersonate', 'groups', undefined, 'nor as a group (system:masters)'),
  row(
    'controller',
    false,
    'patch',
    'validatingwebhookconfigurations.admissionregistration.k8s.io',
    undefined,
    'it cannot switch the guard off',
  ),
  row('controller', false, 'create', 'customresourcedefinitions.apiextensions.k8s.io', undefined, 'CRDs are installed, not created by it'),
  row('controller', false, 'create', 'serviceaccounts/token', 'planwarden-system', 'it cannot mint tokens'),
  // self-managed certificates (--cert-mode=self-signed; manifests/overlays/self-signed/certificate-rotation.yaml)
  named('controller', true, 'get', 'secrets', 'planwarden-webhook-tls', 'planwarden-system', 'it reads the webhook’s certificate Secret'),
  named('controller', true, 'update', 'secrets', 'planwarden-webhook-tls', 'planwarden-system', 'it renews the certificate in that Secret'),
  named('controller', false, 'delete', 'secrets', 'planwarden-webhook-tls', 'planwarden-system', 'it never deletes it'),
  named('controller', false, 'get', 'secrets', 'other', 'planwarden-system', 'no other Secret of its namespace'),
  named('controller', false, 'get', 'secrets', 'planwarden-webhook-tls', 'default', 'nor one of that name elsewhere'),
  row('controller', false, 'list', 'secrets', 'planwarden-system', 'it cannot list Secrets'),
  named(
    'controller',
    true,
    'update',
    'validatingwebhookconfigurations.admissionregistration.k8s.io',
    'planwarden',
    undefined,
    'it keeps the caBundle of planwarden’s validating webhooks',
  ),
  named(
    'controller',
    true,
    'patch',
    'mutatingwebhookconfigurations.admissionregistration.k8s.io',
    'planwarden',
    undefined,
    'and of its mutating webhooks',
  ),
  named(
    'controller',
    false,
    'update',
    'validatingwebhookconfigurations.admissionregistration.k8s.io',
    'other',
    undefined,
    'no other webhook configuration',
  ),
  named(
    'controller',
    false,
    'delete',
    'validatingwebhookconfigurations.admissionregistration.k8s.io',
    'planwarden',
    undefined,
    'it cannot remove the guard',
  ),
  // --- the webhook ---
  row('webhook', true, 'get', 'operatorversions.planwarden.dev', undefined, 'an Instance is judged against its OperatorVersion'),
  row('webhook', true, 'list', 'operatorversions.planwarden.dev', undefined, 'its OperatorVersion cache lists them once'),
  row('webhook', true, 'watch', 'operatorversions.planwarden.dev', undefined, 'and then only watches'),
  row('webhook', false, 'update', 'operatorversions.planwarden.dev', 'default', 'blueprints are read-only to it'),
  row('webhook', true, 'list', 'instances.planwarden.dev', undefined, 'an OperatorVersion in use is judged by who uses it'),
  row('webhook', true, 'list', 'updateplans.planwarden.dev', undefined, 'upgrades need their UpdatePlan'),
  row('webhook', true, 'get', 'updateplans.planwarden.dev', 'default', 'it reads UpdatePlans'),
  row('webhook', false, 'watch', 'instances.planwarden.dev', undefined, 'it reads Instances live and watches none'),
  row('webhook', false, 'watch', 'updateplans.planwarden.dev', undefined, 'nor UpdatePlans'),
  row('webhook', false, 'get', 'updateinformers.planwarden.dev', 'default', 'informers are not read'),
  row('webhook', false, 'update', 'instances.planwarden.dev', 'default', 'it judges writes, never makes them'),
  row('webhook', false, 'update', 'instances.planwarden.dev/status', 'default', 'status belongs to the controller'),
  row('webhook', false, 'create', 'updateplans.planwarden.dev', 'default', 'it never creates UpdatePlans'),
  row('webhook', false, 'delete', 'updateplans.planwarden.dev', 'default', 'nor deletes them'),
  row('webhook', false, 'create', 'leases.coordination.k8s.io', 'planwarden-system', 'admission writes nothing: no reservation Leases'),
  row('webhook', false, 'get', 'leases.coordination.k8s.io', 'planwarden-system', 'nor reads them'),
  row('webhook', false, 'delete', 'leases.coordination.k8s.io', 'planwarden-system', 'nor deletes them'),
  row('webhook', false, 'update', 'leases.coordination.k8s.io', 'planwarden-system', 'it cannot take over the controller’s leader Lease'),
  row('webhook', false, 'list', 'leases.coordination.k8s.io', 'planwarden-system', 'it cannot enumerate Leases'),
  row('webhook', false, 'create', 'leases.coordination.k8s.io', 'default', 'Leases only in planwarden-system'),
  row('webhook', false, 'create', 'leases.coordination.k8s.io', undefined, 'nor cluster-wide'),
  row('webhook', false, 'get', 'secrets', 'planwarden-system', 'not even its own namespace’s Secrets'),
  row('webhook', false, 'list', 'secrets', undefined, 'no Secrets anywhere'),
  row('webhook', false, 'get', 'configmaps', 'default', 'nothing outside planwarden’s kinds'),
  row('webhook', true, 'get', 'serviceaccounts', 'default', 'an Instance’s spec.serviceAccountName must exist'),
  row(
    'webhook',
    true,
    'watch',
    'serviceaccounts',
    undefined,
    'a trigger’s preflight asks whether its plan’s ServiceAccount exists: a list-watch cache of names',
  ),
  row('webhook', false, 'create', 'serviceaccounts', 'default', 'it never creates one'),
  row('webhook', false, 'create', 'serviceaccounts/token', 'default', 'nor mints their tokens'),
  row('webhook', false, 'create', 'events', 'default', 'it records no Events'),
  row('webhook', false, 'list', 'nodes', undefined, 'it needs no nodes'),
  row('webhook', false, 'delete', 'namespaces', undefined, 'it never deletes namespaces'),
  row(
    'webhook',
    false,
    'patch',
    'validatingwebhookconfigurations.admissionregistration.k8s.io',
    undefined,
    'it cannot change its own registration',
  ),
  row('webhook', false, 'impersonate', 'serviceaccounts', 'planwarden-system', 'it cannot act as the controller'),
  row(
    'webhook',
    true,
    'create',
    'subjectaccessreviews.authorization.k8s.io',
    undefined,
    'it asks whether the user naming a ServiceAccount may impersonate it',
  ),
  row(
    'webhook',
    false,
    'create',
    'localsubjectaccessreviews.authorization.k8s.io',
    'default',
    'cluster-wide reviews only, no namespaced ones',
  ),
  row('webhook', false, 'create', 'tokenreviews.authentication.k8s.io', undefined, 'it reviews no tokens'),
  row(
    'controller',
    true,
    'create',
    'subjectaccessreviews.authorization.k8s.io',
    undefined,
    'before a FleetRollout trigger it asks whether the rollout’s author may patch that Instance',
  ),
  row('controller', true, 'list', 'namespaces', undefined, 'a FleetRollout’s namespaceSelector is resolved against namespace labels'),
  row('controller', true, 'watch', 'fleetrollouts.planwarden.dev', undefined, 'it reconciles FleetRollouts'),
  row('controller', true, 'update', 'fleetrollouts.planwarden.dev/status', undefined, 'it records each rollout’s targets in status'),
  row('controller', false, 'update', 'fleetrollouts.planwarden.dev', undefined, 'a rollout’s spec is its author’s'),
  row('controller', false, 'create', 'fleetrollouts.planwarden.dev', undefined, 'nor does it create rollouts'),
  row(
    'controller',
    true,
    'patch',
    'instances.planwarden.dev',
    'default',
    'a FleetRollout’s triggers (after its author’s right is confirmed)',
  ),
  row(
    'webhook',
    true,
    'list',
    'namespaces',
    undefined,
    'a FleetRollout’s creation is judged in the namespaces its namespaceSelector matches',
  ),
  row('webhook', false, 'get', 'fleetrollouts.planwarden.dev', undefined, 'it reads no rollouts: the admission request carries them'),
  // change governance
  row('controller', true, 'watch', 'planpolicies.planwarden.dev', undefined, 'runs of governed plans wait for approvals and freezes'),
  row('controller', true, 'watch', 'planapprovals.planwarden.dev', undefined, 'a decision wakes the Instance whose run waits'),
  row('controller', false, 'create', 'planapprovals.planwarden.dev', 'default', 'it never approves: a person does'),
  row('controller', false, 'update', 'planpolicies.planwarden.dev', undefined, 'policies are cluster admins’'),
  row('controller', true, 'watch', 'namespaces', undefined, 'a PlanPolicy’s namespaceSelector: namespace labels, watched as metadata'),
  row(
    'webhook',
    true,
    'list',
    'planpolicies.planwarden.dev',
    undefined,
    'a break-glass and a new schedule are judged against the policies',
  ),
  row('webhook', true, 'list', 'planapprovals.planwarden.dev', 'default', 'an approver’s earlier decision on a run is refused'),
  row('webhook', true, 'get', 'instances.planwarden.dev', 'default', 'a PlanApproval is judged against the run its Instance has waiting'),
  row('webhook', true, 'get', 'namespaces', undefined, 'the labels of an Instance’s namespace'),
  row('webhook', false, 'create', 'planapprovals.planwarden.dev', 'default', 'it stamps approvers, never approves'),
  row('webhook', false, 'watch', 'planapprovals.planwarden.dev', undefined, 'read live, never cached'),
  row('webhook', true, 'watch', 'planpolicies.planwarden.dev', undefined, 'its cache of the policies lists them once, then watches'),
  row('webhook', false, 'update', 'planpolicies.planwarden.dev', undefined, 'policies are cluster admins’'),
];

function sentence(r: Row): string {
  const where = r.ns ? `in ${r.ns}` : 'cluster-wide';
  return `the ${r.who} ${r.can ? 'can' : 'cannot'} ${r.verb} ${r.resource}${r.name ? ` ${r.name}` : ''} ${where} (${r.why})`;
}

function canIArgs(r: Row): string[] {
  const [resource, subresource] = r.resource.split('/');
  return [
    'auth',
    'can-i',
    r.verb,
    r.name ? `${resource!}/${r.name}` : resource!,
    ...(subresource ? [`--subresource=${subresource}`] : []),
    ...(r.ns ? ['-n', r.ns] : r.name ? [] : ['--all-namespaces']),
    `--as=${SA[r.who]}`,
  ];
}

/** Runs `work` over `items` with at most `limit` at a time. */
async function pool<T, R>(items: T[], limit: number, work: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await work(items[i]!);
    }),
  );
  return out;
}

interface ListedRule {
  resource: string;
  nonResourceUrls: string;
  resourceNames: string;
  verbs: string[];
}

/** The resource rows of `kubectl auth can-i --list` (non-resource URL rows have no resource). */
function parseList(text: string): ListedRule[] {
  return text
    .split('\n')
    .slice(1)
    .map((line) => /^(\S*)\s+\[(.*?)\]\s+\[(.*?)\]\s+\[(.*?)\]\s*$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && m[1] !== '')
    .map((m) => ({ resource: m[1]!, nonResourceUrls: m[2]!, resourceNames: m[3]!, verbs: m[4]!.split(' ').filter(Boolean) }));
}

describe('reliability: RBAC of the controller and webhook ServiceAccounts (kubectl auth can-i)', function () {
  this.timeout(120_000);
  const answers = new Map<Row, { code: number; stdout: string; stderr: string }>();

  before(async function () {
    const results = await pool(ROWS, 6, (r) => kubectl(canIArgs(r)));
    ROWS.forEach((r, i) => answers.set(r, results[i]!));
  });

  for (const r of ROWS) {
    it(sentence(r), function () {
      const a = answers.get(r)!;
      const said = a.stdout.trim();
      expect(said, `kubectl ${canIArgs(r).join(' ')}: ${a.stderr}`).to.equal(r.can ? 'yes' : 'no');
      expect(a.code, a.stderr).to.equal(r.can ? 0 : 1);
    });
  }

  // What `--list` shows beyond the planwarden kinds: what every authenticated identity may do.
  const SELF_REVIEWS = [
    'selfsubjectaccessreviews.authorization.k8s.io',
    'selfsubjectrulesreviews.authorization.k8s.io',
    'selfsubjectreviews.authentication.k8s.io',
  ];
  const PLANWARDEN = [
    'instances.planwarden.dev',
    'operatorversions.planwarden.dev',
    'updateplans.planwarden.dev',
    'updateinformers.planwarden.dev',
    'fleetrollouts.planwarden.dev',
  ];
  /** What the webhook may do with planwarden's kinds: exactly what its lookups use. */
  const WEBHOOK_READS: Record<string, string[]> = {
    'instances.planwarden.dev': ['get', 'list'],
    'operatorversions.planwarden.dev': ['get', 'list', 'watch'],
    // change governance: policies over an Instance, an approver's earlier decisions
    'planpolicies.planwarden.dev': ['list', 'watch'],
    'planapprovals.planwarden.dev': ['list'],
    'updateplans.planwarden.dev': ['get', 'list'],
    serviceaccounts: ['get', 'list', 'watch'],
    // a FleetRollout's namespaceSelector, judged at its creation; a PlanPolicy's, for one namespace
    namespaces: ['get', 'list'],
    // not a read: a question (may this user impersonate that ServiceAccount?)
    'subjectaccessreviews.authorization.k8s.io': ['create'],
  };

  it('lists for the webhook exactly the reads its lookups make and its access reviews, no write and no wildcard', async function () {
    for (const ns of ['planwarden-system', 'default']) {
      const r = await kubectl(['auth', 'can-i', '--list', '-n', ns, `--as=${WEBHOOK}`]);
      expect(r.code, r.stderr).to.equal(0);
      const rules = parseList(r.stdout);
      const expected = [...Object.keys(WEBHOOK_READS), ...SELF_REVIEWS].sort();
      expect([...new Set(rules.map((x) => x.resource))].sort(), `${ns}:\n${r.stdout}`).to.deep.equal(expected);
      for (const x of rules) {
        expect(x.resource, r.stdout).to.not.contain('*');
        expect(x.verbs, `${x.resource} in ${ns}`).to.not.include('*');
        if (WEBHOOK_READS[x.resource]) expect([...x.verbs].sort(), x.resource).to.deep.equal(WEBHOOK_READS[x.resource]);
      }
    }
  });

  it('lists for the controller planwarden’s kinds, status, events, nodes, its Leases, impersonation and its certificate by name — no workload writes, no wildcard', async function () {
    const r = await kubectl(['auth', 'can-i', '--list', '-n', 'planwarden-system', `--as=${CONTROLLER}`]);
    expect(r.code, r.stderr).to.equal(0);
    const rules = parseList(r.stdout);
    const resources = new Set(rules.map((x) => x.resource));
    for (const need of [
      ...PLANWARDEN,
      'instances.planwarden.dev/status',
      'updateplans.planwarden.dev/status',
      'events',
      'events.events.k8s.io',
      'nodes',
      'leases.coordination.k8s.io',
      'serviceaccounts',
      'deployments.apps',
    ]) {
      expect(resources.has(need), `${need} missing from:\n${r.stdout}`).to.equal(true);
    }
    const allowed = new Set([
      ...PLANWARDEN,
      ...SELF_REVIEWS,
      // change governance, watched
      'planpolicies.planwarden.dev',
      'planapprovals.planwarden.dev',
      'instances.planwarden.dev/status',
      'updateplans.planwarden.dev/status',
      'updateinformers.planwarden.dev/status',
      'fleetrollouts.planwarden.dev/status',
      'instances.planwarden.dev/finalizers',
      // FleetRollouts: whether its author may patch a target
      'subjectaccessreviews.authorization.k8s.io',
      'events',
      'events.events.k8s.io',
      'nodes',
      'leases.coordination.k8s.io',
      // that the plans' ServiceAccount exists
      'serviceaccounts',
      // watched (never written) to wake the Instance that applied them
      'deployments.apps',
      'statefulsets.apps',
      'daemonsets.apps',
      'jobs.batch',
      // self-managed certificates: one Secret and the planwarden webhook configurations, by name
      'secrets',
      'validatingwebhookconfigurations.admissionregistration.k8s.io',
      'mutatingwebhookconfigurations.admissionregistration.k8s.io',
    ]);
    const BY_NAME: Record<string, [string, string[]]> = {
      secrets: ['planwarden-webhook-tls', ['get', 'update']],
      'validatingwebhookconfigurations.admissionregistration.k8s.io': ['planwarden', ['get', 'patch', 'update']],
      'mutatingwebhookconfigurations.admissionregistration.k8s.io': ['planwarden', ['get', 'patch', 'update']],
    };
    const WATCHED_ONLY = new Set(['deployments.apps', 'statefulsets.apps', 'daemonsets.apps', 'jobs.batch']);
    for (const x of rules) {
      if (WATCHED_ONLY.has(x.resource)) expect([...x.verbs].sort(), x.resource).to.deep.equal(['list', 'watch']);
      // get only: impersonation is each onboarded namespace's grant, not the controller's own.
      if (x.resource === 'serviceaccounts') expect([...x.verbs].sort()).to.deep.equal(['get']);
      if (BY_NAME[x.resource])
        expect([x.resourceNames, [...x.verbs].sort()], `${x.resource}:\n${r.stdout}`).to.deep.equal(BY_NAME[x.resource]);
      if (x.resource === 'namespaces') {
        // Informer requests carry the cluster id: kube-system's uid by name; a FleetRollout's
        // namespaceSelector needs the list (labels), and nothing else of namespaces.
        expect([x.resourceNames, [...x.verbs].sort()], `namespaces:\n${r.stdout}`).to.deep.equal(
          x.resourceNames === 'kube-system' ? ['kube-system', ['get']] : ['', ['list', 'watch']],
        );
        continue;
      }
      expect(allowed.has(x.resource), `unexpected grant ${x.resource} [${x.verbs.join(' ')}]:\n${r.stdout}`).to.equal(true);
      expect(x.resource).to.not.contain('*');
      expect(x.verbs, x.resource).to.not.include('*');
    }
  });
});

describe('reliability: a namespace grants the controller its plan ServiceAccounts, by name (kubectl auth can-i)', function () {
  this.timeout(120_000);
  // The suite's namespace holds the suite's wide grant; this one holds exactly what `kubectl planwarden rbac` prints.
  const onboarded = `onboarded-${Math.random().toString(16).slice(2, 8)}`;
  const suite = useNamespace('rbac-grant');

  before(async function () {
    await kubectlOk(['create', 'namespace', onboarded]);
    await kubectlOk(['apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: controllerGrantObjects(onboarded, 'planwarden-plans') }),
    });
  });
  after(async function () {
    await kubectl(['delete', 'namespace', onboarded, '--wait=false', '--ignore-not-found']);
  });

  const canI = async (ns: string, sa: string) =>
    (await kubectl(['auth', 'can-i', 'impersonate', `serviceaccounts/${sa}`, '-n', ns, `--as=${CONTROLLER}`])).stdout.trim();
  it('impersonate serviceaccounts/planwarden-plans in the onboarded namespace: yes', async () =>
    expect(await canI(onboarded, 'planwarden-plans')).to.equal('yes'));
  it('impersonate another ServiceAccount of that namespace: no (the grant names the plan ServiceAccount)', async () =>
    expect(await canI(onboarded, 'default')).to.equal('no'));
  it('impersonate serviceaccounts/namespace-controller -n kube-system: no', async () =>
    expect(await canI('kube-system', 'namespace-controller')).to.equal('no'));
  it('impersonate serviceaccounts/planwarden-webhook -n planwarden-system: no', async () =>
    expect(await canI('planwarden-system', 'planwarden-webhook')).to.equal('no'));
  it("the suite's own namespaces are onboarded (test/support/plan-rights.yaml): yes", async () =>
    expect(await canI(suite(), 'planwarden-plans')).to.equal('yes'));
});
