// The I/O half of the UpdatePlan and Instance webhooks, over in-memory lookups: what they
// look up for which write. An UpdatePlan label change must cost no API call at all (a
// consistent LIST right after another kind was written waits for the apiserver's watch
// cache: ~95 ms measured on the bench); an Instance trigger reads its OperatorVersion from
// the cache, and a refusal or a write only the webhook guards reads it live.
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Instance, OperatorVersion, PlanPolicy, UpdatePlan } from '../../../shared/api/schema.ts';
import { buildHandlers, ROUTES } from '../../../webhook/handlers.ts';
import type { AdmissionRequest } from '../../../webhook/review.ts';
import { memoryLookups } from '../../support/memoryLookups.ts';

const NOW = new Date('2026-11-22T10:00:00Z');

function plan(name: string, labels: Record<string, string> = {}): UpdatePlan {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'UpdatePlan',
    metadata: { name, namespace: 'shop', uid: `uid-${name}`, labels },
    spec: { targetRelease: 'kafka-2.0.0' },
  };
}

function request(operation: 'CREATE' | 'UPDATE', object: UpdatePlan, oldObject: UpdatePlan | null): AdmissionRequest {
  return {
    uid: 'r-1',
    kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'UpdatePlan' },
    resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'updateplans' },
    name: object.metadata.name,
    namespace: 'shop',
    operation,
    userInfo: { username: 'alice', groups: [] },
    object,
    oldObject,
    dryRun: false,
  };
}

describe('webhook handlers: UpdatePlan lookups', () => {
  it('judges an UPDATE that accepts nothing new from the request alone, and a CREATE against the namespace', async () => {
    const existing = plan('to-2');
    const lookups = memoryLookups({ updatePlans: [existing] });
    const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups, now: () => NOW });
    const validate = routes[ROUTES.validateUpdatePlans]!;

    const relabel = await validate.handle(request('UPDATE', plan('to-2', { team: 'a' }), existing));
    expect(relabel.allowed).to.equal(true);
    expect(lookups.calls).to.deep.equal({});

    const duplicate = await validate.handle(request('CREATE', plan('again'), null));
    expect(duplicate.allowed).to.equal(false);
    expect(lookups.calls.listUpdatePlans).to.equal(1);
  });

  it('admits a CREATE for a free target after one list and nothing else (admission writes nothing)', async () => {
    const lookups = memoryLookups({ updatePlans: [plan('to-2')] });
    const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups, now: () => NOW });
    const free = { ...plan('to-3'), spec: { targetRelease: 'kafka-3.0.0' } };
    const verdict = await routes[ROUTES.validateUpdatePlans]!.handle(request('CREATE', free, null));
    expect(verdict.allowed).to.equal(true);
    expect(lookups.calls).to.deep.equal({ listUpdatePlans: 1 });
    expect([...lookups.updatePlans.keys()]).to.deep.equal(['shop/to-2']);
  });
});

// --- the Instance webhook's OperatorVersion reads: cache or API ---

function operatorVersion(name: string, opts: { plans?: string[]; immutable?: string[] } = {}): OperatorVersion {
  const phases = [{ name: 'main', steps: [{ name: 's', tasks: ['noop'] }] }];
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'OperatorVersion',
    metadata: { name, namespace: 'shop' },
    spec: {
      version: '1.0.0',
      parameters: [{ name: 'SIZE', default: 'small' }, ...(opts.immutable ?? []).map((p) => ({ name: p, default: 'x', immutable: true }))],
      tasks: [{ name: 'noop', kind: 'Dummy', spec: { done: true } }],
      plans: Object.fromEntries((opts.plans ?? ['deploy', 'update']).map((p) => [p, { phases }])),
    },
  };
}

