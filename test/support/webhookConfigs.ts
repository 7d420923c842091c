// ValidatingWebhookConfigurations that tests register for themselves: confined to one
// namespace (namespaceSelector on kubernetes.io/metadata.name), pointed at a URL of the
// test's choosing, trusting a given CA.
export interface TestWebhookOptions {
  /** Name of the configuration (cluster-scoped: make it unique per test run). */
  name: string;
  /** Full URL, path included. */
  url: string;
  caPem: string;
  namespace: string;
  apiGroups: string[];
  resources: string[];
  operations: ('CREATE' | 'UPDATE' | 'DELETE')[];
  failurePolicy?: 'Fail' | 'Ignore';
  sideEffects?: 'None' | 'NoneOnDryRun';
  timeoutSeconds?: number;
}

export function testValidatingWebhook(o: TestWebhookOptions): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: o.name, labels: { 'planwarden.dev/test': 'reliability' } },
    webhooks: [
      {
        name: `${o.resources[0]!.replace(/[^a-z0-9-]/g, '-')}.${o.name}.test.planwarden.dev`,
        admissionReviewVersions: ['v1'],
        clientConfig: { url: o.url, caBundle: Buffer.from(o.caPem).toString('base64') },
        rules: [{ apiGroups: o.apiGroups, apiVersions: ['*'], resources: o.resources, operations: o.operations, scope: 'Namespaced' }],
        failurePolicy: o.failurePolicy ?? 'Fail',
        matchPolicy: 'Equivalent',
        sideEffects: o.sideEffects ?? 'None',
        timeoutSeconds: o.timeoutSeconds ?? 10,
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': o.namespace } },
      },
    ],
  };
}
