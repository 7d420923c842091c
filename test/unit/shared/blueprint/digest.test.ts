import { expect } from 'chai';
import type { OperatorVersionSpec } from '../../../../shared/api/schema.ts';
import { blueprintDigest } from '../../../../shared/blueprint/digest.ts';
import { deepFreeze } from '../../../../shared/json.ts';

/** A spec as the API server would hold it, made fresh each call. */
function spec(image = 'nginx:1'): OperatorVersionSpec {
  return {
    tasks: [{ name: 'deploy', kind: 'Apply', spec: { resources: ['deploy.yaml'] } }],
    plans: {
      deploy: { strategy: 'serial', phases: [{ name: 'main', strategy: 'serial', steps: [{ name: 'apply', tasks: ['deploy'] }] }] },
    },
    templates: { 'deploy.yaml': `image: ${image}` },
  } as unknown as OperatorVersionSpec;
}

describe('blueprintDigest', function () {
  it('is the same for the same content, whatever the key order, and differs when it changes', function () {
    const a = spec();
    const b = Object.fromEntries(Object.entries(spec()).reverse()) as OperatorVersionSpec;
    expect(blueprintDigest(a)).to.equal(blueprintDigest(b));
    expect(blueprintDigest(a)).to.match(/^sha256:[0-9a-f]{16}$/);
    expect(blueprintDigest(spec('nginx:2'))).to.not.equal(blueprintDigest(a));
  });

  it('gives a deep-frozen spec (the webhook cache holds them so) the digest of its content', function () {
    const frozen = deepFreeze(spec());
    expect(blueprintDigest(frozen)).to.equal(blueprintDigest(spec()));
    expect(blueprintDigest(frozen), 'asked again').to.equal(blueprintDigest(spec()));
  });

  it('never keeps the digest of a spec that can still change: frozen on top, not inside', function () {
    const s = spec();
    Object.freeze(s);
    const before = blueprintDigest(s);
    (s.templates as Record<string, string>)['deploy.yaml'] = 'image: evil:1';
    expect(blueprintDigest(s)).to.not.equal(before);
    expect(blueprintDigest(s)).to.equal(blueprintDigest(spec('evil:1')));
  });

  it('never keeps the digest of a spec that is not frozen', function () {
    const s = spec();
    const before = blueprintDigest(s);
    (s.templates as Record<string, string>)['deploy.yaml'] = 'image: evil:1';
    expect(blueprintDigest(s)).to.not.equal(before);
  });
});
