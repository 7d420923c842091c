// How the image test turns a manifest's securityContext and /tmp emptyDir into podman
// flags (test/controlplane/image.ts): each setting of the manifests shows as its flag, and
// a setting the manifests do not make adds none.
import { expect } from 'chai';
import { manifestRunArgs, type ContainerSecurity, type ManifestContainer } from '../../controlplane/image.ts';

const MANIFESTS: ContainerSecurity = {
  runAsUser: 65532,
  runAsGroup: 65532,
  readOnlyRootFilesystem: true,
  allowPrivilegeEscalation: false,
  dropCapabilities: ['ALL'],
  tmpSizeLimit: '16Mi',
};

const container = (security: ContainerSecurity): ManifestContainer => ({
  name: 'planwarden-webhook-x',
  image: 'localhost/planwarden:0.1.0',
  command: ['node', 'dist/webhook/main.js', '--port', '9443'],
  security,
  serviceAccountDir: '/sa',
  apiserver: { host: '127.0.0.1', port: 6443 },
  namespace: 'planwarden-system',
  mounts: { '/certs': '/tls' },
});

const CASES: [sentence: string, security: ContainerSecurity, present: string[], absent: string[]][] = [
  ['runAsUser/runAsGroup 65532 run the process as 65532:65532', MANIFESTS, ['--user=65532:65532'], []],
  [
    'readOnlyRootFilesystem mounts the root read-only, with no tmpfs podman would add',
    MANIFESTS,
    ['--read-only', '--read-only-tmpfs=false'],
    [],
  ],
  ['a 16Mi /tmp emptyDir is a 16 MiB tmpfs', MANIFESTS, ['--tmpfs=/tmp:rw,size=16m,mode=1777'], []],
  ['capabilities.drop ALL drops them all', MANIFESTS, ['--cap-drop=ALL'], []],
  ['allowPrivilegeEscalation false sets no-new-privileges', MANIFESTS, ['--security-opt=no-new-privileges'], []],
  ['a writable root filesystem adds no --read-only', { ...MANIFESTS, readOnlyRootFilesystem: false }, [], ['--read-only']],
  ['no /tmp emptyDir adds no tmpfs', { ...MANIFESTS, tmpSizeLimit: undefined }, [], ['--tmpfs=/tmp:rw,size=16m,mode=1777']],
  [
    'allowed privilege escalation adds no no-new-privileges',
    { ...MANIFESTS, allowPrivilegeEscalation: true },
    [],
    ['--security-opt=no-new-privileges'],
  ],
];

describe('podman flags for a pod of the manifests (the image test)', () => {
  for (const [sentence, security, present, absent] of CASES) {
    it(sentence, () => {
      const args = manifestRunArgs(container(security));
      for (const flag of present) expect(args).to.include(flag);
      for (const flag of absent) expect(args).to.not.include(flag);
    });
  }

  it('mounts the ServiceAccount token where the kubelet puts it, and other mounts read-only', () => {
    const args = manifestRunArgs(container(MANIFESTS));
    expect(args).to.include('/sa:/var/run/secrets/kubernetes.io/serviceaccount:ro');
    expect(args).to.include('/certs:/tls:ro');
  });

  it('ends with the image and the command, so podman passes the flags to neither', () => {
    const args = manifestRunArgs(container(MANIFESTS));
    expect(args.slice(-5)).to.deep.equal(['localhost/planwarden:0.1.0', 'node', 'dist/webhook/main.js', '--port', '9443']);
  });
});
