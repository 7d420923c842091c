// Certificates and keys of the local control plane: one CA, the apiserver's serving
// certificate, client certificates for each component's identity, and the
// service-account signing key pair.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCA, createClientCert, createKeyPair, createServingCert } from '../../certs/pki.ts';

export interface CertPair {
  certPem: string;
  keyPem: string;
}

export interface ClusterPki {
  ca: CertPair;
  admin: CertPair;
  controllerManager: CertPair;
  scheduler: CertPair;
  kwok: CertPair;
  files: {
    caCert: string;
    caKey: string;
    apiserverCert: string;
    apiserverKey: string;
    serviceAccountPublic: string;
    serviceAccountPrivate: string;
  };
}

export function generateClusterPki(dir: string): ClusterPki {
  const ca = createCA({ commonName: 'planwarden-local-ca', validityDays: 30 });
  const apiserver = createServingCert({
    ca,
    dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
    ipAddresses: ['127.0.0.1', '10.96.0.1'],
    validityDays: 30,
  });
  const client = (commonName: string, organizations: string[] = []) =>
    createClientCert({ ca, commonName, organizations, validityDays: 30 });
  const sa = createKeyPair();
  const write = (name: string, content: string, mode = 0o600) => {
    const f = join(dir, name);
    writeFileSync(f, content, { mode });
    return f;
  };
  return {
    ca,
    admin: client('planwarden-admin', ['system:masters']),
    controllerManager: client('system:kube-controller-manager'),
    scheduler: client('system:kube-scheduler'),
    // kwok writes Node and Pod status for every simulated node: it acts as the kubelets.
    kwok: client('kwok', ['system:masters']),
    files: {
      caCert: write('ca.crt', ca.certPem, 0o644),
      caKey: write('ca.key', ca.keyPem),
      apiserverCert: write('apiserver.crt', apiserver.certPem, 0o644),
      apiserverKey: write('apiserver.key', apiserver.keyPem),
      serviceAccountPublic: write('sa.pub', sa.publicKeyPem, 0o644),
      serviceAccountPrivate: write('sa.key', sa.privateKeyPem),
    },
  };
}
