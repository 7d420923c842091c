// CustomResourceDefinitions rendered from the TypeBox schemas in schema.ts: names,
// short names, printer columns and subresources live here, the field shapes there.
import type { TSchema } from '@sinclair/typebox';
import { GROUP, VERSION, specSchemas, statusSchemas, type Kind } from './schema.ts';

interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

interface KindInfo {
  plural: string;
  singular: string;
  shortNames: string[];
  scope: 'Namespaced' | 'Cluster';
  categories: string[];
  columns: PrinterColumn[];
  /** What `kubectl explain <kind>` says first. */
  description: string;
}

const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const KINDS: Record<Kind, KindInfo> = {
  OperatorVersion: {
    plural: 'operatorversions',
    singular: 'operatorversion',
    shortNames: ['ov'],
    scope: 'Namespaced',
    description:
      'The blueprint of a service: parameters, resource templates, tasks and plans (deploy, update, upgrade, backup, cleanup …). Instances run it.',
    categories: ['planwarden'],
    columns: [{ name: 'Version', type: 'string', jsonPath: '.spec.version' }, age],
  },
  Instance: {
    plural: 'instances',
    singular: 'instance',
    shortNames: ['inst'],
    scope: 'Namespaced',
    description:
      'A service run from an OperatorVersion. Changing its parameters, its OperatorVersion or spec.planExecution runs a plan; planwarden refuses at apply time what would not run, and reports progress and health in status.',
    categories: ['planwarden'],
    columns: [
      { name: 'OperatorVersion', type: 'string', jsonPath: '.spec.operatorVersion.name' },
      { name: 'Plan', type: 'string', jsonPath: '.status.activePlan.name', description: 'The last started plan' },
      { name: 'Status', type: 'string', jsonPath: '.status.activePlan.status' },
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      {
        name: 'Reason',
        type: 'string',
        jsonPath: '.status.conditions[?(@.type=="PlanRunning")].reason',
        description:
          'Why a plan runs, ended or waits (condition PlanRunning): PlanInProgress, PlanComplete, AwaitingApproval, Frozen, AwaitingWindow, Paused, PlanBusy, TriggerRefused …',
      },
      { name: 'Trigger', type: 'string', jsonPath: '.spec.planExecution.planName', priority: 1 },
      { name: 'Plan-ID', type: 'string', jsonPath: '.status.activePlan.id', priority: 1 },
      age,
    ],
  },
  UpdatePlan: {
    plural: 'updateplans',
    singular: 'updateplan',
    shortNames: ['up', 'upl'],
    scope: 'Namespaced',
    description:
      'A possible upgrade to spec.targetRelease, analysed before it happens: every UpdateInformer is asked, its insights are listed, and risks must be accepted before an Instance may upgrade (OpenShift pre-checks).',
    categories: ['planwarden'],
    columns: [
      { name: 'Target', type: 'string', jsonPath: '.spec.targetRelease' },
      { name: 'Analyzed', type: 'string', jsonPath: '.status.conditions[?(@.type=="Analyzed")].status' },
      { name: 'RisksAccepted', type: 'string', jsonPath: '.status.conditions[?(@.type=="RisksAccepted")].status' },
      age,
    ],
  },
  UpdateInformer: {
    plural: 'updateinformers',
    singular: 'updateinformer',
    shortNames: ['ui', 'uinf'],
    scope: 'Cluster',
    description:
      'A party that has a say in upgrades: an HTTPS endpoint planwarden asks (discovery, updatePlanInsights, updateInsights). Cluster-scoped: only cluster admins create them.',
    categories: ['planwarden'],
    columns: [
      { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
      { name: 'Online', type: 'string', jsonPath: '.status.conditions[?(@.type=="Online")].status' },
      { name: 'URL', type: 'string', jsonPath: '.spec.clientConfig.url', priority: 1 },
      age,
    ],
  },
  FleetRollout: {
    plural: 'fleetrollouts',
    singular: 'fleetrollout',
    shortNames: ['fr'],
    scope: 'Cluster',
    description:
      "One plan or upgrade across many Instances, in waves, with its author's rights: the controller triggers each target only if the person who created the rollout may patch that Instance.",
    categories: ['planwarden'],
    columns: [
      { name: 'Action', type: 'string', jsonPath: '.status.action', description: 'plan <name> or upgrade to <OperatorVersion>' },
      { name: 'Wave', type: 'string', jsonPath: '.status.wave', description: 'the wave under way, of how many (e.g. 2/3)' },
      { name: 'Completed/Total', type: 'string', jsonPath: '.status.progress' },
      { name: 'Failed', type: 'integer', jsonPath: '.status.counts.failed' },
      age,
    ],
  },
  PlanPolicy: {
    plural: 'planpolicies',
    singular: 'planpolicy',
    shortNames: ['pp'],
    scope: 'Cluster',
    description:
      'Change governance across namespaces: runs of governed plans wait for approvals by people other than the requester (a two-person rule), and a freeze holds them (break-glass for named groups). Cluster-scoped: only cluster admins write them.',
    categories: ['planwarden'],
    columns: [
      { name: 'Plans', type: 'string', jsonPath: '.spec.plans', description: 'absent: every plan but cleanup' },
      { name: 'Approvals', type: 'integer', jsonPath: '.spec.approval.required' },
      { name: 'Frozen-Until', type: 'string', jsonPath: '.spec.freeze.pausedUntil' },
      age,
    ],
  },
  PlanApproval: {
    plural: 'planapprovals',
    singular: 'planapproval',
    shortNames: ['pa'],
    scope: 'Namespaced',
    description:
      "One person's decision (Approve or Reject) on a run waiting for approval, for the digest of what they saw. The approver is stamped by the webhook.",
    categories: ['planwarden'],
    columns: [
      { name: 'Instance', type: 'string', jsonPath: '.spec.instance' },
      { name: 'Run', type: 'string', jsonPath: '.spec.runID' },
      { name: 'Decision', type: 'string', jsonPath: '.spec.decision' },
      { name: 'Approver', type: 'string', jsonPath: '.spec.approver.username' },
      age,
    ],
  },
};

/** A schema as plain JSON: TypeBox's symbol keys dropped, key order kept. */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

export function crdFor(kind: Kind): Record<string, unknown> {
  const info = KINDS[kind];
  const properties: Record<string, unknown> = {
    apiVersion: { type: 'string', description: 'The API version: planwarden.dev/v1alpha1.' },
    kind: { type: 'string', description: `The kind: ${kind}.` },
    // The apiserver refuses anything but type on metadata (its description is the standard one).
    metadata: { type: 'object' },
    spec: plain(specSchemas[kind]),
    // Every kind has a status subresource (SPEC), even OperatorVersion whose status is
    // still empty: adding one later would change who may write what.
    status: plain(statusSchemas[kind]),
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${info.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: info.scope,
      names: {
        kind,
        listKind: `${kind}List`,
        plural: info.plural,
        singular: info.singular,
        shortNames: info.shortNames,
        categories: info.categories,
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: info.columns,
          schema: {
            openAPIV3Schema: { type: 'object', description: info.description, required: ['spec'], properties },
          },
        },
      ],
    },
  };
}

export const ALL_KINDS = Object.keys(KINDS) as Kind[];
