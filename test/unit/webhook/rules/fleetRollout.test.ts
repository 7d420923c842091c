import { expect } from 'chai';
import type { FleetRollout, FleetRolloutSpec, Instance } from '../../../../shared/api/schema.ts';
import { AUTHOR_ANNOTATION, FLEET_MARK_ANNOTATION, fleetRequestedBy, formatAuthor, formatMark } from '../../../../shared/fleet.ts';
import { admitFleetMark } from '../../../../webhook/rules/fleetMark.ts';
import {
  admitFleetRollout,
  admitFleetTargets,
  mutateFleetRollout,
  type FleetRolloutContext,
  type FleetTargetFacts,
} from '../../../../webhook/rules/fleetRollout.ts';
import type { Verdict } from '../../../../shared/verdict.ts';

const ALICE = { username: 'alice', groups: ['platform', 'system:authenticated'] };
const CONTROLLER = 'system:serviceaccount:planwarden-system:planwarden-controller';

const BASE: FleetRolloutSpec = { instanceSelector: { matchLabels: { app: 'postgres' } }, plan: { name: 'backup' } };

function rollout(spec: Partial<FleetRolloutSpec> & Record<string, unknown> = {}, annotations?: Record<string, string>): FleetRollout {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'FleetRollout',
    metadata: { name: 'pg', ...(annotations ? { annotations } : {}) },
    spec: { ...BASE, ...spec },
  };
}

const create = (object: FleetRollout, userInfo = ALICE): FleetRolloutContext => ({ operation: 'CREATE', object, userInfo });
const update = (oldObject: FleetRollout, object: FleetRollout, userInfo = ALICE): FleetRolloutContext => ({
  operation: 'UPDATE',
  object,
  oldObject,
  userInfo,
});
const rule = (v: Verdict) => (v.allowed ? 'allowed' : v.rule);
const recorded = formatAuthor(ALICE);

