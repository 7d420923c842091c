// What a blueprint says about itself in templates: .OperatorName and .AppVersion (KUDO's
// operator.yaml name and appVersion). One function, so the webhook, the controller and the
// CLI render the same names.
import type { OperatorVersionSpec } from '../api/schema.ts';

/** The identity part of a template's variables (RenderVars.operatorName / .appVersion). */
export interface RenderIdentity {
  operatorName: string;
  appVersion: string;
}

/**
 * spec.operatorName, else metadata.name without a trailing `-<spec.version>` (kafka-1.2.0 →
 * kafka; a name without that suffix is the name itself); spec.appVersion, else "".
 */
export function renderIdentity(ov: {
  metadata: { name?: string };
  spec: Pick<OperatorVersionSpec, 'version' | 'operatorName' | 'appVersion'>;
}): RenderIdentity {
  const name = ov.metadata.name ?? '';
  const suffix = `-${ov.spec.version}`;
  const stripped = ov.spec.version && name.endsWith(suffix) && name.length > suffix.length ? name.slice(0, -suffix.length) : name;
  return { operatorName: ov.spec.operatorName ?? stripped, appVersion: ov.spec.appVersion ?? '' };
}

/** Where a render happens in a run: .PlanName, .PhaseName, .StepName, .RunID (unset ones are left out). */
export interface RunNames {
  planName?: string;
  phaseName?: string;
  stepName?: string;
  runId?: string;
}

/** `names` without its undefined fields, to spread into RenderVars. */
export function runNames(names: RunNames): RunNames {
  return Object.fromEntries(Object.entries(names).filter(([, v]) => v !== undefined));
}
