// The tenancy setup of the suite's namespaces — the ServiceAccount plans act as, a Role and
// the RoleBinding, as the docs tell users to set them up — from test/support/plan-rights.yaml
// (wide: many test blueprints share a namespace) moved to another namespace.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { PROJECT_ROOT } from '../controlplane/build.ts';

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

/** A List (for `kubectl apply -f -`) with the suite's ServiceAccount, Role and RoleBinding in `namespace`. */
export function planRights(namespace: string, serviceAccount = 'planwarden-plans'): string {
  const text = readFileSync(join(PROJECT_ROOT, 'test', 'support', 'plan-rights.yaml'), 'utf8');
  const items = parseAllDocuments(text).map((d) => {
    const o = d.toJS() as Obj;
    o.metadata.namespace = namespace;
    if (o.kind === 'ServiceAccount') o.metadata.name = serviceAccount;
    for (const s of o.subjects ?? []) Object.assign(s, { name: serviceAccount, namespace });
    return o;
  });
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}
