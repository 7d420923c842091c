// The offline table of API versions Kubernetes removed: each row a sentence of the
// deprecated API migration guide.
import { expect } from 'chai';
import { describeRemovedApi, removedApi } from '../../../../shared/api/removedApis.ts';

describe('shared/api/removedApis', () => {
  const rows: [string, string, string, string | undefined][] = [
    ['extensions/v1beta1', 'Deployment', '1.16', 'apps/v1'],
    ['apps/v1beta2', 'StatefulSet', '1.16', 'apps/v1'],
    ['apps/v1beta1', 'Deployment', '1.16', 'apps/v1'],
    ['extensions/v1beta1', 'NetworkPolicy', '1.16', 'networking.k8s.io/v1'],
    ['extensions/v1beta1', 'Ingress', '1.22', 'networking.k8s.io/v1'],
    ['networking.k8s.io/v1beta1', 'Ingress', '1.22', 'networking.k8s.io/v1'],
    ['rbac.authorization.k8s.io/v1beta1', 'ClusterRoleBinding', '1.22', 'rbac.authorization.k8s.io/v1'],
    ['apiextensions.k8s.io/v1beta1', 'CustomResourceDefinition', '1.22', 'apiextensions.k8s.io/v1'],
    ['admissionregistration.k8s.io/v1beta1', 'ValidatingWebhookConfiguration', '1.22', 'admissionregistration.k8s.io/v1'],
    ['batch/v1beta1', 'CronJob', '1.25', 'batch/v1'],
    ['policy/v1beta1', 'PodDisruptionBudget', '1.25', 'policy/v1'],
    ['policy/v1beta1', 'PodSecurityPolicy', '1.25', undefined],
    ['autoscaling/v2beta1', 'HorizontalPodAutoscaler', '1.25', 'autoscaling/v2'],
    ['autoscaling/v2beta2', 'HorizontalPodAutoscaler', '1.26', 'autoscaling/v2'],
    ['flowcontrol.apiserver.k8s.io/v1beta1', 'FlowSchema', '1.26', 'flowcontrol.apiserver.k8s.io/v1'],
    ['storage.k8s.io/v1beta1', 'CSIStorageCapacity', '1.27', 'storage.k8s.io/v1'],
    ['flowcontrol.apiserver.k8s.io/v1beta2', 'PriorityLevelConfiguration', '1.29', 'flowcontrol.apiserver.k8s.io/v1'],
    ['flowcontrol.apiserver.k8s.io/v1beta3', 'FlowSchema', '1.32', 'flowcontrol.apiserver.k8s.io/v1'],
  ];
  for (const [apiVersion, kind, removedIn, replacement] of rows) {
    it(`${kind} ${apiVersion} was removed in ${removedIn}${replacement ? `; ${replacement} replaces it` : ', with no replacement kind'}`, () => {
      const found = removedApi(apiVersion, kind);
      expect(found?.removedIn).to.equal(removedIn);
      expect(found?.replacement).to.equal(replacement);
    });
  }
  for (const [apiVersion, kind] of [
    ['policy/v1', 'PodDisruptionBudget'],
    ['apps/v1', 'Deployment'],
    ['storage.k8s.io/v1beta1', 'StorageClassX'],
    ['example.com/v1beta1', 'Widget'],
  ]) {
    it(`knows nothing removed about ${kind} ${apiVersion}`, () => {
      expect(removedApi(apiVersion!, kind!)).to.equal(undefined);
    });
  }
  it('says it in one sentence, with the replacement', () => {
    expect(describeRemovedApi('policy/v1beta1', 'PodDisruptionBudget', removedApi('policy/v1beta1', 'PodDisruptionBudget')!)).to.equal(
      'policy/v1beta1 PodDisruptionBudget was removed in Kubernetes 1.25; use policy/v1',
    );
  });
});
