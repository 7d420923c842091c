// Entry point of the controller process: the only place that reads flags and environment.
// Informers start at once (warm caches make fail-over fast); reconciling starts only while
// this replica holds the leader Lease.
import { judgeAppliedObjects } from './executors/applied.ts';
import { secretReader } from './executors/secrets.ts';
import { apiGrantProbe, judgeImpersonationGrant } from './executors/impersonation.ts';
import { OWNED_PATHS, ownedReference, ownerKey } from './owned.ts';
import { jsonEqual } from '../shared/json.ts';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import type { FleetRollout, Instance, OperatorVersion, PlanApproval, PlanPolicy, UpdateInformer, UpdatePlan } from '../shared/api/schema.ts';
import { subjectAccessReviewer } from '../shared/kube/access.ts';
import { FLEET_WAKE_BATCH_MS, FleetTargetIndex, fleetWorker } from './fleet/reconciler.ts';
import { createEventRecorder } from './events.ts';
import { compactObject, StringInterner } from '../shared/kube/compact.ts';
import { createExecutors, LOCKED_DOWN, type TenancyPolicy } from './executors/index.ts';
import { Informer, objectKey } from '../shared/kube/informer.ts';
import { DEFAULT_PULSES, InstanceReconciler } from './instances/reconciler.ts';
import { createKubeClient, type KubeObjectLike, type KubeResource } from '../shared/kube/client.ts';
import { loadKubeCredentials } from '../shared/kube/kubeconfig.ts';
import { defaultIdentity, LeaderElector } from '../shared/kube/leader.ts';
import { errorFields } from '../shared/log.ts';
import { createLogger } from './log.ts';
import { createControllerMetrics } from './metrics.ts';
import { WorkQueue } from '../shared/kube/queue.ts';
import { deleteLegacyReservations } from './updates/legacyReservations.ts';
import { LABEL_INSTANCE } from '../shared/api/names.ts';
import { DEFAULT_WAIT_BOUND_MS } from './updates/reconciler.ts';
import { needsUpgradeStatus } from './updates/upgrades.ts';
import { informerWorker, updatePlanWorker, upgradeStatusWorker, type DiscoveryStore } from './updates/worker.ts';
import { CERT_FLAG_OPTIONS, readCertConfig } from './certs/config.ts';
import { CertificateRotator } from './certs/rotator.ts';


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
  if (!config.tenancy.impersonate) logger.warn('--no-impersonation: plans run with the controller\'s own rights (single-tenant clusters only)');
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
    (path) => new Informer<KubeResource>({ source: kube, path, logger, metrics, labelSelector: LABEL_INSTANCE, metadataOnly: true, transform: ownedReference }),
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

  const queue = new WorkQueue({ name: 'instances', concurrency: config.concurrency, logger, metrics });
  const enqueue = (obj: KubeObjectLike) => queue.add(objectKey(obj));
  instances.onAdd(enqueue);
  instances.onUpdate((_old, cur) => enqueue(cur));
  instances.onDelete(enqueue);
  const wakeUsers = (ov: OperatorVersion) => {
    for (const inst of instances.list(ov.metadata.namespace)) if (inst.spec.operatorVersion.name === ov.metadata.name) enqueue(inst);
  };
  operatorVersions.onAdd(wakeUsers);
  // A decision wakes its Instance; a policy or a namespace's labels may govern any Instance
  // (rare writes): every Instance of the namespace, or of the cluster, is judged again.
  const wakeApproved = (a: PlanApproval) => queue.add(`${a.metadata.namespace ?? ''}/${a.spec.instance}`);
  planApprovals.onAdd(wakeApproved);
  planApprovals.onDelete(wakeApproved);
  const wakeAll = () => {
    for (const inst of instances.list()) enqueue(inst);
  };
  planPolicies.onAdd(wakeAll);
  planPolicies.onUpdate(wakeAll);
  planPolicies.onDelete(wakeAll);
  namespaces.onUpdate((old, cur) => {
    if (JSON.stringify(old.metadata.labels ?? {}) === JSON.stringify(cur.metadata.labels ?? {})) return;
    for (const inst of instances.list(cur.metadata.name)) enqueue(inst);
  });
  operatorVersions.onUpdate((_o, cur) => wakeUsers(cur));
  operatorVersions.onDelete(wakeUsers);
  for (const inf of owned) {
    const wakeOwner = (obj: KubeResource) => {
      const key = ownerKey(obj);
      if (key) queue.add(key);
    };
    inf.onAdd(wakeOwner);
    inf.onUpdate((_o, cur) => wakeOwner(cur));
    inf.onDelete(wakeOwner);
  }

  const planQueue = new WorkQueue({ name: 'updateplans', concurrency: 2, logger, metrics });
  const enqueuePlan = (p: KubeObjectLike) => planQueue.add(objectKey(p));
  // The oldest UpdatePlan of a target holds it (shared/updatePlanHolder.ts): when one comes
  // or goes, every UpdatePlan of its target is judged again. Two creates in the same second
  // may reach the cache younger-first (the tie is broken by name), so one that was judged the
  // holder alone may not be once the other arrives; when the holder goes, the next oldest
  // takes over.
  const enqueueTarget = (p: UpdatePlan) => {
    enqueuePlan(p);
    for (const other of updatePlans.list(p.metadata.namespace)) if (other.spec.targetRelease === p.spec.targetRelease) enqueuePlan(other);
  };
  updatePlans.onAdd(enqueueTarget);
  updatePlans.onUpdate((_o, cur) => enqueuePlan(cur));
  updatePlans.onDelete(enqueueTarget);
  const wakeAllPlans = () => {
    for (const p of updatePlans.list()) enqueuePlan(p);
  };
  // What each informer's discovery said, shared by the workers that ask informers.
  const discovery: DiscoveryStore = new Map();
  const informerQueue = new WorkQueue({ name: 'updateinformers', concurrency: 2, logger, metrics });
  const enqueueInformer = (i: KubeObjectLike) => informerQueue.add(objectKey(i));
  updateInformers.onAdd((i) => {
    enqueueInformer(i);
    wakeAllPlans();
  });
  updateInformers.onUpdate((o, cur) => {
    // Our own Online-condition writes must not re-query every informer.
    if (JSON.stringify(o.spec) !== JSON.stringify(cur.spec) || o.metadata.deletionTimestamp !== cur.metadata.deletionTimestamp) {
      enqueueInformer(cur);
      wakeAllPlans();
    }
  });
  updateInformers.onDelete((i) => {
    enqueueInformer(i);
    wakeAllPlans();
  });

  // An Instance whose upgrade runs: its informers' updateInsights go into status.updateStatus.
  const upgradeQueue = new WorkQueue({ name: 'upgrades', concurrency: 2, logger, metrics });
  const enqueueUpgrade = (inst: Instance) => {
    if (needsUpgradeStatus(inst)) upgradeQueue.add(objectKey(inst));
  };
  instances.onAdd(enqueueUpgrade);
  instances.onUpdate((_o, cur) => enqueueUpgrade(cur));

  // FleetRollouts (controller/fleet): a rollout moves when it changes, and when an Instance
  // it has a trigger in flight on changes.
  const fleetQueue = new WorkQueue({ name: 'fleetrollouts', concurrency: 2, logger, metrics });
  const fleetIndex = new FleetTargetIndex();
  const enqueueRollout = (r: FleetRollout) => {
    fleetIndex.update(r);
    fleetQueue.add(objectKey(r));
  };
  fleetRollouts.onAdd(enqueueRollout);
  // The controller's own status writes need no second look (it started all it could when it
  // wrote them); a change of spec, metadata or deletion does.
  fleetRollouts.onUpdate((old, cur) => {
    fleetIndex.update(cur);
    if (old.metadata.generation !== cur.metadata.generation || old.metadata.deletionTimestamp !== cur.metadata.deletionTimestamp || !jsonEqual(old.metadata.annotations ?? null, cur.metadata.annotations ?? null)) {
      fleetQueue.add(objectKey(cur));
    }
  });
  fleetRollouts.onDelete((r) => {
    fleetIndex.remove(r.metadata.name ?? '');
    fleetQueue.add(objectKey(r));
  });
  // An in-flight target's change wakes its rollout a moment later, so that the changes of
  // many targets are looked at — and written to the rollout's status — together.
  const wakeRollouts = (inst: Instance) => {
    for (const name of fleetIndex.rolloutsOf(objectKey(inst))) fleetQueue.addAfter(name, FLEET_WAKE_BATCH_MS);
  };
  instances.onUpdate((_o, cur) => wakeRollouts(cur));
  instances.onDelete(wakeRollouts);

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
    logger.info({ identity: config.identity }, 'leading: reconciling Instances');
    await Promise.all(required.map((i) => i.waitForSync()));
    // Uncached: a grant given (or taken away) counts for the very next start.
    const grantProbe = apiGrantProbe(kube, { timeoutMs: 5_000 });
    const events = createEventRecorder(kube, logger, { instance: config.identity, onDrop: () => metrics.countDroppedEvent() });
    const reconciler = new InstanceReconciler({
      kube,
      instances,
      operatorVersions,
      executors: createExecutors({ kube, tenancy: config.tenancy }),
      judgeApplied: (input) => judgeAppliedObjects({ kube, tenancy: config.tenancy }, input),
      readSecrets: secretReader({ kube, tenancy: config.tenancy }),
      governance: {
        policies: () => planPolicies.list(),
        namespaceLabels: (ns) => namespaces.get(ns)?.metadata.labels,
        approvals: (ns, name) => planApprovals.list(ns).filter((a) => a.spec.instance === name),
      },
      impersonationGrant: (input) => judgeImpersonationGrant(grantProbe, { ...input, policy: config.tenancy }),
      events,
      logger,
      metrics,
      pulses: config.pulses,
      signal,
    });
    for (const inst of instances.list()) {
      enqueue(inst);
      enqueueUpgrade(inst);
    }
    for (const i of updateInformers.list()) enqueueInformer(i);
    for (const r of fleetRollouts.list()) enqueueRollout(r);
    wakeAllPlans();
    deleteLegacyReservations(kube, config.leaderNamespace).then(
      (n) => n > 0 && logger.info({ deleted: n }, 'deleted UpdatePlan reservation Leases of an earlier version'),
      (err: unknown) => logger.warn(errorFields(err), 'could not delete legacy UpdatePlan reservation Leases'),
    );
    const running = [
      ...(config.certs.mode === 'self-signed'
        ? [new CertificateRotator({ kube, ...config.certs, logger, events }).run(signal)]
        : []),
      queue.run((key) => reconciler.reconcile(key)),
      planQueue.run(
        updatePlanWorker({ kube, updatePlans, updateInformers, operatorVersions, instances, discovery, events, logger, waitBoundMs: config.informerWaitBoundMs }),
      ),
      upgradeQueue.run(
        upgradeStatusWorker({
          kube,
          instances,
          updateInformers,
          operatorVersions,
          discovery,
          logger,
          waitBoundMs: config.informerWaitBoundMs,
          pulseMs: config.pulses.notReadyMs,
        }),
      ),
      informerQueue.run(informerWorker({ kube, updateInformers, discovery, events, logger })),
      fleetQueue.run(
        fleetWorker({
          kube,
          rollouts: fleetRollouts,
          instances,
          // Uncached: an author's right taken away counts for the very next trigger.
          access: subjectAccessReviewer(kube, { timeoutMs: 5_000 }),
          events,
          logger,
          written: (r) => fleetIndex.update(r),
          setTargets: (name, counts) => metrics.setFleetTargets(name, counts),
        }),
      ),
    ];
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    await Promise.all([queue.shutDown(), planQueue.shutDown(), upgradeQueue.shutDown(), informerQueue.shutDown(), fleetQueue.shutDown()]);
    await Promise.all(running);
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
