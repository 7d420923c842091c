// The digest of what a run would apply, from the OperatorVersion and the Instance alone: the
// one function `kubectl planwarden plan preview`/`approve` and the controller (when a run
// waits for approval) call, so that what an approver saw and what the controller records
// are the same by construction. Secret parameters enter as their references, never values.
import type { InstanceSpec, OperatorVersion } from '../api/schema.ts';
import type { ParametersFrom } from '../params/secrets.ts';
import { renderIdentity } from '../blueprint/identity.ts';
import { parameterTypesOf } from '../template/render.ts';
import { preflightPlan, type PreflightResult } from './preflight.ts';
import { planDigest } from './preview.ts';
import { referenceRenderValues } from './triggers.ts';

export interface RunDigestInput {
  ov: OperatorVersion;
  instance: { name: string; namespace: string; spec: Pick<InstanceSpec, 'parameters' | 'parametersFrom'> };
  plan: string;
  /** A manual trigger's per-run values and references. */
  run?: { parameters?: Record<string, string>; parametersFrom?: ParametersFrom };
}

export interface RunDigest {
  digest: string;
  values: Record<string, string>;
  rendered: PreflightResult;
}

/** The run's render (values, tasks, problems) and its digest. */
export function runDigest(input: RunDigestInput): RunDigest {
  const { ov, instance, plan } = input;
  const values = referenceRenderValues(ov.spec, instance.spec, input.run);
  const rendered = preflightPlan({
    ov: ov.spec,
    plan,
    values,
    instance: { name: instance.name, namespace: instance.namespace },
    paramTypes: parameterTypesOf(ov.spec.parameters),
    identity: renderIdentity(ov),
  });
  const digest = planDigest({
    operatorVersion: { name: ov.metadata.name ?? '', uid: ov.metadata.uid, generation: ov.metadata.generation },
    plan,
    values,
    tasks: rendered.tasks,
  });
  return { digest, values, rendered };
}
