// One Instance of a test, read and written with kubectl as a user would: its current state,
// an upgrade, and a wait for one of its plans.
import type { Instance, PlanStatus } from '../../shared/api/schema.ts';
import { sleep } from '../support/wait.ts';
import { kubectl, kubectlOk } from './fixture.ts';
import { json } from './objects.ts';

export interface InstanceHandle {
  get: () => Promise<Instance>;
  /** `kubectl patch` of spec.operatorVersion.name (the result, refused or not). */
  upgradeTo: (target: string) => ReturnType<typeof kubectl>;
  /** Polls until `plan`'s status satisfies `done`; throws with the last status after `timeoutMs`. */
  waitForRun: (plan: string, done: (run: PlanStatus) => boolean, timeoutMs?: number) => Promise<PlanStatus>;
}

export function instanceHandle(ns: () => string, name: string): InstanceHandle {
  const get = async () => JSON.parse(await kubectlOk(['-n', ns(), 'get', 'instance', name, '-o', 'json'])) as Instance;
  return {
    get,
    upgradeTo: (target) =>
      kubectl(['-n', ns(), 'patch', 'instance', name, '--type=merge', '-p', json({ spec: { operatorVersion: { name: target } } })]),
    async waitForRun(plan, done, timeoutMs = 90_000) {
      const until = Date.now() + timeoutMs;
      let run: PlanStatus | undefined;
      while (Date.now() < until) {
        run = (await get()).status?.planStatus?.[plan];
        if (run && done(run)) return run;
        await sleep(500);
      }
      throw new Error(`timed out waiting for plan ${plan}: ${JSON.stringify(run)}`);
    },
  };
}

/** The Instance as stored, or undefined while kubectl cannot read it (not yet there, a failed call). */
export async function getInstance(ns: string, name: string): Promise<Instance | undefined> {
  const r = await kubectl(['-n', ns, 'get', 'instance', name, '-o', 'json']);
  return r.code === 0 ? (JSON.parse(r.stdout) as Instance) : undefined;
}

/** Polls until `plan`'s status satisfies `done`; throws with the last status after `timeoutMs`. */
export async function waitForPlan(
  ns: string,
  name: string,
  plan: string,
  done: (run: PlanStatus) => boolean,
  timeoutMs = 90_000,
): Promise<PlanStatus> {
  const until = Date.now() + timeoutMs;
  let last: Instance | undefined;
  while (Date.now() < until) {
    last = await getInstance(ns, name);
    const run = last?.status?.planStatus?.[plan];
    if (run && done(run)) return run;
    await sleep(500);
  }
  throw new Error(
    `timed out waiting for plan ${plan} of ${ns}/${name}; status: ${JSON.stringify(last?.status?.planStatus?.[plan] ?? last?.status)}`,
  );
}