describe('FleetRollout admission', () => {
  const rows: [string, FleetRolloutContext, string][] = [
    ['a backup of every Postgres is allowed', create(rollout()), 'allowed'],
    [
      'an upgrade in waves 1, 25%, 100% is allowed',
      create(rollout({ plan: undefined, upgrade: { operatorVersion: 'pg-14.2' }, waves: ['1', '25%', '100%'] })),
      'allowed',
    ],
    ['an empty instanceSelector is refused', create(rollout({ instanceSelector: {} })), 'fleetrollout.selector-empty'],
    [
      'a selector with an invalid label key is refused',
      create(rollout({ instanceSelector: { matchLabels: { 'bad key!': 'x' } } })),
      'fleetrollout.selector-invalid',
    ],
    [
      'In without values is refused',
      create(rollout({ instanceSelector: { matchExpressions: [{ key: 'app', operator: 'In' }] } })),
      'fleetrollout.selector-invalid',
    ],
    [
      'an invalid namespaceSelector is refused',
      create(rollout({ namespaceSelector: { matchExpressions: [{ key: 'tier', operator: 'Exists', values: ['x'] }] } })),
      'fleetrollout.selector-invalid',
    ],
    ['both plan and upgrade is refused', create(rollout({ upgrade: { operatorVersion: 'pg-14.2' } })), 'fleetrollout.one-action'],
    ['neither plan nor upgrade is refused', create(rollout({ plan: undefined })), 'fleetrollout.one-action'],
    ['plan cleanup is refused', create(rollout({ plan: { name: 'cleanup' } })), 'fleetrollout.cleanup'],
    ['waves that do not increase are refused', create(rollout({ waves: ['5', '2'] })), 'fleetrollout.waves-invalid'],
    ['a wave above 100% is refused', create(rollout({ waves: ['50%', '150%'] })), 'fleetrollout.waves-invalid'],
    ['a wave of 0 is refused', create(rollout({ waves: ['0', '100%'] })), 'fleetrollout.waves-invalid'],
    ['empty waves are refused', create(rollout({ waves: [] })), 'fleetrollout.waves-invalid'],
    [
      'a count then a percentage is allowed (compared once the targets are known)',
      create(rollout({ waves: ['3', '10%', '100%'] })),
      'allowed',
    ],
    ['maxConcurrent 0 is refused', create(rollout({ maxConcurrent: 0 })), 'fleetrollout.max-concurrent'],
    ['a negative maxFailures is refused', create(rollout({ maxFailures: -1 })), 'fleetrollout.max-failures'],
    [
      'pausing is allowed',
      update(rollout({}, { [AUTHOR_ANNOTATION]: recorded }), rollout({ paused: true }, { [AUTHOR_ANNOTATION]: recorded })),
      'allowed',
    ],
    [
      'raising maxFailures and maxConcurrent is allowed',
      update(
        rollout({}, { [AUTHOR_ANNOTATION]: recorded }),
        rollout({ maxFailures: 3, maxConcurrent: 4 }, { [AUTHOR_ANNOTATION]: recorded }),
      ),
      'allowed',
    ],
    [
      'the author may unpause it',
      update(rollout({ paused: true }, { [AUTHOR_ANNOTATION]: recorded }), rollout({ paused: false }, { [AUTHOR_ANNOTATION]: recorded })),
      'allowed',
    ],
    [
      'another user may not unpause it (issue 34: it keeps acting with its author’s rights)',
      update(rollout({ paused: true }, { [AUTHOR_ANNOTATION]: recorded }), rollout({ paused: false }, { [AUTHOR_ANNOTATION]: recorded }), {
        username: 'mallory',
        groups: [],
      }),
      'fleetrollout.update-not-author',
    ],
    [
      'another user may not raise maxConcurrent',
      update(
        rollout({ maxConcurrent: 1 }, { [AUTHOR_ANNOTATION]: recorded }),
        rollout({ maxConcurrent: 50 }, { [AUTHOR_ANNOTATION]: recorded }),
        { username: 'mallory', groups: [] },
      ),
      'fleetrollout.update-not-author',
    ],
    [
      'another user may not raise maxFailures',
      update(
        rollout({ maxFailures: 0 }, { [AUTHOR_ANNOTATION]: recorded }),
        rollout({ maxFailures: 9 }, { [AUTHOR_ANNOTATION]: recorded }),
        { username: 'mallory', groups: [] },
      ),
      'fleetrollout.update-not-author',
    ],
    [
      'another user may pause it: pausing never widens',
      update(rollout({}, { [AUTHOR_ANNOTATION]: recorded }), rollout({ paused: true }, { [AUTHOR_ANNOTATION]: recorded }), {
        username: 'mallory',
        groups: [],
      }),
      'allowed',
    ],
    [
      'another user may not pause and raise maxConcurrent in one write',
      update(
        rollout({}, { [AUTHOR_ANNOTATION]: recorded }),
        rollout({ paused: true, maxConcurrent: 50 }, { [AUTHOR_ANNOTATION]: recorded }),
        { username: 'mallory', groups: [] },
      ),
      'fleetrollout.update-not-author',
    ],
    [
      'another user may relabel it (spec unchanged)',
      update(
        rollout({}, { [AUTHOR_ANNOTATION]: recorded }),
        {
          ...rollout({}, { [AUTHOR_ANNOTATION]: recorded }),
          metadata: { name: 'pg', labels: { a: 'b' }, annotations: { [AUTHOR_ANNOTATION]: recorded } },
        },
        { username: 'mallory', groups: [] },
      ),
      'allowed',
    ],
    [
      'changing the plan after creation is refused',
      update(rollout({}, { [AUTHOR_ANNOTATION]: recorded }), rollout({ plan: { name: 'restore' } }, { [AUTHOR_ANNOTATION]: recorded })),
      'fleetrollout.spec-immutable',
    ],
    [
      'changing the waves after creation is refused',
      update(rollout({}, { [AUTHOR_ANNOTATION]: recorded }), rollout({ waves: ['1', '100%'] }, { [AUTHOR_ANNOTATION]: recorded })),
      'fleetrollout.spec-immutable',
    ],
    [
      'an author written by the client that is someone else is refused',
      create(rollout({}, { [AUTHOR_ANNOTATION]: formatAuthor({ username: 'admin', groups: ['system:masters'] }) })),
      'fleetrollout.author-forged',
    ],
    ['an author written by the client that is the requester is allowed', create(rollout({}, { [AUTHOR_ANNOTATION]: recorded })), 'allowed'],
    [
      'a changed author on update is refused',
      update(
        rollout({}, { [AUTHOR_ANNOTATION]: recorded }),
        rollout({}, { [AUTHOR_ANNOTATION]: formatAuthor({ username: 'admin', groups: [] }) }),
      ),
      'fleetrollout.author-forged',
    ],
    [
      'a removed author on update is refused',
      update(rollout({}, { [AUTHOR_ANNOTATION]: recorded }), rollout()),
      'fleetrollout.author-forged',
    ],
  ];
  for (const [sentence, ctx, want] of rows) {
    it(sentence, () => expect(rule(admitFleetRollout(ctx))).to.equal(want));
  }

  it('a refusal names the rule, the object, what and why, and a fix', () => {
    const v = admitFleetRollout(
      update(rollout({}, { [AUTHOR_ANNOTATION]: recorded }), rollout({ waves: ['1', '100%'] }, { [AUTHOR_ANNOTATION]: recorded })),
    );
    expect(v.allowed).to.equal(false);
    if (!v.allowed) {
      expect(v.message).to.match(
        /^FleetRollout "pg": a change of spec\.waves refused: .*only paused, maxFailures and maxConcurrent may change; create a new FleetRollout.*\[rule fleetrollout\.spec-immutable\]$/,
      );
    }
  });
});

