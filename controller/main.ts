// Entry point of the controller process: the only place that reads flags and environment.
// Informers start at once (warm caches make fail-over fast); reconciling starts only while
// this replica holds the leader Lease.
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import type {
  FleetRollout,
  Instance,
  OperatorVersion,
  PlanApproval,
  PlanPolicy,
  UpdateInformer,
  UpdatePlan,
} from '../shared/api/schema.ts';
import { LABEL_INSTANCE } from '../shared/api/names.ts';
import { createKubeClient, type KubeObjectLike, type KubeResource } from '../shared/kube/client.ts';
import { compactObject, StringInterner } from '../shared/kube/compact.ts';
import { Informer } from '../shared/kube/informer.ts';
import { loadKubeCredentials } from '../shared/kube/kubeconfig.ts';
import { defaultIdentity, LeaderElector } from '../shared/kube/leader.ts';
import { errorFields } from '../shared/log.ts';
import { CERT_FLAG_OPTIONS, readCertConfig } from './certs/config.ts';
import { setupCertificateController } from './certs/controller.ts';
import type { Controller } from './controller.ts';
import { createEventRecorder } from './events.ts';
import { LOCKED_DOWN, type TenancyPolicy } from './executors/index.ts';
import { setupFleetController } from './fleet/controller.ts';
import { setupInstanceController } from './instances/controller.ts';
import { DEFAULT_PULSES } from './instances/pass.ts';
import { createLogger } from './log.ts';
import { createControllerMetrics } from './metrics.ts';
import { OWNED_PATHS, ownedReference } from './owned.ts';
import { setupUpdateControllers } from './updates/controller.ts';
import { DEFAULT_WAIT_BOUND_MS } from './updates/reconciler.ts';

