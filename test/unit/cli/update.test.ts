// update pre-checks without a cluster: when the analysis counts as done, and which
// acceptances --accept and --accept-all write.
import { expect } from 'chai';
import { insightsByUid, isAnalysed, unacceptedRisks, withAccepted } from '../../../cli/commands/update.ts';
import { CliError } from '../../../cli/io.ts';
import type { Condition, UpdatePlan } from '../../../shared/api/schema.ts';
import { scopeDigest } from '../../../shared/insights.ts';

const NO_SCOPE = scopeDigest(undefined);
const POD_SCOPE = { type: 'Instance', resources: [{ kind: 'Pod', name: 'db-0' }] };

function plan(
  opts: { generation?: number; analyzed?: Partial<Condition>; accepted?: UpdatePlan['spec']['acceptedInsights'] } = {},
): UpdatePlan {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'UpdatePlan',
    metadata: { name: 'app-2.0.0', namespace: 'prod', generation: opts.generation ?? 1 },
    spec: { targetRelease: 'app-2.0.0', acceptedInsights: opts.accepted },
    status: {
      informers: [
        {
          name: 'db',
          response: 'Success',
          insights: [
            { uid: 'w1', impact: { level: 'warning', summary: 'replicas restart' } },
            { uid: 'i1', impact: { level: 'info', summary: 'new metrics' } },
            { uid: 'e1', impact: { level: 'error', summary: 'was full' }, remediation: { resolved: true } },
            { uid: 'shared', impact: { level: 'critical', summary: 'seen by both' } },
          ],
        },
        { name: 'net', response: 'Success', insights: [{ uid: 'shared', impact: { level: 'critical', summary: 'seen by both' } }] },
      ],
      conditions: opts.analyzed ? [{ type: 'Analyzed', status: 'Unknown', ...opts.analyzed }] : [],
    },
  };
}

describe('cli update pre-checks: is the analysis done?', () => {
  const cases: [string, UpdatePlan, boolean][] = [
    ['not without an Analyzed condition', plan(), false],
    ['not while Analyzed is Unknown (informers still to answer)', plan({ analyzed: { status: 'Unknown', observedGeneration: 1 } }), false],
    ['yes when Analyzed is True for the current generation', plan({ analyzed: { status: 'True', observedGeneration: 1 } }), true],
    ['yes when Analyzed is False (an informer failed)', plan({ analyzed: { status: 'False', observedGeneration: 1 } }), true],
    [
      'not when Analyzed speaks of an older generation',
      plan({ generation: 2, analyzed: { status: 'True', observedGeneration: 1 } }),
      false,
    ],
  ];
  for (const [sentence, p, expected] of cases) {
    it(sentence, () => expect(isAnalysed(p)).to.equal(expected));
  }
});

describe('cli update pre-checks: what gets accepted', () => {
  it('--accept-all: every unresolved insight of level warning or above, of every informer, not yet accepted', () => {
    const p = plan({ accepted: [{ updateInformer: 'net', uid: 'shared', accepted: true }] });
    expect(unacceptedRisks(p)).to.deep.equal([
      { updateInformer: 'db', uid: 'w1', scopeDigest: NO_SCOPE },
      { updateInformer: 'db', uid: 'shared', scopeDigest: NO_SCOPE },
    ]);
  });

  it('--accept UID: the uid under every informer that reported it, bound to its scope', () => {
    expect(insightsByUid(plan(), ['shared', 'w1', 'shared'])).to.deep.equal([
      { updateInformer: 'db', uid: 'shared', scopeDigest: NO_SCOPE },
      { updateInformer: 'net', uid: 'shared', scopeDigest: NO_SCOPE },
      { updateInformer: 'db', uid: 'w1', scopeDigest: NO_SCOPE },
    ]);
  });

  it('--accept UID: of a uid reported again with another scope, the live insight is accepted, not the resolved one', () => {
    const p = plan();
    p.status!.informers![0]!.insights!.push({ uid: 'w1', scope: POD_SCOPE, impact: { level: 'warning', summary: 'x' } });
    p.status!.informers![0]!.insights![0]!.remediation = { resolved: true };
    expect(insightsByUid(p, ['w1'])).to.deep.equal([{ updateInformer: 'db', uid: 'w1', scopeDigest: scopeDigest(POD_SCOPE) }]);
  });

  it('--accept-all: an acceptance for another scope does not count', () => {
    const p = plan({ accepted: [{ updateInformer: 'db', uid: 'w1', accepted: true, scopeDigest: scopeDigest(POD_SCOPE) }] });
    expect(unacceptedRisks(p).map((r) => r.uid)).to.deep.equal(['w1', 'shared', 'shared']);
  });

  it('--accept of an uid nobody reported is an error listing the reported ones', () => {
    expect(() => insightsByUid(plan(), ['nope']))
      .to.throw(CliError)
      .with.property('message', 'insight nope was not reported by any informer of UpdatePlan app-2.0.0 (reported: w1, i1, e1, shared)');
  });

  it('adds new acceptances, turns a refused one into accepted, and leaves the others as they are', () => {
    const current = [
      { updateInformer: 'db', uid: 'w1', accepted: false },
      { updateInformer: 'old', uid: 'gone', accepted: true },
    ];
    const { list, added } = withAccepted(current, [
      { updateInformer: 'db', uid: 'w1' },
      { updateInformer: 'db', uid: 'shared' },
      { updateInformer: 'old', uid: 'gone' },
    ]);
    expect(list).to.deep.equal([
      { updateInformer: 'db', uid: 'w1', accepted: true },
      { updateInformer: 'old', uid: 'gone', accepted: true },
      { updateInformer: 'db', uid: 'shared', accepted: true },
    ]);
    expect(added).to.deep.equal([
      { updateInformer: 'db', uid: 'w1' },
      { updateInformer: 'db', uid: 'shared' },
    ]);
    expect(current[0]!.accepted, 'the input is not edited').to.equal(false);
  });

  it('an acceptance without scope (written by hand) covers every scope; one with a scope only its own', () => {
    const current = [
      { updateInformer: 'db', uid: 'any', accepted: true },
      { updateInformer: 'db', uid: 'pod', accepted: true, scopeDigest: 'aaa' },
    ];
    const { added } = withAccepted(current, [
      { updateInformer: 'db', uid: 'any', scopeDigest: 'zzz' },
      { updateInformer: 'db', uid: 'pod', scopeDigest: 'bbb' },
    ]);
    expect(added).to.deep.equal([{ updateInformer: 'db', uid: 'pod', scopeDigest: 'bbb' }]);
  });

  it('accepting a uid again for another scope rebinds its entry: one entry per (informer, uid), as the webhook wants', () => {
    const { list } = withAccepted(
      [{ updateInformer: 'db', uid: 'pod', accepted: true, scopeDigest: 'aaa' }],
      [{ updateInformer: 'db', uid: 'pod', scopeDigest: 'bbb' }],
    );
    expect(list).to.deep.equal([{ updateInformer: 'db', uid: 'pod', accepted: true, scopeDigest: 'bbb' }]);
  });
});