/** A deployed Instance: nothing runs, nothing is pending. */
function deployed(edit: (i: Instance) => void = () => undefined): Instance {
  const i: Instance = {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'db', namespace: 'shop', generation: 1 },
    spec: { operatorVersion: { name: 'app-1.0.0' }, parameters: { SIZE: 'small' } },
    status: {
      applied: { operatorVersion: 'app-1.0.0', parameters: { SIZE: 'small' }, generation: 1 },
      activePlan: { name: 'deploy', id: 'd1', status: 'COMPLETE' },
    },
  };
  edit(i);
  return i;
}

function instanceRequest(operation: 'CREATE' | 'UPDATE', object: Instance, oldObject: Instance | null): AdmissionRequest {
  return {
    ...request('CREATE', plan('unused'), null),
    kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' },
    resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'instances' },
    name: object.metadata.name,
    operation,
    object,
    oldObject,
  };
}

/** In-memory lookups (the API) plus a cache holding `cached` (possibly older copies). */
function cachedLookups(api: OperatorVersion[], cached: OperatorVersion[]) {
  const lookups = memoryLookups({ operatorVersions: api, serviceAccounts: ['shop/planwarden-plans'] });
  const copies = new Map(cached.map((o) => [o.metadata.name, o]));
  return Object.assign(lookups, {
    cachedOperatorVersion(_ns: string, name: string) {
      lookups.calls.cachedOperatorVersion = (lookups.calls.cachedOperatorVersion ?? 0) + 1;
      return copies.get(name);
    },
  });
}

const trigger = (planName: string, id: string) => (i: Instance) => void (i.spec.planExecution = { planName, id, abort: false });

