// KUDO's run-time template variables — where in a run a template is rendered (.PlanName,
// .PhaseName, .StepName, .RunID), the Pipe objects of the plan (.Pipes.KEY), and what the
// blueprint calls itself (.OperatorName, .AppVersion) — built once for the controller's
// executors and the webhook's preflight, so both render with the same values.
import type { RenderVars } from '../template/render.ts';

export interface RunIdentity {
  operatorName: string;
  appVersion?: string;
  runId: string;
}

export interface RunAt extends Partial<RunIdentity> {
  plan: string;
  phase?: string;
  step?: string;
  /** .Pipes: key → object name (pipe.ts planPipes). */
  pipes?: Readonly<Record<string, string>>;
}

type RunVars = Pick<RenderVars, 'operatorName' | 'appVersion' | 'planName' | 'phaseName' | 'stepName' | 'runId' | 'pipes'>;

/** The run-time part of RenderVars; .OperatorName falls back to spec.operatorName when the caller has no identity. */
export function runVars(ovSpec: object, at: RunAt): RunVars {
  // spec.operatorName and spec.appVersion are optional fields of newer schemas.
  const spec = ovSpec as { operatorName?: unknown; appVersion?: unknown };
  const operatorName = at.operatorName ?? (typeof spec.operatorName === 'string' ? spec.operatorName : undefined);
  const appVersion = at.appVersion ?? (typeof spec.appVersion === 'string' ? spec.appVersion : undefined);
  return {
    planName: at.plan,
    ...(at.phase === undefined ? {} : { phaseName: at.phase }),
    ...(at.step === undefined ? {} : { stepName: at.step }),
    ...(at.runId === undefined ? {} : { runId: at.runId }),
    pipes: at.pipes ?? {},
    ...(operatorName === undefined ? {} : { operatorName }),
    ...(appVersion === undefined ? {} : { appVersion }),
  };
}