describe('FleetRollout targets at creation', () => {
  const facts = (f: Partial<FleetTargetFacts>): FleetTargetFacts => ({
    instances: [
      { namespace: 'shop', name: 'db', operatorVersion: 'pg-14.1', plans: ['deploy', 'backup'] },
      { namespace: 'web', name: 'db', operatorVersion: 'pg-14.1', plans: ['deploy', 'backup'] },
    ],
    namespacesWithoutTarget: [],
    forbiddenNamespaces: [],
    ...f,
  });
  const rows: [string, FleetRolloutContext, FleetTargetFacts, string][] = [
    ['targets the author may patch, whose OperatorVersion has the plan, are allowed', create(rollout()), facts({}), 'allowed'],
    [
      'an author who may not act as a matching Instance’s ServiceAccount is refused (issue 34)',
      create(rollout({ plan: undefined, upgrade: { operatorVersion: 'pg-2' } })),
      facts({ forbiddenServiceAccounts: ['db/main as strong'] }),
      'fleetrollout.target-impersonation',
    ],
    [
      'an author who may not patch Instances in one matching namespace is refused',
      create(rollout()),
      facts({ forbiddenNamespaces: ['web'] }),
      'fleetrollout.author-forbidden',
    ],
    [
      "a plan one matching Instance's OperatorVersion lacks is refused",
      create(rollout()),
      facts({ instances: [{ namespace: 'shop', name: 'db', operatorVersion: 'pg-13', plans: ['deploy'] }] }),
      'fleetrollout.plan-missing',
    ],
    [
      'a matching Instance whose OperatorVersion is missing is refused for a plan',
      create(rollout()),
      facts({ instances: [{ namespace: 'shop', name: 'db', operatorVersion: 'gone' }] }),
      'fleetrollout.plan-missing',
    ],
    [
      'an upgrade to an OperatorVersion missing in one namespace is refused',
      create(rollout({ plan: undefined, upgrade: { operatorVersion: 'pg-14.2' } })),
      facts({ namespacesWithoutTarget: ['web'] }),
      'fleetrollout.operator-version-missing',
    ],
    ['no matching Instance is allowed, with a warning', create(rollout()), facts({ instances: [] }), 'allowed'],
  ];
  for (const [sentence, ctx, f, want] of rows) {
    it(sentence, () => expect(rule(admitFleetTargets(ctx, f))).to.equal(want));
  }

  it('the refusal of a forbidden author names the namespaces', () => {
    const v = admitFleetTargets(create(rollout()), facts({ forbiddenNamespaces: ['web', 'billing'] }));
    expect(!v.allowed && v.message).to.include('alice may not patch Instances in namespaces web, billing, where some match');
  });

  it('a refusal counts, and never names, what lies in namespaces the author may not list Instances in', () => {
    const forbidden = admitFleetTargets(
      create(rollout()),
      facts({ forbiddenNamespaces: ['web', 'billing', 'hr'], hiddenNamespaces: ['billing', 'hr'] }),
    );
    expect(!forbidden.allowed && forbidden.message)
      .to.include('in namespace web and 2 namespaces you may not read, where')
      .and.not.include('billing')
      .and.not.include('hr,');
    const lacking = admitFleetTargets(
      create(rollout()),
      facts({
        instances: [
          { namespace: 'web', name: 'a', operatorVersion: 'pg-13', plans: [] },
          { namespace: 'billing', name: 'b', operatorVersion: 'pg-13', plans: [] },
          { namespace: 'billing', name: 'c', operatorVersion: 'pg-13', plans: [] },
        ],
        hiddenNamespaces: ['billing'],
      }),
    );
    expect(!lacking.allowed && lacking.message)
      .to.include(
        'the OperatorVersions of matching Instances web/a (pg-13), and 2 Instances in 1 namespace you may not read have no such plan',
      )
      .and.not.include('billing');
    const allHidden = admitFleetTargets(
      create(rollout({ plan: undefined, upgrade: { operatorVersion: 'pg-14.2' } })),
      facts({ namespacesWithoutTarget: ['billing'], hiddenNamespaces: ['billing'] }),
    );
    expect(!allHidden.allowed && allHidden.message)
      .to.include('1 namespace you may not read holds matching Instances')
      .and.not.include('billing');
  });

  it('no matching Instance warns that the rollout has no targets', () => {
    expect(admitFleetTargets(create(rollout()), facts({ instances: [] })).warnings[0]).to.include('no Instance matches');
  });
});