describe('webhook handlers: the OperatorVersion an Instance write is judged with', () => {
  async function validate(lookups: ReturnType<typeof cachedLookups>, req: AdmissionRequest) {
    const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups, now: () => NOW });
    return routes[ROUTES.validateInstances]!.handle(req);
  }

  it('judges a trigger with the cached copy: no API read', async () => {
    const lookups = cachedLookups(
      [operatorVersion('app-1.0.0', { plans: ['deploy', 'backup'] })],
      [operatorVersion('app-1.0.0', { plans: ['deploy', 'backup'] })],
    );
    const v = await validate(lookups, instanceRequest('UPDATE', deployed(trigger('backup', 't1')), deployed()));
    expect(v.allowed).to.equal(true);
    // The PlanPolicies, for the warning on a governed request, come from their own watch-backed cache.
    expect(lookups.calls).to.deep.equal({ cachedOperatorVersion: 1, listPlanPolicies: 1 });
  });

  describe('a trigger a PlanPolicy will hold', () => {
    const policy = (name: string, spec: PlanPolicy['spec']): PlanPolicy => ({
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'PlanPolicy',
      metadata: { name },
      spec,
    });
    const governed = (policies: PlanPolicy[]) => {
      const lookups = cachedLookups(
        [operatorVersion('app-1.0.0', { plans: ['deploy', 'backup'] })],
        [operatorVersion('app-1.0.0', { plans: ['deploy', 'backup'] })],
      );
      lookups.planPolicies = policies;
      return lookups;
    };
    const backup = () => instanceRequest('UPDATE', deployed(trigger('backup', 't1')), deployed());

    it('is admitted with the warning, reading the namespace only for a policy that selects by its labels', async () => {
      const everywhere = governed([policy('backups', { plans: ['backup'], approval: { required: 1 } })]);
      const v = await validate(everywhere, backup());
      expect(v.allowed).to.equal(true);
      expect(v.warnings.some((w) => w.includes('plan "backup" waits for 1 approval') && w.endsWith('[AwaitingApproval]'))).to.equal(true);
      expect(everywhere.calls.labelsOfNamespace).to.equal(undefined);

      const labelled = governed([
        policy('backups', { namespaceSelector: { matchLabels: { env: 'prod' } }, plans: ['backup'], approval: { required: 1 } }),
      ]);
      labelled.namespaceLabels.set('shop', { env: 'prod' });
      expect((await validate(labelled, backup())).warnings.some((w) => w.includes('waits for 1 approval'))).to.equal(true);
      expect(labelled.calls.labelsOfNamespace).to.equal(1);
    });

    it('a policy of another plan costs no namespace read and says nothing', async () => {
      const other = governed([
        policy('restores', { namespaceSelector: { matchLabels: { env: 'prod' } }, plans: ['deploy'], approval: { required: 1 } }),
      ]);
      const v = await validate(other, backup());
      expect(v.warnings.filter((w) => w.includes('approval'))).to.deep.equal([]);
      expect(other.calls.labelsOfNamespace).to.equal(undefined);
    });

    it('a lookup that fails leaves the warning out and never refuses the write', async () => {
      const failing = governed([policy('backups', { plans: ['backup'], approval: { required: 1 } })]);
      failing.listPlanPolicies = () => Promise.reject(new Error('connection refused'));
      const v = await validate(failing, backup());
      expect(v.allowed).to.equal(true);
      expect(v.warnings.filter((w) => w.includes('approval'))).to.deep.equal([]);
    });
  });

  it('reads the API on a cache miss: an OperatorVersion the watch has not delivered yet is found', async () => {
    const lookups = cachedLookups([operatorVersion('app-1.0.0', { plans: ['deploy', 'backup'] })], []);
    const v = await validate(lookups, instanceRequest('UPDATE', deployed(trigger('backup', 't1')), deployed()));
    expect(v.allowed, v.allowed ? '' : v.message).to.equal(true);
    expect(lookups.calls.getOperatorVersion).to.equal(1);
  });

  it('judges a refusal again with the OperatorVersion read live: a copy that lacks a plan just added refuses nothing', async () => {
    const lookups = cachedLookups(
      [operatorVersion('app-1.0.0', { plans: ['deploy', 'backup'] })],
      [operatorVersion('app-1.0.0', { plans: ['deploy'] })],
    );
    const v = await validate(lookups, instanceRequest('UPDATE', deployed(trigger('backup', 't1')), deployed()));
    expect(v.allowed, v.allowed ? '' : v.message).to.equal(true);
    expect(lookups.calls.getOperatorVersion).to.equal(1);
  });

  it('keeps a refusal that holds against the live OperatorVersion too', async () => {
    const lookups = cachedLookups([operatorVersion('app-1.0.0')], [operatorVersion('app-1.0.0')]);
    const v = await validate(lookups, instanceRequest('UPDATE', deployed(trigger('bakup', 't1')), deployed()));
    expect(v.allowed).to.equal(false);
    expect(v.allowed ? '' : v.message).to.match(/\[rule instance\.unknown-plan\]$/);
    expect(lookups.calls.getOperatorVersion).to.equal(1);
  });

  it('admits a trigger against the cached copy even if the live one has lost the plan: the controller judges it again (and reports it)', async () => {
    const lookups = cachedLookups(
      [operatorVersion('app-1.0.0')],
      [operatorVersion('app-1.0.0', { plans: ['deploy', 'update', 'backup'] })],
    );
    const v = await validate(lookups, instanceRequest('UPDATE', deployed(trigger('backup', 't1')), deployed()));
    expect(v.allowed).to.equal(true);
    expect(lookups.calls.getOperatorVersion ?? 0).to.equal(0);
  });

  it('judges a parameter change live: the rules only the webhook applies (immutable, required) never see a stale copy', async () => {
    const live = operatorVersion('app-1.0.0', { immutable: ['ZONE'] });
    const stale = operatorVersion('app-1.0.0');
    const lookups = cachedLookups([live], [stale]);
    const v = await validate(
      lookups,
      instanceRequest(
        'UPDATE',
        deployed((i) => (i.spec.parameters = { SIZE: 'small', ZONE: 'eu' })),
        deployed(),
      ),
    );
    expect(v.allowed ? '' : v.rule).to.equal('instance.immutable-parameter-changed');
    expect(lookups.calls.cachedOperatorVersion ?? 0).to.equal(0);
  });

  it('judges a creation and an upgrade live', async () => {
    const lookups = cachedLookups(
      [operatorVersion('app-1.0.0'), operatorVersion('app-2.0.0')],
      [operatorVersion('app-1.0.0'), operatorVersion('app-2.0.0')],
    );
    const created = deployed((i) => delete i.status);
    expect((await validate(lookups, instanceRequest('CREATE', created, null))).allowed).to.equal(true);
    const upgraded = deployed((i) => (i.spec.operatorVersion.name = 'app-2.0.0'));
    await validate(lookups, instanceRequest('UPDATE', upgraded, deployed()));
    expect(lookups.calls.cachedOperatorVersion ?? 0).to.equal(0);
    expect(lookups.calls.getOperatorVersion).to.equal(3);
  });
});

