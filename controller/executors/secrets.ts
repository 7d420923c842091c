// Reading a run's secret parameters (issue 35; shared/params/secrets.ts): each Secret the
// run names, read as the plan's ServiceAccount — the tenant's rights bound what a plan may
// read, as they bound what it writes; the controller's own identity never reads a Secret.
// What fails is said by reference (parameter, Secret, key), never by content.
import type { Instance, SecretKeyRef } from '../../shared/api/schema.ts';
import { decodeSecretValue, type ResolvedSecret } from '../../shared/params/secrets.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { isObservation, observationForError, planIdentity, type Observation } from './context.ts';
import { LOCKED_DOWN, type TenancyPolicy } from './tenancy.ts';

export type SecretsRead = { ok: true; secrets: ResolvedSecret[] } | { ok: false; outcome: Observation };

export type SecretReader = (instance: Instance, refs: readonly [string, SecretKeyRef][], signal?: AbortSignal) => Promise<SecretsRead>;

export function secretReader(deps: { kube: KubeClient; tenancy?: TenancyPolicy }): SecretReader {
  return async (instance, refs, signal) => {
    if (refs.length === 0) return { ok: true, secrets: [] };
    const identity = await planIdentity(deps.kube, instance, deps.tenancy ?? LOCKED_DOWN, signal);
    if (isObservation(identity)) return { ok: false, outcome: identity };
    const namespace = instance.metadata.namespace ?? '';
    type Read = { found?: { data?: Record<string, string> } } | { failed: Observation };
    const bySecret = new Map<string, Promise<Read>>();
    const secrets: ResolvedSecret[] = [];
    for (const [parameter, ref] of refs) {
      const doing = `read parameter ${parameter} from Secret ${namespace}/${ref.name} (key ${ref.key})`;
      let pending = bySecret.get(ref.name);
      if (!pending) {
        pending = identity.kube
          .get<{ data?: Record<string, string> }>({ apiVersion: 'v1', kind: 'Secret', namespace, name: ref.name }, signal)
          .then(
            (found): Read => ({ found }),
            (err: unknown): Read => ({ failed: observationForError(err, doing, identity, instance.spec.operatorVersion.name) }),
          );
        bySecret.set(ref.name, pending);
      }
      const read = await pending;
      if ('failed' in read) return { ok: false, outcome: read.failed };
      const secret = read.found;
      if (secret === undefined) {
        return {
          ok: false,
          outcome: {
            kind: 'fatalError',
            message: `${doing}: Secret "${ref.name}" does not exist in namespace "${namespace}"; create it (kubectl -n ${namespace} create secret generic ${ref.name} --from-literal=${ref.key}=…) and trigger the plan again`,
          },
        };
      }
      const decoded = decodeSecretValue(secret, ref);
      if (!decoded.ok) return { ok: false, outcome: { kind: 'fatalError', message: `${doing}: ${decoded.why}` } };
      secrets.push({ parameter, ref, value: decoded.value });
    }
    return { ok: true, secrets };
  };
}
