// Secret parameters at apply time (issue 35; shared/params/secrets.ts). A parameter the
// OperatorVersion declares `secret: true` takes its value only from a Secret the Instance
// names; these rules refuse every other way of giving it, without ever quoting what was
// written. Judged when the part of the spec they read changes, or the OperatorVersion does
// (re-applying an unchanged spec always passes, as everywhere).
import type { InstanceSpec, OperatorVersionSpec } from '../../shared/api/schema.ts';
import { jsonEqual } from '../../shared/json.ts';
import { objectRef } from '../../shared/refusal.ts';
import { SECRET_PARAMETER_RULES } from '../../shared/params/secretRules.ts';
import { secretParameterNames } from '../../shared/params/secrets.ts';
import { plural } from '../../shared/text.ts';
import { allow, deny, type Verdict } from '../../shared/verdict.ts';
import type { InstanceAdmissionContext } from './instance.ts';

const keys = (m: Record<string, unknown> | undefined): string[] => Object.keys(m ?? {}).sort();

function fromForm(name: string, where = 'spec.parametersFrom'): string {
  return `${where}.${name}: {secretKeyRef: {name: <Secret>, key: <key>}} (e.g. \`kubectl create secret generic <Secret> --from-literal=<key>=…\`)`;
}

/** The spec parts these rules read, and whether this write changes them. */
function changed(ctx: InstanceAdmissionContext, pick: (s: InstanceSpec) => unknown): boolean {
  if (ctx.operation === 'CREATE') return true;
  const before = ctx.oldObject?.spec;
  if (before === undefined) return true;
  return before.operatorVersion.name !== ctx.object.spec.operatorVersion.name || !jsonEqual(pick(before), pick(ctx.object.spec));
}

export function secretParameters(ctx: InstanceAdmissionContext): Verdict {
  if (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE') return allow();
  const ov = ctx.operatorVersion?.spec;
  if (!ov) return allow();
  const spec = ctx.object.spec;
  const object = objectRef('Instance', ctx.object.metadata);
  const ovName = spec.operatorVersion.name;
  const secret = secretParameterNames(ov);

  const twice = changed(ctx, (s) => [s.parameters, s.parametersFrom])
    ? keys(spec.parametersFrom).filter((n) => Object.hasOwn(spec.parameters ?? {}, n))
    : [];
  if (twice.length > 0) {
    return deny({
      rule: SECRET_PARAMETER_RULES.twice,
      code: 422,
      reason: 'Invalid',
      object,
      refused: `${plural(twice.length, 'parameter', 'parameters')} ${twice.join(', ')} in both spec.parameters and spec.parametersFrom`,
      why: 'a parameter has one value: written, or read from a Secret',
      fix: `remove ${twice.map((n) => `spec.parameters.${n}`).join(', ')}${twice.some((n) => !secret.has(n)) ? ' (or the parametersFrom entry)' : ''}`,
    });
  }

  const written: [string, string][] = [];
  if (changed(ctx, (s) => s.parameters))
    for (const n of keys(spec.parameters)) if (secret.has(n)) written.push([n, `spec.parameters.${n}`]);
  if (changed(ctx, (s) => s.planExecution))
    for (const n of keys(spec.planExecution?.parameters)) if (secret.has(n)) written.push([n, `spec.planExecution.parameters.${n}`]);
  if (changed(ctx, (s) => s.schedules)) {
    (spec.schedules ?? []).forEach((sch, i) => {
      for (const n of keys(sch.parameters)) if (secret.has(n)) written.push([n, `spec.schedules[${i}].parameters.${n}`]);
    });
  }
  if (written.length > 0) {
    const [name, path] = written[0]!;
    const perRun = path.startsWith('spec.planExecution');
    return deny({
      rule: SECRET_PARAMETER_RULES.value,
      code: 422,
      reason: 'Invalid',
      object,
      refused: `a value of secret parameter ${name} in ${path} (not shown)`,
      why: `OperatorVersion "${ovName}" declares ${name} secret: true, so its value may only come from a Secret — written in the Instance it would be readable by everyone who may read the Instance, and kept in its history and in Git`,
      fix: `remove ${path} and set ${fromForm(name, perRun ? 'spec.planExecution.parametersFrom' : 'spec.parametersFrom')}${path.startsWith('spec.schedules') ? '; a schedule cannot give a secret per run: name it in spec.parametersFrom' : ''}`,
    });
  }

  const froms: [string, string][] = [];
  if (changed(ctx, (s) => s.parametersFrom)) for (const n of keys(spec.parametersFrom)) froms.push([n, 'spec.parametersFrom']);
  const runFrom = changed(ctx, (s) => s.planExecution) ? keys(spec.planExecution?.parametersFrom) : [];
  for (const n of runFrom) froms.push([n, 'spec.planExecution.parametersFrom']);
  for (const [name, where] of froms) {
    const decl = (ov.parameters ?? []).find((p) => p.name === name);
    if (decl?.secret === true) continue;
    return deny({
      rule: SECRET_PARAMETER_RULES.notSecret,
      code: 422,
      reason: 'Invalid',
      object,
      refused: `${where}.${name}`,
      why: `OperatorVersion "${ovName}" ${decl ? `declares ${name} without secret: true` : `does not declare ${name}`}; only secret parameters are read from Secrets (secret parameters: ${secretList(ov)}) — a plain value belongs in spec.parameters, where it is checked at apply time and a GitOps diff shows it`,
      fix: decl ? `set spec.parameters.${name} instead, or declare ${name} secret: true in the OperatorVersion` : `remove ${where}.${name}`,
    });
  }
  const notPerRun = runFrom.filter((n) => (ov.parameters ?? []).find((p) => p.name === n)?.perRun !== true);
  if (notPerRun.length > 0) {
    const name = notPerRun[0]!;
    return deny({
      rule: SECRET_PARAMETER_RULES.notPerRun,
      code: 422,
      reason: 'Invalid',
      object,
      refused: `spec.planExecution.parametersFrom.${name}`,
      why: `OperatorVersion "${ovName}" declares ${name} without perRun: true: a trigger cannot give it for one run`,
      fix: `name it in spec.parametersFrom.${name} (for every run) and remove spec.planExecution.parametersFrom.${name}`,
    });
  }
  return allow();
}

function secretList(ov: OperatorVersionSpec): string {
  const names = [...secretParameterNames(ov)].sort();
  return names.length > 0 ? names.join(', ') : 'none';
}
