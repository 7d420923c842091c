// The tenancy setup of the suite's namespaces — the ServiceAccount plans act as, a Role and
// the RoleBinding, and the grant that lets planwarden's controller act as the namespace's
// ServiceAccounts, as the docs tell users to set them up — from test/support/plan-rights.yaml
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

/** The namespace plan-rights.yaml is written for. */
const TEMPLATE_NAMESPACE = 'demo';

/** A List (for `kubectl apply -f -`) with the suite's ServiceAccount, Role and RoleBinding in `namespace`. */
export function planRights(namespace: string, serviceAccount = 'planwarden-plans'): string {
  const text = readFileSync(join(PROJECT_ROOT, 'test', 'support', 'plan-rights.yaml'), 'utf8');
  const items = parseAllDocuments(text).map((d) => {
    const o = d.toJS() as Obj;
    o.metadata.namespace = namespace;
    if (o.kind === 'ServiceAccount') o.metadata.name = serviceAccount;
    // The plans' ServiceAccount moves with the namespace; planwarden's controller stays where it is.
    for (const s of o.subjects ?? []) if (s.namespace === TEMPLATE_NAMESPACE) Object.assign(s, { name: serviceAccount, namespace });
    return o;
  });
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}
