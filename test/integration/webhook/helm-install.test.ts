// The Helm chart as a user installs it: what `helm template` renders for the default
// (self-signed), single-tenant and cert-manager values is accepted by the real apiserver
// (server-side dry run: the image cannot run here), CRDs included.
import { expect } from 'chai';
import { SELF_SIGNED_FILES, helm, helmTemplate } from '../../support/chart.ts';
import { kubectl } from '../fixture.ts';

const CASES: [what: string, values: string[]][] = [
  ['the default values (self-signed)', SELF_SIGNED_FILES],
  ['tenancy.singleTenant=true', [...SELF_SIGNED_FILES, '--set', 'tenancy.singleTenant=true']],
  ['certificate.mode=certManager', ['--set', 'certificate.mode=certManager']],
  [
    'every value changed',
    [
      ...SELF_SIGNED_FILES,
      '--set',
      'webhook.replicas=3',
      '--set',
      'controller.replicas=1',
      '--set',
      'controller.leaderElection.enabled=false',
      '--set',
      'logLevel=debug',
      '--set',
      'image.repository=registry.example.com/planwarden',
      '--set',
      'image.tag=9.9.9',
      '--set',
      'image.pullPolicy=Always',
      '--set',
      'controller.pulses.notReadySeconds=3',
      '--set-string',
      'controller.instanceSelector=shard in (a\\,b)',
      '--set',
      'tenancy.defaultServiceAccount=runner',
    ],
  ],
];

describe('install with Helm (real apiserver)', function () {
  // The first run builds helm from its Go module (minutes, once; cached in .planwarden/bin).
  this.timeout(900_000);

  before(() => {
    helm(['version', '--short']);
  });

  for (const [what, values] of CASES) {
    it(`accepts every object helm template renders for ${what} (server-side dry run)`, async function () {
      this.timeout(120_000);
      const rendered = helmTemplate(values);
      expect(rendered.code, rendered.stderr).to.equal(0);
      // cert-manager's CRDs are not installed here: its Issuer/Certificate are checked by the unit tests only.
      const docs = rendered.stdout.split(/^---$/m).filter((d) => !/^kind: (Issuer|Certificate)$/m.test(d));
      const r = await kubectl(['apply', '--server-side', '--dry-run=server', '--force-conflicts', '-f', '-'], {
        input: docs.join('---\n'),
      });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(
        /customresourcedefinition.apiextensions.k8s.io\/instances.planwarden.dev serverside-applied \(server dry run\)/,
      );
      expect(r.stdout).to.match(
        /validatingwebhookconfiguration.admissionregistration.k8s.io\/planwarden serverside-applied \(server dry run\)/,
      );
      expect(r.stdout).to.match(
        /mutatingwebhookconfiguration.admissionregistration.k8s.io\/planwarden serverside-applied \(server dry run\)/,
      );
      expect(r.stdout).to.match(/deployment.apps\/planwarden-webhook serverside-applied \(server dry run\)/);
      expect(r.stdout).to.match(/deployment.apps\/planwarden-controller serverside-applied \(server dry run\)/);
      if (values.includes('tenancy.singleTenant=true')) {
        expect(r.stdout).to.match(
          /clusterrole.rbac.authorization.k8s.io\/planwarden-controller-apply serverside-applied \(server dry run\)/,
        );
      }
    });
  }
});
