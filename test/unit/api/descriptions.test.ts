// `kubectl explain` is the first thing a Kubernetes user types to learn an API: every field
// of the CRDs carries a description, written once in shared/api/schema.ts.
import { expect } from 'chai';
import { ALL_KINDS, crdFor } from '../../../shared/api/crds.ts';

type Node = { description?: string; properties?: Record<string, Node>; items?: Node; additionalProperties?: Node | boolean };

/** Paths of properties without a description (list items and map values count as their field). */
export function undescribed(node: Node, path = ''): string[] {
  const out: string[] = [];
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const at = `${path}.${name}`;
    // The apiserver allows nothing but type on the root metadata and documents it itself.
    if (at === '.metadata') continue;
    if (!child.description) out.push(at);
    out.push(...undescribed(child, at));
  }
  if (node.items) out.push(...undescribed(node.items, `${path}[]`));
  if (node.additionalProperties && typeof node.additionalProperties === 'object')
    out.push(...undescribed(node.additionalProperties, `${path}{}`));
  return out;
}

describe('CRD field descriptions (kubectl explain)', function () {
  for (const kind of ALL_KINDS) {
    it(`${kind}: every field says what it is`, function () {
      const schema = (crdFor(kind).spec as { versions: { schema: { openAPIV3Schema: Node } }[] }).versions[0]!.schema.openAPIV3Schema;
      expect(schema.description, 'the kind itself').to.be.a('string').that.is.not.empty;
      expect(undescribed(schema)).to.deep.equal([]);
    });
  }
});
