// Entry point of the webhook process: the only place that reads flags and environment.
// Usage: tsx webhook/main.ts [--port 8443] [--tls-cert F] [--tls-key F]
//        [--log-level info] [--kubeconfig F] [--shutdown-delay-seconds 5]
//        [--client-ca F [--client-names N1,N2]]
import { parseArgs } from 'node:util';
import { loadKubeCredentials } from '../shared/kube/kubeconfig.ts';
import { buildHandlers } from './handlers.ts';
import { createLogger } from './log.ts';
import { createWebhookMetrics } from './metrics.ts';
import { startWebhookServer } from './server.ts';

interface Config {
  port: number;
  certFile: string;
  keyFile: string;
  logLevel: string;
  /** Empty: in-cluster service account, else $KUBECONFIG / ~/.kube/config. */
  kubeconfig: string;
  shutdownDelayMs: number;
  /** Reviews only from a client certificate signed by this CA (docs/operations.md, "Authenticating the API server to the webhook"). */
  clientCAFile?: string;
  /** Accepted subject CNs of that certificate; empty: any the CA signed. */
  clientNames: string[];
  /** OperatorVersions that declare spec.crossNamespace / spec.clusterScoped are admitted (docs/operations.md, "Tenancy"). */
  tenancy: { allowCrossNamespace: boolean; allowClusterScoped: boolean };
  /** Must match the controller's flag: the ServiceAccount Instances without spec.serviceAccountName use. */
  defaultServiceAccount?: string;
  /** The controller's user: the only one whose Instance writes may carry a FleetRollout's mark. */
  controllerUser?: string;
  /** false (--no-impersonation, as the controller's flag): plans run with the controller's rights; the preflight asks no ServiceAccount's. */
  impersonation: boolean;
}

function readConfig(argv: string[], env: NodeJS.ProcessEnv): Config {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      port: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'log-level': { type: 'string' },
      kubeconfig: { type: 'string' },
      'shutdown-delay-seconds': { type: 'string' },
      // Accepted and ignored: admission no longer keeps UpdatePlan reservations (Leases).
      'reservation-namespace': { type: 'string' },
      'allow-cross-namespace': { type: 'boolean' },
      'allow-cluster-scoped': { type: 'boolean' },
      'default-service-account': { type: 'string' },
      'controller-user': { type: 'string' },
      'no-impersonation': { type: 'boolean' },
      'client-ca': { type: 'string' },
      'client-names': { type: 'string' },
    },
  });
  const number = (name: string, raw: string) => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number, got ${JSON.stringify(raw)}`);
    return n;
  };
  const clientCAFile = values['client-ca'] ?? env.PLANWARDEN_CLIENT_CA_FILE ?? '';
  const clientNames = (values['client-names'] ?? env.PLANWARDEN_CLIENT_NAMES ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  if (clientNames.length > 0 && !clientCAFile) throw new Error('--client-names needs --client-ca (or PLANWARDEN_CLIENT_CA_FILE)');
  return {
    ...(clientCAFile ? { clientCAFile } : {}),
    clientNames,
    port: number('port', values.port ?? env.PLANWARDEN_WEBHOOK_PORT ?? '8443'),
    certFile: values['tls-cert'] ?? env.PLANWARDEN_TLS_CERT_FILE ?? '/tls/tls.crt',
    keyFile: values['tls-key'] ?? env.PLANWARDEN_TLS_KEY_FILE ?? '/tls/tls.key',
    logLevel: values['log-level'] ?? env.PLANWARDEN_LOG_LEVEL ?? 'info',
    kubeconfig: values.kubeconfig ?? env.KUBECONFIG ?? '',
    defaultServiceAccount: values['default-service-account'] || undefined,
    controllerUser: values['controller-user'] || undefined,
    impersonation: !(values['no-impersonation'] ?? false),
    tenancy: { allowCrossNamespace: values['allow-cross-namespace'] ?? false, allowClusterScoped: values['allow-cluster-scoped'] ?? false },
    shutdownDelayMs:
      1000 * number('shutdown-delay-seconds', values['shutdown-delay-seconds'] ?? env.PLANWARDEN_SHUTDOWN_DELAY_SECONDS ?? '5'),
  };
}

async function main(): Promise<void> {
  const config = readConfig(process.argv.slice(2), process.env);
  const logger = createLogger({ level: config.logLevel });
  process.on('unhandledRejection', (err) => {
    logger.fatal({ err }, 'unhandled rejection');
    process.exit(1);
  });

  const kubeConfig = await loadKubeCredentials(config.kubeconfig);

  const metrics = createWebhookMetrics();
  const handlers = await buildHandlers({
    kubeConfig,
    tenancy: config.tenancy,
    defaultServiceAccount: config.defaultServiceAccount,
    controllerUser: config.controllerUser,
    impersonation: config.impersonation,
    logger,
    metrics,
  });
  const server = await startWebhookServer({
    handlers: handlers.routes,
    logger,
    metrics,
    port: config.port,
    certFile: config.certFile,
    keyFile: config.keyFile,
    ...(config.clientCAFile ? { clientAuth: { caFile: config.clientCAFile, names: config.clientNames } } : {}),
  });

  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    void server
      .stop({ drainDelayMs: config.shutdownDelayMs })
      .then(() => handlers.stop())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((err: unknown) => {
  console.error(`planwarden webhook: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
