// What every Instance admission rule is given: the write and what the handler looked up for
// it. Its own module so that the rule modules (instance.ts, maintenance.ts, …) share it
// without importing each other.
import type { Instance, OperatorVersion, UpdatePlan } from '../../shared/api/schema.ts';

export interface InstanceAdmissionContext {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  /** undefined on CREATE */
  oldObject?: Instance;
  /** the new object */
  object: Instance;
  /** The OperatorVersion the NEW spec names (undefined = not found). */
  operatorVersion?: OperatorVersion;
  /** The OperatorVersion the OLD spec names (UPDATE). */
  oldOperatorVersion?: OperatorVersion;
  /** UpdatePlans in the Instance's namespace. */
  updatePlans: UpdatePlan[];
  /** ISO time. */
  now: string;
  /** The admission request's userInfo.username (who is writing). */
  user?: string;
  /** A break-glass the write may use (judged by webhook/rules/governance.ts): stamped with its request. */
  breakGlass?: { reason: string; policies: string[] };
}
