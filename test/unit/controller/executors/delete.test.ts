// How Delete reads the objects it removes.
import { expect } from 'chai';
import { deletionRef, deletionState } from '../../../../controller/executors/delete.ts';
import type { KubeResource } from '../../../../shared/kube/client.ts';

const cm = (metadata: Partial<KubeResource['metadata']> = {}): KubeResource => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', ...metadata },
});

describe('controller/executors/delete', () => {
  describe('deletionState', () => {
    it('an object that reads as 404 is gone', () => {
      expect(deletionState(undefined)).to.equal('gone');
    });
    it('an object with a deletionTimestamp is being deleted (not deleted again)', () => {
      expect(deletionState(cm({ deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['foregroundDeletion'] }))).to.equal('deleting');
    });
    it('an object without one is present', () => {
      expect(deletionState(cm())).to.equal('present');
    });
  });

  describe('deletionRef', () => {
    it("addresses an object without a namespace in the Instance's", () => {
      expect(deletionRef(cm(), 'team-a')).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', namespace: 'team-a' });
    });
    it('keeps a namespace the template names', () => {
      expect(deletionRef(cm({ namespace: 'other' }), 'team-a').namespace).to.equal('other');
    });
  });
});
