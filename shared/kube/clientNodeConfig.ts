// client-node's KubeConfig, for what needs all of it: the CLI (users' kubeconfigs with exec
// plugins, auth providers, contexts to choose from), tests, the bench, and a long-running
// process whose kubeconfig shared/kube/kubeconfig.ts does not read itself. Importing this
// module loads the package's generated API modules (~20 MiB of heap): the controller and the
// webhook import it only when they must.
import { KubeConfig } from '@kubernetes/client-node';

/** Builds a KubeConfig from a file, else the default chain (KUBECONFIG, ~/.kube/config, in-cluster). */
export function loadKubeConfig(file?: string): KubeConfig {
  const kc = new KubeConfig();
  if (file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  return kc;
}
