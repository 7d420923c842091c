import { expect } from 'chai';
import type { FleetRollout, Instance } from '../../../../shared/api/schema.ts';
import { FLEET_MARK_ANNOTATION } from '../../../../shared/fleet.ts';
import { KubeApiError } from '../../../../shared/kube/client.ts';
import { FleetTargetIndex, outcomeOfError, triggerPatch } from '../../../../controller/fleet/reconciler.ts';
import type { TriggerWrite } from '../../../../controller/fleet/decide.ts';

const write: TriggerWrite = {
  namespace: 'shop',
  name: 'db',
  runId: 'fleet-pg-0123abcd',
  plan: { name: 'backup', parameters: { TARGET: 's3://x' } },
  mark: { rollout: 'pg', author: 'alice', id: 'fleet-pg-0123abcd' },
  author: { username: 'alice', groups: [] },
};
const inst = (annotations?: Record<string, string>): Instance => ({
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'Instance',
  metadata: { namespace: 'shop', name: 'db', resourceVersion: '42', ...(annotations ? { annotations } : {}) },
  spec: { operatorVersion: { name: 'pg-14.1' } },
});
const markPath = `/metadata/annotations/${FLEET_MARK_ANNOTATION.replace('/', '~1')}`;

describe('FleetRollout trigger writes', () => {
  it('a plan trigger replaces spec.planExecution whole (no earlier per-run value survives) and adds the mark in the same patch', () => {
    expect(triggerPatch(write, inst({ other: 'x' }))).to.deep.equal([
      { op: 'add', path: markPath, value: '{"rollout":"pg","author":"alice","id":"fleet-pg-0123abcd"}' },
      {
        op: 'add',
        path: '/spec/planExecution',
        value: { planName: 'backup', id: 'fleet-pg-0123abcd', abort: false, parameters: { TARGET: 's3://x' } },
      },
    ]);
  });

  it('an Instance without annotations gets the map whole, only if nobody wrote it meanwhile (resourceVersion test)', () => {
    const ops = triggerPatch(write, inst());
    expect(ops.slice(0, 2)).to.deep.equal([
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      {
        op: 'add',
        path: '/metadata/annotations',
        value: { [FLEET_MARK_ANNOTATION]: '{"rollout":"pg","author":"alice","id":"fleet-pg-0123abcd"}' },
      },
    ]);
  });

  it('an upgrade replaces spec.operatorVersion.name', () => {
    const { plan: _, ...rest } = write;
    expect(triggerPatch({ ...rest, upgrade: { operatorVersion: 'pg-14.2' } }, inst({})).at(-1)).to.deep.equal({
      op: 'replace',
      path: '/spec/operatorVersion/name',
      value: 'pg-14.2',
    });
  });

  const denial = (code: number) =>
    new KubeApiError(code, 'x', 'm', {
      message: `admission webhook "validate.instances.planwarden.dev" denied the request: Instance "shop/db": trigger refused: another plan runs [rule instance.plan-running]`,
    });
  const rows: [string, unknown, { kind: string; wait?: boolean }][] = [
    ['a webhook denial with 409 is a refusal to wait on', denial(409), { kind: 'refused', wait: true }],
    ['a webhook denial with 403 is a refusal for good', denial(403), { kind: 'refused', wait: false }],
    ['a webhook denial with 422 is a refusal for good', denial(422), { kind: 'refused', wait: false }],
    [
      "a 409 that is no webhook's (a conflict) is tried again",
      new KubeApiError(409, 'Conflict', 'the object has been modified'),
      { kind: 'error' },
    ],
    [
      "the controller's own 403 (its RBAC) is tried again, not the author's failure",
      new KubeApiError(
        403,
        'Forbidden',
        'instances "db" is forbidden: User "system:serviceaccount:planwarden-system:planwarden-controller" cannot patch',
      ),
      { kind: 'error' },
    ],
    ['an Instance gone is tried again (the next look skips it)', new KubeApiError(404, 'NotFound', 'not found'), { kind: 'error' }],
    ['no answer is tried again', new Error('ECONNREFUSED'), { kind: 'error' }],
  ];
  for (const [sentence, err, want] of rows) {
    it(sentence, () => expect(outcomeOfError(write, err)).to.include(want));
  }

  it("a refusal keeps the webhook's message without the apiserver's prefix", () => {
    expect((outcomeOfError(write, denial(409)) as { message: string }).message).to.match(/^Instance "shop\/db": trigger refused/);
  });
});

describe('FleetRollout target index', () => {
  const r = (name: string, states: string): FleetRollout => ({
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'FleetRollout',
    metadata: { name },
    spec: { instanceSelector: { matchLabels: { a: 'b' } }, plan: { name: 'backup' } },
    status: {
      resolved: [
        { namespace: 'a', names: ['x', 'y'] },
        { namespace: 'b', names: ['z'] },
      ],
      states,
    },
  });

  it('wakes a rollout for its in-flight targets only (Running, Waiting)', () => {
    const idx = new FleetTargetIndex();
    idx.update(r('one', 'RWP'));
    expect(['a/x', 'a/y', 'b/z'].map((k) => idx.rolloutsOf(k))).to.deep.equal([['one'], ['one'], []]);
  });

  it('forgets targets that ended and rollouts that were deleted', () => {
    const idx = new FleetTargetIndex();
    idx.update(r('one', 'RWP'));
    idx.update(r('two', 'RCC'));
    idx.update(r('one', 'CCC'));
    expect(idx.rolloutsOf('a/x')).to.deep.equal(['two']);
    idx.remove('two');
    expect(idx.rolloutsOf('a/x')).to.deep.equal([]);
  });
});
