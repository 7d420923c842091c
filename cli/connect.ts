// From kubectl's connection flags to an API client and a namespace, the way kubectl
// resolves them: --kubeconfig, else $KUBECONFIG / ~/.kube/config; --context, else the
// current context; -n, else the context's namespace, else "default".
import { createKubeClient, type ApiRequestMetrics, type KubeClient } from '../shared/kube/client.ts';
import { loadKubeConfig } from '../shared/kube/clientNodeConfig.ts';
import type { ConnectionFlags } from './args.ts';
import { CliError, type Output } from './io.ts';

export interface Connection {
  client: KubeClient;
  namespace: string;
  /** The context in use, for messages. */
  context: string;
}

/** `warnings`, when given, gets every warning the apiserver returns, as kubectl prints them. */
export function connect(flags: ConnectionFlags, warnings?: Output): Connection {
  let kc;
  try {
    kc = loadKubeConfig(flags.kubeconfig);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new CliError(`cannot load kubeconfig${flags.kubeconfig ? ` ${flags.kubeconfig}` : ''}: ${why}`);
  }
  if (flags.context !== undefined) {
    if (!kc.getContextObject(flags.context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new CliError(
        `context "${flags.context}" does not exist in the kubeconfig${known.length ? ` (contexts: ${known.join(', ')})` : ''}`,
      );
    }
    kc.setCurrentContext(flags.context);
  }
  const context = kc.getCurrentContext();
  const namespace = flags.namespace || kc.getContextObject(context)?.namespace || 'default';
  const onWarning = warnings ? (text: string) => warnings.write(`Warning: ${text}\n`) : undefined;
  // kubectl's impersonation flags, never ignored: a write made as someone else than asked
  // would be recorded under the wrong name (status.planStatus.<plan>.requestedBy).
  const groups = flags['as-group'] ?? [];
  if (groups.length > 0 && !flags.as)
    throw new CliError('--as-group needs --as (kubectl refuses it the same way: impersonating groups requires a user)');
  if (flags.as === '') throw new CliError('--as needs a user name');
  const client = createKubeClient({
    kubeConfig: kc,
    userAgent: 'kubectl-planwarden',
    onWarning,
    ...(process.env.PLANWARDEN_API_STATS ? { metrics: apiStats(warnings) } : {}),
    ...(flags.as ? { impersonateUser: flags.as, impersonateGroups: groups } : {}),
  });
  return { client, namespace, context };
}

/**
 * PLANWARDEN_API_STATS=1: how many API requests the command made and how long it ran, on
 * stderr when it exits (what `plan preview` costs, docs/cli.md).
 */
function apiStats(out: Output | undefined): ApiRequestMetrics {
  const started = performance.now();
  const counts = new Map<string, number>();
  process.once('exit', () => {
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const byMethod = [...counts]
      .sort()
      .map(([m, n]) => `${m} ${n}`)
      .join(', ');
    (out ?? process.stderr).write(
      `kubectl-planwarden: ${total} API requests (${byMethod}) in ${Math.round(performance.now() - started)} ms\n`,
    );
  });
  return { countApiRequest: (method) => void counts.set(method, (counts.get(method) ?? 0) + 1) };
}