function readConfig(argv: string[], env: NodeJS.ProcessEnv) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      kubeconfig: { type: 'string' },
      'metrics-port': { type: 'string' },
      'leader-elect': { type: 'boolean' },
      'no-leader-elect': { type: 'boolean' },
      'leader-election-namespace': { type: 'string' },
      'log-level': { type: 'string' },
      concurrency: { type: 'string' },
      'pulse-not-ready-seconds': { type: 'string' },
      'pulse-ready-seconds': { type: 'string' },
      identity: { type: 'string' },
      'instance-selector': { type: 'string' },
      'fleet-selector': { type: 'string' },
      'lease-name': { type: 'string' },
      'default-service-account': { type: 'string' },
      'no-impersonation': { type: 'boolean' },
      'allow-cross-namespace': { type: 'boolean' },
      'allow-cluster-scoped': { type: 'boolean' },
      'informer-wait-bound-seconds': { type: 'string' },
      ...CERT_FLAG_OPTIONS,
    },
  });
  const num = (name: string, raw: string | undefined, def: number) => {
    if (raw === undefined) return def;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number, got ${JSON.stringify(raw)}`);
    return n;
  };
  const leaderNamespace = values['leader-election-namespace'] ?? env.POD_NAMESPACE ?? 'planwarden-system';
  return {
    kubeconfig: values.kubeconfig ?? env.KUBECONFIG,
    metricsPort: num('metrics-port', values['metrics-port'], 8080),
    leaderElect: !values['no-leader-elect'],
    leaderNamespace,
    logLevel: values['log-level'] ?? env.PLANWARDEN_LOG_LEVEL ?? 'info',
    concurrency: num('concurrency', values.concurrency, 4),
    pulses: {
      notReadyMs: 1000 * num('pulse-not-ready-seconds', values['pulse-not-ready-seconds'], DEFAULT_PULSES.notReadyMs / 1000),
      readyMs: 1000 * num('pulse-ready-seconds', values['pulse-ready-seconds'], DEFAULT_PULSES.readyMs / 1000),
    },
    identity: values.identity ?? defaultIdentity(),
    /** Label selector of the Instances this controller runs (sharding; empty: all). */
    instanceSelector: values['instance-selector'] ?? '',
    /**
     * Label selector of the FleetRollouts this controller runs (default: the instance
     * selector). A rollout is run where its targets are cached: a sharded controller runs
     * the rollouts labelled as its Instances are.
     */
    fleetSelector: values['fleet-selector'] ?? values['instance-selector'] ?? '',
    leaseName: values['lease-name'] ?? 'planwarden-controller',
    /** Whose rights plans use, and where they may act (docs/operations.md, "Tenancy"). */
    tenancy: {
      impersonate: !values['no-impersonation'],
      defaultServiceAccount: values['default-service-account'] || LOCKED_DOWN.defaultServiceAccount,
      allowCrossNamespace: values['allow-cross-namespace'] ?? false,
      allowClusterScoped: values['allow-cluster-scoped'] ?? false,
    } satisfies TenancyPolicy,
    /** How long an UpdateInformer's Wait is honoured before it counts as degraded. */
    informerWaitBoundMs: 1000 * num('informer-wait-bound-seconds', values['informer-wait-bound-seconds'], DEFAULT_WAIT_BOUND_MS / 1000),
    /** Self-managed webhook certificate (--cert-mode=self-signed); the Secret lives in our namespace. */
    certs: readCertConfig(values, leaderNamespace),
  };
}

async function main(): Promise<void> {
  const config = readConfig(process.argv.slice(2), process.env);
  const logger = createLogger({ level: config.logLevel });
  if (!config.tenancy.impersonate)
    logger.warn("--no-impersonation: plans run with the controller's own rights (single-tenant clusters only)");
  const metrics = createControllerMetrics();
  const kube = createKubeClient({ kubeConfig: await loadKubeCredentials(config.kubeconfig), metrics, userAgent: 'planwarden-controller' });

  // Cached objects are compacted (no managedFields, shared strings): at 10,000 Instances
  // with full status that is most of the controller's memory (bench: rssMiB10k).
  const interner = new StringInterner();
  const informer = <T extends KubeObjectLike>(path: string, labelSelector?: string) =>
    new Informer<T>({ source: kube, path, logger, metrics, labelSelector, transform: compactObject<T>(interner) });
  const instances = informer<Instance>('/apis/planwarden.dev/v1alpha1/instances', config.instanceSelector || undefined);
  const operatorVersions = informer<OperatorVersion>('/apis/planwarden.dev/v1alpha1/operatorversions');
  const updatePlans = informer<UpdatePlan>('/apis/planwarden.dev/v1alpha1/updateplans');
  const updateInformers = informer<UpdateInformer>('/apis/planwarden.dev/v1alpha1/updateinformers');
  // Objects planwarden applied, of the kinds whose progress matters most: their changes
  // wake the owning Instance (others are re-checked while their task is in progress). As
  // metadata only, and only the label kept (controller/owned.ts): anyone may label objects
  // of any size, and the cache must not grow with them.
  const owned = OWNED_PATHS.map(
    (path) =>
      new Informer<KubeResource>({
        source: kube,
        path,
        logger,
        metrics,
        labelSelector: LABEL_INSTANCE,
        metadataOnly: true,
        transform: ownedReference,
      }),
  );
  const fleetRollouts = informer<FleetRollout>('/apis/planwarden.dev/v1alpha1/fleetrollouts', config.fleetSelector || undefined);
  // Change governance: PlanPolicies (few, cluster-scoped), PlanApprovals, and the labels of
  // namespaces (a policy's namespaceSelector), as metadata only.
  const planPolicies = informer<PlanPolicy>('/apis/planwarden.dev/v1alpha1/planpolicies');
  const planApprovals = informer<PlanApproval>('/apis/planwarden.dev/v1alpha1/planapprovals');
  const namespaces = new Informer<KubeResource>({ source: kube, path: '/api/v1/namespaces', logger, metrics, metadataOnly: true });
  const all = [instances, operatorVersions, updatePlans, updateInformers, fleetRollouts, planPolicies, planApprovals, namespaces, ...owned];
  for (const inf of all) metrics.trackCachedObjects?.(inf.resourceName, () => inf.list().length);
  // Reconciling needs these; the owned-object informers only speed it up (their kinds may
  // be outside the RBAC an admin granted), so nothing waits for them.
  const required = [instances, operatorVersions, updatePlans, updateInformers, fleetRollouts, planPolicies, planApprovals, namespaces];

  // Each controller states what wakes it (controller/controller.ts); main only composes them.
  const controllers: Controller[] = [
    setupInstanceController({
      kube,
      instances,
      operatorVersions,
      owned,
      planPolicies,
      planApprovals,
      namespaces,
      tenancy: config.tenancy,
      pulses: config.pulses,
      concurrency: config.concurrency,
      logger,
      metrics,
    }),
    setupUpdateControllers({
      kube,
      updatePlans,
      updateInformers,
      operatorVersions,
      instances,
      leaderNamespace: config.leaderNamespace,
      waitBoundMs: config.informerWaitBoundMs,
      pulseMs: config.pulses.notReadyMs,
      logger,
      metrics,
    }),
    setupFleetController({ kube, rollouts: fleetRollouts, instances, logger, metrics }),
    ...[setupCertificateController({ kube, certs: config.certs, logger })].filter((c) => c !== undefined),
  ];

  let leading = false;
  const http = createServer((req, res) => {
    if (req.url === '/metrics') {
      metrics.registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    } else if (req.url === '/healthz') {
      res.writeHead(200).end('ok');
    } else if (req.url === '/readyz') {
      const synced = required.every((i) => i.hasSynced());
      res.writeHead(synced ? 200 : 503).end(synced ? `ok${leading ? ' (leader)' : ''}` : 'caches not synced');
    } else {
      res.writeHead(404).end();
    }
  });
  http.listen(config.metricsPort);

  for (const inf of all) inf.start();
  const lead = async (signal: AbortSignal) => {
    leading = true;
    logger.info({ identity: config.identity, controllers: controllers.map((c) => c.name) }, 'leading: reconciling Instances');
    await Promise.all(required.map((i) => i.waitForSync()));
    const events = createEventRecorder(kube, logger, { instance: config.identity, onDrop: () => metrics.countDroppedEvent() });
    await Promise.all(controllers.map((c) => c.lead({ signal, events })));
    leading = false;
  };

  const shutdown = async (code: number) => {
    await Promise.all(all.map((i) => i.stop()));
    http.close();
    process.exit(code);
  };

  if (!config.leaderElect) {
    const controller = new AbortController();
    process.once('SIGTERM', () => controller.abort());
    process.once('SIGINT', () => controller.abort());
    await lead(controller.signal);
    await shutdown(0);
    return;
  }
  const elector = new LeaderElector({
    kube,
    namespace: config.leaderNamespace,
    name: config.leaseName,
    identity: config.identity,
    logger,
    metrics,
    onStartedLeading: lead,
    onNewLeader: (id) => logger.info({ leader: id }, 'leader observed'),
  });
  process.once('SIGTERM', () => void elector.stop());
  process.once('SIGINT', () => void elector.stop());
  const end = await elector.run();
  logger.info({ end }, 'leadership ended');
  // Lost leadership: exit so a fresh process rejoins the election with clean state.
  await shutdown(end === 'lost' ? 1 : 0);
}

main().catch((err: unknown) => {
  console.error(JSON.stringify({ level: 'fatal', msg: 'controller failed', ...errorFields(err) }));
  process.exit(1);
});