// --- who asked, for a FleetRollout's trigger ---

describe("webhook handlers: the requested-by stamp of a FleetRollout's trigger", () => {
  const CONTROLLER = 'system:serviceaccount:planwarden-system:planwarden-controller';
  const mark = (id: string) => (i: Instance) =>
    void (i.metadata.annotations = {
      ...i.metadata.annotations,
      'planwarden.dev/fleet-trigger': JSON.stringify({ rollout: 'pg', author: 'alice', id }),
    });
  async function stamp(username: string, object: Instance, oldObject: Instance): Promise<string | undefined> {
    const lookups = memoryLookups({ operatorVersions: [operatorVersion('app-1.0.0', { plans: ['deploy', 'backup'] })] });
    const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups, now: () => NOW });
    const v = await routes[ROUTES.mutateInstances]!.handle({
      ...instanceRequest('UPDATE', object, oldObject),
      userInfo: { username, groups: [] },
    });
    const ops = (v.allowed ? (v.patch ?? []) : []) as { path: string; value?: unknown }[];
    const set = ops.find((o) => o.path.includes('requested-by'));
    return typeof set?.value === 'string' ? set.value : undefined;
  }
  const both = (...edits: ((i: Instance) => void)[]) => deployed((i) => edits.forEach((e) => e(i)));

  it('names the rollout and its author when the controller writes the trigger with the mark', async () => {
    const s = await stamp(CONTROLLER, both(trigger('backup', 'fleet-pg-1'), mark('fleet-pg-1')), deployed());
    expect(JSON.parse(s!)).to.deep.equal({ manual: { user: 'rollout:pg (by alice)', trigger: 'backup/fleet-pg-1' } });
  });

  it('names the user when someone else writes the same marked trigger (the validating webhook refuses it besides)', async () => {
    const s = await stamp('mallory', both(trigger('backup', 'fleet-pg-1'), mark('fleet-pg-1')), deployed());
    expect(JSON.parse(s!)).to.deep.equal({ manual: { user: 'mallory', trigger: 'backup/fleet-pg-1' } });
  });

  it('names the controller itself when its write carries a mark for another trigger id', async () => {
    const s = await stamp(CONTROLLER, both(trigger('backup', 'other'), mark('fleet-pg-1')), deployed());
    expect(JSON.parse(s!)).to.deep.equal({ manual: { user: CONTROLLER, trigger: 'backup/other' } });
  });
});

// --- a FleetRollout's creation: where its author may patch Instances ---

