// The I/O half of the UpdatePlan webhook, over in-memory lookups: what it looks up for which
// write. A label change must cost no API call at all (a consistent LIST right after another
// kind was written waits for the apiserver's watch cache: ~95 ms measured on the bench).
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { UpdatePlan } from '../../../shared/api/schema.ts';
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
    object: object,
    oldObject: oldObject,
    dryRun: false,
  };
}

describe('webhook handlers: UpdatePlan lookups', () => {
  it('judges an UPDATE that accepts nothing new from the request alone, and a CREATE against the namespace', async () => {
    const existing = plan('to-2');
    const lookups = memoryLookups({ updatePlans: [existing] }, () => NOW);
    const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups, now: () => NOW });
    const validate = routes[ROUTES.validateUpdatePlans]!;

    const relabel = await validate.handle(request('UPDATE', plan('to-2', { team: 'a' }), existing));
    expect(relabel.allowed).to.equal(true);
    expect(lookups.calls).to.deep.equal({});

    const duplicate = await validate.handle(request('CREATE', plan('again'), null));
    expect(duplicate.allowed).to.equal(false);
    expect(lookups.calls.listUpdatePlans).to.equal(1);
  });
});
