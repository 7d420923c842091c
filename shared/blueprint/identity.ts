// What a blueprint calls itself in templates: KUDO's .OperatorName and .AppVersion. An
// OperatorVersion may say so in spec.operatorName / spec.appVersion; without operatorName,
// the name is metadata.name without a trailing "-<spec.version>" (KUDO names an
// OperatorVersion <operator>-<version>).
import type { OperatorVersion } from '../api/schema.ts';

export function renderIdentity(ov: Pick<OperatorVersion, 'metadata' | 'spec'>): { operatorName: string; appVersion?: string } {
  // Read loosely: spec.operatorName and spec.appVersion are optional fields of newer schemas.
  const spec: { operatorName?: unknown; appVersion?: unknown; version?: unknown } = ov.spec;
  const name = ov.metadata.name ?? '';
  const version = typeof spec.version === 'string' ? spec.version : '';
  const suffix = `-${version}`;
  const derived = version && name.endsWith(suffix) && name.length > suffix.length ? name.slice(0, -suffix.length) : name;
  const operatorName = typeof spec.operatorName === 'string' && spec.operatorName !== '' ? spec.operatorName : derived;
  return typeof spec.appVersion === 'string' && spec.appVersion !== '' ? { operatorName, appVersion: spec.appVersion } : { operatorName };
}
