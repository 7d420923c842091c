// SubjectAccessReviews: the review sent for a subject and attributes, what its status
// means, that a failed or late review is "unknown" (never a yes), and the optional cache —
// answers kept for their TTL, bounded in number, unknown never kept.
import { expect } from 'chai';
import { KubeApiError, type KubeClient, type KubeRequest } from '../../../../shared/kube/client.ts';
import {
  answerOf,
  subjectAccessReview,
  subjectAccessReviewer,
  type AccessAnswer,
  type AccessAttributes,
} from '../../../../shared/kube/access.ts';

/** A client whose `request` answers each review with `answer(body)`; every request is recorded. */
function fakeKube(answer: (req: KubeRequest) => Promise<unknown>): { kube: KubeClient; sent: KubeRequest[] } {
  const sent: KubeRequest[] = [];
  const kube = {
    request: async (req: KubeRequest) => {
      sent.push(req);
      return answer(req);
    },
  } as unknown as KubeClient;
  return { kube, sent };
}

const IMPERSONATE: AccessAttributes = { verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace: 'shop', name: 'strong' };
const ALICE = { user: 'alice', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['x'] } };

describe('shared/kube/access: SubjectAccessReviews', () => {
  it('sends the subject (user, uid, groups, extra) and the resource attributes as a SubjectAccessReview', () => {
    expect(subjectAccessReview(ALICE, IMPERSONATE)).to.deep.equal({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: 'alice',
        uid: 'u-1',
        groups: ['devs', 'system:authenticated'],
        extra: { scopes: ['x'] },
        resourceAttributes: { verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace: 'shop', name: 'strong' },
      },
    });
    expect(
      subjectAccessReview({ user: 'bob' }, { verb: 'create', group: 'authorization.k8s.io', resource: 'subjectaccessreviews' }),
    ).to.deep.equal({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: 'bob',
        groups: [],
        resourceAttributes: { verb: 'create', group: 'authorization.k8s.io', resource: 'subjectaccessreviews' },
      },
    });
  });

  describe('what a review status means', () => {
    const rows: [string, Parameters<typeof answerOf>[0], AccessAnswer][] = [
      [
        'allowed is allowed, with the authorizer’s reason',
        { allowed: true, reason: 'RBAC: allowed by RoleBinding "edit"' },
        { kind: 'allowed', reason: 'RBAC: allowed by RoleBinding "edit"' },
      ],
      ['denied is denied', { allowed: false, denied: true, reason: 'no' }, { kind: 'denied', reason: 'no' }],
      ['no opinion from any authorizer is denied', { allowed: false }, { kind: 'denied' }],
      [
        'an evaluation error without allowed is denied, the error as its reason',
        { allowed: false, evaluationError: 'role "x" not found' },
        { kind: 'denied', reason: 'role "x" not found' },
      ],
      ['an evaluation error does not take away an allowed', { allowed: true, evaluationError: 'role "x" not found' }, { kind: 'allowed' }],
      ['a review without status is denied', undefined, { kind: 'denied' }],
    ];
    for (const [says, status, answer] of rows) it(says, () => expect(answerOf(status)).to.deep.equal(answer));
  });

  it('posts the review with the reviewer’s timeout and answers from its status', async () => {
    const { kube, sent } = fakeKube(async () => ({ status: { allowed: true } }));
    const answer = await subjectAccessReviewer(kube, { timeoutMs: 2500 }).canI(ALICE, IMPERSONATE);
    expect(answer).to.deep.equal({ kind: 'allowed' });
    expect(sent.map((r) => [r.method, r.path, r.timeoutMs])).to.deep.equal([
      ['POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', 2500],
    ]);
    expect(sent[0]!.body).to.deep.equal(subjectAccessReview(ALICE, IMPERSONATE));
  });

  it('answers unknown, with why, when the review fails or gets no answer in time — never throws', async () => {
    const rows: [Error, string][] = [
      [
        new KubeApiError(0, 'NetworkError', 'POST /apis/authorization.k8s.io/v1/subjectaccessreviews: no answer within 2500 ms'),
        'no answer within 2500 ms',
      ],
      [
        new KubeApiError(403, 'Forbidden', 'x', { kind: 'Status', message: 'cannot create resource "subjectaccessreviews"' }),
        'cannot create resource "subjectaccessreviews"',
      ],
    ];
    for (const [error, says] of rows) {
      const { kube } = fakeKube(async () => Promise.reject(error));
      const answer = await subjectAccessReviewer(kube, { timeoutMs: 2500 }).canI(ALICE, IMPERSONATE);
      expect(answer.kind).to.equal('unknown');
      expect(answer.reason).to.include('SubjectAccessReview failed').and.to.include(says);
    }
  });

  it('without a cache, asks every time (a right taken away counts at once)', async () => {
    let allowed = true;
    const { kube, sent } = fakeKube(async () => ({ status: { allowed } }));
    const reviewer = subjectAccessReviewer(kube, { timeoutMs: 1000 });
    expect((await reviewer.canI(ALICE, IMPERSONATE)).kind).to.equal('allowed');
    allowed = false;
    expect((await reviewer.canI(ALICE, IMPERSONATE)).kind).to.equal('denied');
    expect(sent).to.have.length(2);
  });

  describe('with a cache', () => {
    let clock = 0;
    const setup = (maxEntries = 10) => {
      const f = fakeKube(async (req) => ({
        status: { allowed: (req.body as { spec: { resourceAttributes: { name?: string } } }).spec.resourceAttributes.name !== 'denied' },
      }));
      return { ...f, reviewer: subjectAccessReviewer(f.kube, { timeoutMs: 1000, cache: { ttlMs: 10_000, maxEntries }, now: () => clock }) };
    };
    beforeEach(() => (clock = 0));

    it('answers the same question again from memory within the TTL, and asks again after it', async () => {
      const { reviewer, sent } = setup();
      await reviewer.canI(ALICE, IMPERSONATE);
      clock = 9_999;
      await reviewer.canI(ALICE, IMPERSONATE);
      expect(sent).to.have.length(1);
      clock = 10_000;
      await reviewer.canI(ALICE, IMPERSONATE);
      expect(sent).to.have.length(2);
    });

    it('keeps answers apart by subject and attributes, but not by the order of groups or extra keys', async () => {
      const { reviewer, sent } = setup();
      await reviewer.canI(ALICE, IMPERSONATE);
      await reviewer.canI({ ...ALICE, groups: ['system:authenticated', 'devs'] }, IMPERSONATE);
      expect(sent).to.have.length(1);
      await reviewer.canI({ ...ALICE, user: 'bob' }, IMPERSONATE);
      await reviewer.canI({ ...ALICE, groups: ['devs'] }, IMPERSONATE);
      await reviewer.canI(ALICE, { ...IMPERSONATE, name: 'other' });
      await reviewer.canI(ALICE, { ...IMPERSONATE, namespace: 'other' });
      await reviewer.canI(ALICE, { ...IMPERSONATE, verb: 'get' });
      expect(sent).to.have.length(6);
    });

    it('keeps only allowed answers: a denial or an unknown answer is asked again, so a right granted after a refusal counts at once', async () => {
      let answer: 'fail' | 'denied' | 'allowed' = 'fail';
      const f = fakeKube(async () =>
        answer === 'fail' ? Promise.reject(new KubeApiError(0, 'NetworkError', 'down')) : { status: { allowed: answer === 'allowed' } },
      );
      const reviewer = subjectAccessReviewer(f.kube, { timeoutMs: 1000, cache: { ttlMs: 10_000, maxEntries: 10 }, now: () => clock });
      expect((await reviewer.canI(ALICE, IMPERSONATE)).kind).to.equal('unknown');
      answer = 'denied';
      expect((await reviewer.canI(ALICE, IMPERSONATE)).kind).to.equal('denied');
      // Granted a moment later (well within the TTL): the next question sees it.
      answer = 'allowed';
      clock = 1;
      expect((await reviewer.canI(ALICE, IMPERSONATE)).kind).to.equal('allowed');
      // Taken away again: the allowed answer is kept until the TTL ends.
      answer = 'denied';
      clock = 9_999;
      expect((await reviewer.canI(ALICE, IMPERSONATE)).kind).to.equal('allowed');
      clock = 10_001;
      expect((await reviewer.canI(ALICE, IMPERSONATE)).kind).to.equal('denied');
      expect(f.sent).to.have.length(4);
    });

    it('holds at most maxEntries answers, dropping the oldest first', async () => {
      const { reviewer, sent } = setup(2);
      for (const name of ['a', 'b', 'c']) await reviewer.canI(ALICE, { ...IMPERSONATE, name });
      expect(sent).to.have.length(3);
      await reviewer.canI(ALICE, { ...IMPERSONATE, name: 'c' });
      await reviewer.canI(ALICE, { ...IMPERSONATE, name: 'b' });
      expect(sent).to.have.length(3);
      await reviewer.canI(ALICE, { ...IMPERSONATE, name: 'a' });
      expect(sent).to.have.length(4);
    });
  });
});
