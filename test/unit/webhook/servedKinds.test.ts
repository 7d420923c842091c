// Discovery for the served-kinds check: what it asks the API server and how long it keeps it.
import { expect } from 'chai';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { servedKindsLookup } from '../../../webhook/servedKinds.ts';

function fakeDiscovery() {
  const asked: string[] = [];
  const docs: Record<string, unknown> = {
    '/api': { versions: ['v1'] },
    '/apis': { groups: [{ name: 'policy', versions: [{ groupVersion: 'policy/v1' }] }] },
    '/api/v1': {
      resources: [
        { name: 'configmaps', kind: 'ConfigMap' },
        { name: 'pods/log', kind: 'Pod' },
      ],
    },
    '/apis/policy/v1': {
      resources: [
        { name: 'poddisruptionbudgets', kind: 'PodDisruptionBudget' },
        { name: 'poddisruptionbudgets/status', kind: 'PodDisruptionBudget' },
      ],
    },
  };
  const kube = {
    request: async ({ path }: { path: string }) => {
      asked.push(path);
      if (!(path in docs)) throw new Error(`unexpected ${path}`);
      return docs[path];
    },
  } as unknown as Pick<KubeClient, 'request'>;
  return { kube, asked };
}

describe('webhook/servedKinds', () => {
  it('answers from /api, /apis and the group versions: policy/v1beta1 is not served, policy/v1 is', async () => {
    const { kube } = fakeDiscovery();
    const served = servedKindsLookup(kube);
    expect(await served('policy/v1beta1', 'PodDisruptionBudget')).to.deep.equal({
      served: false,
      groupServed: true,
      servedIn: ['policy/v1'],
    });
    expect(await served('policy/v1', 'PodDisruptionBudget')).to.deep.equal({ served: true, groupServed: true, servedIn: ['policy/v1'] });
    expect(await served('batch/v1', 'Job')).to.deep.equal({ served: false, groupServed: false, servedIn: [] });
  });

  it('reads a subresource as no kind of its own', async () => {
    const { kube } = fakeDiscovery();
    expect((await servedKindsLookup(kube)('v1', 'Pod')).served).to.equal(false);
  });

  it('asks each document once within the TTL, and again after it', async () => {
    const { kube, asked } = fakeDiscovery();
    let now = 0;
    const served = servedKindsLookup(kube, { ttlMs: 30_000, now: () => now });
    await Promise.all([served('policy/v1', 'PodDisruptionBudget'), served('policy/v1beta1', 'PodDisruptionBudget')]);
    now = 29_999;
    await served('policy/v1', 'PodDisruptionBudget');
    expect(asked).to.deep.equal(['/api', '/apis', '/apis/policy/v1']);
    now = 30_000;
    await served('policy/v1', 'PodDisruptionBudget');
    expect(asked).to.deep.equal(['/api', '/apis', '/apis/policy/v1', '/api', '/apis', '/apis/policy/v1']);
  });
});
