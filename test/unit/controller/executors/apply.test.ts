// How Apply prepares an object before the server-side apply, and how health becomes an observation.
import { LABEL_INSTANCE, LABEL_PLAN } from '../../../../shared/api/names.ts';
import { expect } from 'chai';
import { observationForHealth, prepareObject } from '../../../../controller/executors/apply.ts';
import type { KubeResource } from '../../../../shared/kube/client.ts';

const instance = {
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name: 'shop', namespace: 'team-a', uid: 'uid-1' },
};
const ownerRef = {
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'Instance',
  name: 'shop',
  uid: 'uid-1',
  controller: true,
  blockOwnerDeletion: true,
};

const deployment = (metadata: Partial<KubeResource['metadata']> = {}): KubeResource => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', ...metadata },
  spec: { replicas: 3 },
});

describe('controller/executors/apply', () => {
  describe('prepareObject', () => {
    it("puts a namespaced object without a namespace into the Instance's, labelled and owned by the Instance", () => {
      expect(prepareObject(deployment(), { instance, plan: 'deploy', namespaced: true })).to.deep.equal({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: {
          name: 'web',
          namespace: 'team-a',
          labels: { [LABEL_INSTANCE]: 'shop', [LABEL_PLAN]: 'deploy' },
          ownerReferences: [ownerRef],
        },
        spec: { replicas: 3 },
      });
    });

    it('keeps the labels the template set, and overrides its own two', () => {
      const out = prepareObject(deployment({ labels: { app: 'web', [LABEL_PLAN]: 'spoofed' } }), {
        instance,
        plan: 'update',
        namespaced: true,
      });
      expect(out.metadata.labels).to.deep.equal({ app: 'web', [LABEL_INSTANCE]: 'shop', [LABEL_PLAN]: 'update' });
    });

    it('does not own an object in another namespace (owner references cannot cross namespaces)', () => {
      const out = prepareObject(deployment({ namespace: 'elsewhere' }), { instance, plan: 'deploy', namespaced: true });
      expect(out.metadata.namespace).to.equal('elsewhere');
      expect(out.metadata).not.to.have.property('ownerReferences');
      expect(out.metadata.labels).to.deep.equal({ [LABEL_INSTANCE]: 'shop', [LABEL_PLAN]: 'deploy' });
    });

    it('drops the namespace of a cluster-scoped object and does not own it', () => {
      const role: KubeResource = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'reader', namespace: 'team-a' },
        rules: [],
      };
      const out = prepareObject(role, { instance, plan: 'deploy', namespaced: false });
      expect(out.metadata).to.deep.equal({ name: 'reader', labels: { [LABEL_INSTANCE]: 'shop', [LABEL_PLAN]: 'deploy' } });
    });

    it('keeps other owners and does not add the Instance twice', () => {
      const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'uid-x' };
      const out = prepareObject(deployment({ ownerReferences: [other, ownerRef] }), { instance, plan: 'deploy', namespaced: true });
      expect(out.metadata.ownerReferences).to.deep.equal([other, ownerRef]);
    });

    it('adds no owner reference when the Instance has no uid yet', () => {
      const out = prepareObject(deployment(), {
        instance: { ...instance, metadata: { name: 'shop', namespace: 'team-a' } },
        plan: 'deploy',
        namespaced: true,
      });
      expect(out.metadata).not.to.have.property('ownerReferences');
    });

    it('leaves the rendered object untouched', () => {
      const obj = deployment({ labels: { app: 'web' } });
      const before = structuredClone(obj);
      prepareObject(obj, { instance, plan: 'deploy', namespaced: true });
      expect(obj).to.deep.equal(before);
    });
  });

  describe('observationForHealth', () => {
    it('current is done', () => {
      expect(observationForHealth({ status: 'current', message: 'deployment web: 3 of 3 replicas available' })).to.deep.equal({
        kind: 'done',
        message: 'deployment web: 3 of 3 replicas available',
      });
    });
    it('in progress is in progress', () => {
      expect(observationForHealth({ status: 'inProgress', message: 'deployment web: 1 of 3 updated replicas available' })).to.deep.equal({
        kind: 'inProgress',
        message: 'deployment web: 1 of 3 updated replicas available',
      });
    });
    it('failed is fatal', () => {
      expect(observationForHealth({ status: 'failed', message: 'job migrate: failed' })).to.deep.equal({
        kind: 'fatalError',
        message: 'job migrate: failed',
      });
    });
  });
});
