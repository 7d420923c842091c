// charts/planwarden rendered by helm (built from its Go module, test/controlplane/build.ts),
// with the self-signed overlay's TLS files as the chart's certificate values, so that the
// chart and `kubectl kustomize manifests/overlays/self-signed` can be compared object by object.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { PROJECT_ROOT, ensureHelm } from '../controlplane/build.ts';

export const CHART_DIR = join(PROJECT_ROOT, 'charts', 'planwarden');
export const CHART_NAMESPACE = 'planwarden-system';

const OVERLAY_TLS = join(PROJECT_ROOT, 'manifests', 'overlays', 'self-signed', 'tls');

/** The values that hand the chart the self-signed overlay's certificate files. */
export const SELF_SIGNED_FILES = [
  '--set-file',
  `certificate.selfSigned.caCert=${join(OVERLAY_TLS, 'ca.crt')}`,
  '--set-file',
  `certificate.selfSigned.tlsCert=${join(OVERLAY_TLS, 'tls.crt')}`,
  '--set-file',
  `certificate.selfSigned.tlsKey=${join(OVERLAY_TLS, 'tls.key')}`,
];

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs helm (building it first when missing) in the repository root. */
export function helm(args: string[]): HelmResult {
  const r = spawnSync(ensureHelm(), args, { cwd: PROJECT_ROOT, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

/** `helm template` of the chart as release planwarden in planwarden-system, CRDs included. */
export function helmTemplate(values: string[]): HelmResult {
  return helm(['template', 'planwarden', CHART_DIR, '--namespace', CHART_NAMESPACE, '--include-crds', ...values]);
}

/** Every document of a multi-document YAML stream that holds an object (comment-only ones dropped). */
export function parseObjects<T>(text: string, what: string): T[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${what}: ${doc.errors.map((e) => e.message).join('; ')}`);
      return doc.toJS() as T | null;
    })
    .filter((o): o is T => o !== null);
}
