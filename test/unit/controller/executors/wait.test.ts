// The Wait task: done when the condition holds, fatal after its timeout, in progress between.
import { expect } from 'chai';
import { waitObservation, type WaitInput } from '../../../../controller/executors/wait.ts';
import { resolveWaitRef } from '../../../../shared/plan/waitRef.ts';
import type { KubeResource } from '../../../../shared/kube/client.ts';

const STARTED = '2026-03-01T12:00:00Z';
const after = (seconds: number) => new Date(Date.parse(STARTED) + seconds * 1000).toISOString();
const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'team-a' };
const withConditions = (...conditions: Record<string, string>[]): KubeResource => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team-a' },
  status: { conditions },
});

function input(object: KubeResource | undefined, elapsed: number, extra: Partial<WaitInput> = {}): WaitInput {
  return {
    ref,
    condition: { type: 'Available', status: 'True' },
    object,
    timeoutSeconds: 60,
    taskStartedAt: STARTED,
    now: after(elapsed),
    ...extra,
  };
}

describe('controller/executors/wait', () => {
  describe('waitObservation', () => {
    it('is done when the object has the condition with the wanted status', () => {
      expect(waitObservation(input(withConditions({ type: 'Available', status: 'True' }), 5))).to.deep.equal({
        kind: 'done',
        message: 'deployment web: Available=True',
      });
    });
    it('is done even after the timeout, if the condition holds now', () => {
      expect(waitObservation(input(withConditions({ type: 'Available', status: 'True' }), 600)).kind).to.equal('done');
    });
    it('waits for a wanted status False as well', () => {
      const obs = waitObservation(
        input(withConditions({ type: 'Progressing', status: 'False' }), 1, { condition: { type: 'Progressing', status: 'False' } }),
      );
      expect(obs.kind).to.equal('done');
    });
    it('is in progress while the condition has another status, saying what it is now', () => {
      expect(
        waitObservation(
          input(withConditions({ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: '1 of 3' }), 5),
        ),
      ).to.deep.equal({
        kind: 'inProgress',
        message: 'waiting for deployment web to have condition Available=True (now: Available=False (MinimumReplicasUnavailable: 1 of 3))',
      });
    });
    it('is in progress while the object lacks the condition', () => {
      expect(waitObservation(input(withConditions(), 5)).message).to.equal(
        'waiting for deployment web to have condition Available=True (now: no Available condition)',
      );
    });
    it('is in progress while the object does not exist', () => {
      expect(waitObservation(input(undefined, 5)).message).to.equal(
        'waiting for deployment web to have condition Available=True (now: object not found)',
      );
    });
    it('is fatal once timeoutSeconds have passed since the task started, naming the object and the condition', () => {
      expect(waitObservation(input(withConditions({ type: 'Available', status: 'False' }), 60))).to.deep.equal({
        kind: 'fatalError',
        message: 'timed out after 60s waiting for deployment web to have condition Available=True (last seen: Available=False)',
      });
    });
    it('is fatal after the timeout when the object never appeared', () => {
      expect(waitObservation(input(undefined, 61)).message).to.equal(
        'timed out after 60s waiting for deployment web to have condition Available=True (last seen: object not found)',
      );
    });
    it('waits indefinitely without timeoutSeconds', () => {
      expect(waitObservation(input(undefined, 86_400, { timeoutSeconds: undefined })).kind).to.equal('inProgress');
    });
  });

  describe('resolveWaitRef', () => {
    const vars = { params: { DB: 'pg' }, name: 'shop', namespace: 'team-a', operatorVersion: '1.0.0' };
    it("renders template values in the object's fields and defaults the namespace to the Instance's", () => {
      const r = resolveWaitRef(
        'w',
        { object: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: '{{ .Name }}-{{ .Params.DB }}' }, condition: { type: 'Ready' } },
        vars,
      );
      expect(r).to.deep.equal({ ref: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'shop-pg', namespace: 'team-a' } });
    });
    it('refuses a spec without object or condition', () => {
      expect(resolveWaitRef('w', { object: { apiVersion: 'v1', kind: 'Pod', name: 'p' } }, vars)).to.deep.equal({
        error: 'wait task w: spec.object and spec.condition.type are required',
      });
    });
    it('names the field whose template fails', () => {
      const r = resolveWaitRef(
        'w',
        { object: { apiVersion: 'v1', kind: 'Pod', name: '{{ .Params.NOPE }}' }, condition: { type: 'Ready' } },
        vars,
      );
      expect(r).to.deep.equal({ error: 'wait task w spec.object.name: parameter NOPE is not set (line 1)' });
    });
  });
});
