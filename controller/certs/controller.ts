// The webhook certificate's controller: with --cert-mode=self-signed, the rotator's loop runs
// while this replica leads (it wakes on its own check interval, not on watch events).
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Controller } from '../controller.ts';
import type { Logger } from '../log.ts';
import type { CertConfig } from './config.ts';
import { CertificateRotator } from './rotator.ts';

export function setupCertificateController(s: { kube: KubeClient; certs: CertConfig; logger: Logger }): Controller | undefined {
  if (s.certs.mode !== 'self-signed') return undefined;
  return {
    name: 'certificates',
    lead: ({ signal, events }) => new CertificateRotator({ kube: s.kube, ...s.certs, logger: s.logger, events }).run(signal),
  };
}