describe("webhook handlers: a FleetRollout's author, asked per matching namespace", () => {
  const rolloutRequest = (parameters?: Record<string, string>): AdmissionRequest => ({
    ...request('CREATE', plan('unused'), null),
    kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'FleetRollout' },
    resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'fleetrollouts' },
    name: 'pg',
    namespace: undefined,
    object: {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'FleetRollout',
      metadata: { name: 'pg', annotations: { 'planwarden.dev/author': JSON.stringify({ username: 'alice', groups: [] }) } },
      spec: { instanceSelector: { matchLabels: { app: 'db' } }, plan: { name: 'backup', ...(parameters ? { parameters } : {}) } },
    },
  });
  const target = (namespace: string): Instance => ({ ...deployed(), metadata: { name: 'db', namespace, labels: { app: 'db' } } });
  const ovIn = (namespace: string) => ({
    ...operatorVersion('app-1.0.0', { plans: ['deploy', 'backup'] }),
    metadata: { name: 'app-1.0.0', namespace },
  });

  async function judge(
    answer: (namespace: string | undefined, verb: string) => 'allowed' | 'denied' | 'unknown',
    parameters?: Record<string, string>,
  ) {
    const lookups = memoryLookups({
      operatorVersions: [ovIn('shop'), ovIn('web')],
      instances: [target('shop'), target('web')],
      access: (_s, a) =>
        answer(a.namespace, a.verb) === 'unknown'
          ? { kind: 'unknown', reason: 'timed out' }
          : { kind: answer(a.namespace, a.verb) as 'allowed' | 'denied' },
    });
    const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups, now: () => NOW });
    return { verdict: await routes[ROUTES.validateFleetRollouts]!.handle(rolloutRequest(parameters)), lookups };
  }

  it('allows a rollout whose author may patch Instances in every matching namespace, asking once per namespace (patch, and list: what a refusal may name)', async () => {
    const { verdict, lookups } = await judge(() => 'allowed');
    expect(verdict.allowed, verdict.allowed ? '' : verdict.message).to.equal(true);
    expect(
      lookups.accessReviews.map((r) => [r.subject.user, r.attributes.verb, r.attributes.resource, r.attributes.namespace]),
    ).to.have.deep.members([
      ['alice', 'patch', 'instances', 'shop'],
      ['alice', 'patch', 'instances', 'web'],
      ['alice', 'list', 'instances', 'shop'],
      ['alice', 'list', 'instances', 'web'],
    ]);
  });

  it('refuses it naming the namespace where the answer is no, when the author may list Instances there', async () => {
    const { verdict } = await judge((ns, verb) => (ns === 'web' && verb === 'patch' ? 'denied' : 'allowed'));
    expect(verdict.allowed).to.equal(false);
    expect(verdict.allowed ? '' : verdict.message)
      .to.include('fleetrollout.author-forbidden')
      .and.include('web')
      .and.not.include('shop,');
  });

  it('names no namespace nor Instance the author may not list Instances in: it only counts them', async () => {
    const denied = await judge((ns) => (ns === 'web' ? 'denied' : 'allowed'));
    expect(denied.verdict.allowed ? '' : denied.verdict.message)
      .to.include('fleetrollout.author-forbidden')
      .and.include('1 namespace you may not read')
      .and.not.include('web');
    const values = await judge((ns, verb) => (ns === 'web' && verb === 'list' ? 'denied' : 'allowed'), { SIZE: 'big' });
    expect(values.verdict.allowed ? '' : values.verdict.message)
      .to.include('[rule fleetrollout.parameters-invalid]')
      .and.include('shop/db, and 1 Instance in 1 namespace you may not read')
      .and.not.include('web');
  });

  it("refuses per-run values a target's trigger would be refused for, at creation, naming the targets and the trigger rule", async () => {
    const { verdict } = await judge(() => 'allowed', { SIZE: 'big' });
    expect(verdict.allowed).to.equal(false);
    expect(verdict.allowed ? '' : verdict.message)
      .to.include('[rule fleetrollout.parameters-invalid]')
      .and.include('shop/db, web/db')
      .and.include('instance.per-run-parameter-not-allowed');
  });

  it('refuses it where the answer is unknown (fail closed)', async () => {
    const { verdict } = await judge((ns, verb) => (ns === 'shop' && verb === 'patch' ? 'unknown' : 'allowed'));
    expect(verdict.allowed).to.equal(false);
    expect(verdict.allowed ? '' : verdict.message)
      .to.include('fleetrollout.author-forbidden')
      .and.include('shop');
    // Unknown whether the author may list Instances there: counted, not named (fail closed too).
    const hidden = await judge((ns) => (ns === 'shop' ? 'unknown' : 'allowed'));
    expect(hidden.verdict.allowed ? '' : hidden.verdict.message)
      .to.include('fleetrollout.author-forbidden')
      .and.include('1 namespace you may not read')
      .and.not.include('shop');
  });
});
