import { expect } from 'chai';
import type { UpdatePlan } from '../../../../shared/api/schema.ts';
import { duplicateStatus } from '../../../../controller/updates/worker.ts';

const NOW = '2026-11-26T12:00:00Z';
const plan = (name: string, created: string, status?: UpdatePlan['status']): UpdatePlan => ({
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'UpdatePlan',
  metadata: { name, namespace: 'shop', uid: `u-${name}`, creationTimestamp: created, generation: 2 },
  spec: { targetRelease: 'app-2.0.0' },
  ...(status ? { status } : {}),
});

describe('controller/updates: an UpdatePlan whose target an older one holds', function () {
  const holder = plan('first', '2026-11-26T11:00:00Z');
  const late = plan('second', '2026-11-26T11:00:01Z', {
    conditions: [
      { type: 'RisksAccepted', status: 'True', reason: 'AllAccepted', message: 'm', lastTransitionTime: '2026-11-26T11:00:02Z' },
    ],
  });
  const status = duplicateStatus(late, holder, NOW);
  const analyzed = status.conditions?.find((c) => c.type === 'Analyzed');

  it('is marked Analyzed=False with reason DuplicateTarget', () => {
    expect(analyzed).to.include({ status: 'False', reason: 'DuplicateTarget', lastTransitionTime: NOW });
  });
  it('names the holder, the target and what to do', () => {
    expect(analyzed?.message).to.contain('UpdatePlan "shop/first"');
    expect(analyzed?.message).to.contain('"app-2.0.0"');
    expect(analyzed?.message).to.contain('delete it and use that one');
  });
  it('keeps its other conditions and records the generation it judged', () => {
    expect(status.conditions?.find((c) => c.type === 'RisksAccepted')?.status).to.equal('True');
    expect(status.observedGeneration).to.equal(2);
  });
});
