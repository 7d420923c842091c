// The seed's UpdateStatus for an Instance, composed: the pure upgradeStatusPass (pass.ts —
// while its upgrade plan runs, the informers' updateInsights hooks are asked on the pulse,
// and again after 5 s when one answers Wait, their answers folded as for UpdatePlans, and
// UpdatePending and UpdateActive say where the upgrade stands; when the run ends the section
// says so and nobody is asked any more) with its query loop (worker.ts untilDecided). Pure
// apart from `query`.
import type { Instance, UpdateStatus } from '../../shared/api/schema.ts';
import { upgradeStatusPass, type DiscoveryRecord } from './pass.ts';
import type { InformerRoundInput } from './reconciler.ts';
import { untilDecided } from './worker.ts';

export { needsUpgradeStatus, upgradeRunOf, UPGRADE_PULSE_MS, type UpgradeRun } from './pass.ts';

export interface UpgradeReconcileInput extends InformerRoundInput {
  instance: Instance;
  /** How often the informers are asked while the upgrade runs (default UPGRADE_PULSE_MS). */
  pulseMs?: number;
}

export interface UpgradeReconcileResult {
  /** The Instance's next status.updateStatus (undefined: no section). */
  updateStatus?: UpdateStatus;
  discovery: Map<string, DiscoveryRecord>;
  requeueAfterMs?: number;
}

/** The Instance's next UpdateStatus section, and when to ask again. */
export async function reconcileUpgradeStatus(input: UpgradeReconcileInput): Promise<UpgradeReconcileResult> {
  const { query, now, ...facts } = input;
  const pass = await untilDecided((read) => upgradeStatusPass({ ...facts, read }, now), query, now);
  return {
    ...(pass.updateStatus === undefined ? {} : { updateStatus: pass.updateStatus }),
    discovery: pass.discovery,
    ...(pass.requeueAfterMs === undefined ? {} : { requeueAfterMs: pass.requeueAfterMs }),
  };
}
