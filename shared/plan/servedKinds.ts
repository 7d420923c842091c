// Kinds the cluster serves: every object a run will apply must name an apiVersion and kind
// the API server serves, or the run fails at that object ("the server has no resource of
// kind PodDisruptionBudget in policy/v1beta1"). The apply-time preflight refuses such a
// write instead, naming the template, the kind and the versions the server does serve.
// Pure: discovery's answers are passed in (webhook/servedKinds.ts asks, cached briefly).
//
// A kind of a group the server does not serve at all may be a custom resource whose CRD is
// not installed yet (an operator's own CRD, installed by hand or by an earlier plan): only
// a warning. A kind the plan's own templates define with a CustomResourceDefinition is
// never judged — it will be served by the time the plan reaches it.
import { describeRemovedApi, removedApi } from '../api/removedApis.ts';
import type { PlannedTask } from './preflight.ts';

/** What discovery says of one (apiVersion, kind). */
export interface KindServing {
  /** The server serves the kind in this apiVersion. */
  served: boolean;
  /** The server serves some version of the apiVersion's group. */
  groupServed: boolean;
  /** The apiVersions (group/version) of the same group that serve the kind. */
  servedIn: string[];
}

export type KindServingLookup = (apiVersion: string, kind: string) => KindServing | undefined;

export interface KindNotServed {
  task: string;
  template?: string;
  apiVersion: string;
  kind: string;
  /** Refuse (the group is served, or the version is one Kubernetes removed) or only warn (a group not installed). */
  severity: 'error' | 'warning';
  message: string;
}

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** "group/kind" pairs that CustomResourceDefinitions among `tasks`' objects define, with their versions. */
function definedByPlan(tasks: readonly PlannedTask[]): Set<string> {
  const out = new Set<string>();
  for (const t of tasks) {
    for (const { object } of t.objects) {
      if (object.kind !== 'CustomResourceDefinition' || !object.apiVersion.startsWith('apiextensions.k8s.io/')) continue;
      const spec = (object.spec ?? {}) as {
        group?: unknown;
        names?: { kind?: unknown };
        versions?: { name?: unknown }[];
        version?: unknown;
      };
      if (typeof spec.group !== 'string' || typeof spec.names?.kind !== 'string') continue;
      const versions = [...(spec.versions ?? []).map((v) => v.name), spec.version].filter((v): v is string => typeof v === 'string');
      for (const v of versions) out.add(`${spec.group}/${v}\u0000${spec.names.kind}`);
    }
  }
  return out;
}

/** The objects of `tasks` (each apiVersion/kind once per template) the server does not serve. */
export function kindsNotServed(tasks: readonly PlannedTask[], lookup: KindServingLookup): KindNotServed[] {
  const defined = definedByPlan(tasks);
  const out: KindNotServed[] = [];
  const seen = new Set<string>();
  for (const t of tasks) {
    const objects = [
      ...t.objects.map((o) => ({ template: o.template, apiVersion: o.object.apiVersion, kind: o.object.kind })),
      ...(t.waitFor ? [{ template: undefined, apiVersion: t.waitFor.apiVersion, kind: t.waitFor.kind }] : []),
    ];
    for (const o of objects) {
      const key = `${o.apiVersion}\u0000${o.kind}`;
      if (defined.has(key) || seen.has(`${o.template ?? ''}\u0000${key}`)) continue;
      seen.add(`${o.template ?? ''}\u0000${key}`);
      const answer = lookup(o.apiVersion, o.kind);
      if (!answer || answer.served) continue;
      const removed = removedApi(o.apiVersion, o.kind);
      const where = o.template ? `template ${o.template}` : `task ${t.task}`;
      const what = `${where}: ${o.kind} ${o.apiVersion} is not served by this cluster`;
      const serves =
        answer.servedIn.length > 0
          ? `; it serves ${answer.servedIn.join(', ')}`
          : answer.groupServed
            ? `; it serves no ${o.kind} in group ${groupOf(o.apiVersion) || 'core'}`
            : '';
      const history = removed ? ` (${describeRemovedApi(o.apiVersion, o.kind, removed)})` : '';
      const severity = answer.groupServed || answer.servedIn.length > 0 || removed ? 'error' : 'warning';
      const notInstalled = severity === 'warning' ? ` (group ${groupOf(o.apiVersion)} is not installed yet?)` : '';
      out.push({
        task: t.task,
        ...(o.template ? { template: o.template } : {}),
        apiVersion: o.apiVersion,
        kind: o.kind,
        severity,
        message: `${what}${serves}${history}${notInstalled}`,
      });
    }
  }
  return out;
}