describe('FleetRollout author recording', () => {
  it('a creation without an author gets the requester as author', () => {
    const v = mutateFleetRollout(create(rollout()));
    expect(v.allowed && v.patch).to.deep.equal([{ op: 'add', path: '/metadata/annotations', value: { [AUTHOR_ANNOTATION]: recorded } }]);
  });
  it('a creation with other annotations gets the author added beside them', () => {
    const v = mutateFleetRollout(create(rollout({}, { team: 'db' })));
    expect(v.allowed && v.patch).to.deep.equal([{ op: 'add', path: '/metadata/annotations/planwarden.dev~1author', value: recorded }]);
  });
  it('a creation that forges the author is refused already when mutating', () => {
    expect(rule(mutateFleetRollout(create(rollout({}, { [AUTHOR_ANNOTATION]: formatAuthor({ username: 'root', groups: [] }) }))))).to.equal(
      'fleetrollout.author-forged',
    );
  });
});

describe('the rollout mark on Instance writes', () => {
  const mark = formatMark({ rollout: 'pg', author: 'alice', id: 'fleet-pg-1234abcd' });
  const inst = (annotations?: Record<string, string>, id?: string): Instance => ({
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'db', namespace: 'shop', ...(annotations ? { annotations } : {}) },
    spec: { operatorVersion: { name: 'pg-14.1' }, ...(id ? { planExecution: { planName: 'backup', id } } : {}) },
  });
  const rows: [string, Instance | undefined, Instance, string, string][] = [
    ['the controller may set the mark', inst(), inst({ [FLEET_MARK_ANNOTATION]: mark }, 'fleet-pg-1234abcd'), CONTROLLER, 'allowed'],
    [
      'anyone else who sets the mark is refused',
      inst(),
      inst({ [FLEET_MARK_ANNOTATION]: mark }, 'fleet-pg-1234abcd'),
      'mallory',
      'instance.fleet-mark-forged',
    ],
    [
      'anyone else who changes the mark is refused',
      inst({ [FLEET_MARK_ANNOTATION]: 'x' }),
      inst({ [FLEET_MARK_ANNOTATION]: mark }),
      'mallory',
      'instance.fleet-mark-forged',
    ],
    [
      'a write that keeps the mark as stored is allowed',
      inst({ [FLEET_MARK_ANNOTATION]: mark }),
      inst({ [FLEET_MARK_ANNOTATION]: mark }, 'manual-1'),
      'bob',
      'allowed',
    ],
    ['removing the mark is allowed', inst({ [FLEET_MARK_ANNOTATION]: mark }), inst(), 'bob', 'allowed'],
  ];
  for (const [sentence, oldObject, object, username, want] of rows) {
    it(sentence, () =>
      expect(
        rule(admitFleetMark({ operation: oldObject ? 'UPDATE' : 'CREATE', oldObject, object, username, controllerUser: CONTROLLER })),
      ).to.equal(want),
    );
  }

  it("requestedBy is the rollout and its author when the controller's write sets the mark with the trigger it introduces", () => {
    expect(fleetRequestedBy(inst(), inst({ [FLEET_MARK_ANNOTATION]: mark }, 'fleet-pg-1234abcd'), CONTROLLER, CONTROLLER)).to.equal(
      'rollout:pg (by alice)',
    );
  });
  it('a mark left by an earlier write does not speak for a later trigger', () => {
    expect(
      fleetRequestedBy(
        inst({ [FLEET_MARK_ANNOTATION]: mark }),
        inst({ [FLEET_MARK_ANNOTATION]: mark }, 'fleet-pg-1234abcd'),
        CONTROLLER,
        CONTROLLER,
      ),
    ).to.equal(undefined);
  });
  it('a mark whose id is not the trigger the write introduces does not speak for it', () => {
    expect(fleetRequestedBy(inst(), inst({ [FLEET_MARK_ANNOTATION]: mark }, 'other'), CONTROLLER, CONTROLLER)).to.equal(undefined);
  });
  it("an upgrade the controller writes with the mark is the rollout's", () => {
    const up = formatMark({ rollout: 'pg', author: 'alice', id: 'upgrade/pg-14.2' });
    const after = { ...inst({ [FLEET_MARK_ANNOTATION]: up }), spec: { operatorVersion: { name: 'pg-14.2' } } };
    expect(fleetRequestedBy(inst(), after, CONTROLLER, CONTROLLER)).to.equal('rollout:pg (by alice)');
  });
});
