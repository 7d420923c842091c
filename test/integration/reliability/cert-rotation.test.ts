// Certificate rotation under load: while a stream of API writes goes through the stack's
// webhook (the apiserver calls it over TLS for each), its serving certificate is renewed on
// disk several times (same CA, new key and certificate, as cert-manager or
// `ensureWebhookCerts({ renew: true })` would). Not one write may fail because of the
// webhook: every write is either stored or refused with planwarden's own verdict, never with
// the apiserver's "failed calling webhook".
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { ensureWebhookCerts } from '../../../certs/webhook.ts';
import { createKubeClient } from '../../../shared/kube/client.ts';
import { bySoak, scaled } from '../../support/soak.ts';
import { sleep, until } from '../../support/wait.ts';
import { webhookTlsFiles } from '../../support/webhookProcess.ts';
import { probeWrite, type ProbeOutcome } from '../../support/admissionProbe.ts';
import { kubeConfig, testStack, useNamespace } from '../fixture.ts';

function servedSerial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      const serial = socket.getPeerCertificate().serialNumber.toUpperCase();
      socket.end();
      resolve(serial);
    });
    socket.on('error', reject);
  });
}

/**
 * Remote ports of the established TCP connections to `port` on this machine (/proc/net/tcp
 * and tcp6): the apiserver's connections to the webhook. A port not seen before is a new
 * connection, i.e. a new TLS handshake.
 */
function connectionsTo(port: number): Set<number> {
  const out = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 4 || f[3] !== '01') continue; // 01: ESTABLISHED
      const local = parseInt(f[1]!.split(':')[1]!, 16);
      if (local === port) out.add(parseInt(f[2]!.split(':')[1]!, 16));
    }
  }
  return out;
}

type Outcome = ProbeOutcome;

describe('reliability: webhook certificate rotation under load', function () {
  this.timeout(bySoak(180_000, 900_000));
  const ns = useNamespace('rel-cert');

  const WRITES = scaled(200);
  const RENEWALS = bySoak(5, 30);

  it(`stores or refuses with a verdict all of ≥${WRITES} writes while the serving certificate is renewed ${RENEWALS} times`, async function () {
    const stack = testStack();
    const tls = webhookTlsFiles(stack.dir);
    const kube = createKubeClient({ kubeConfig: kubeConfig(), userAgent: 'planwarden-reliability-test' });
    const outcomes: Outcome[] = [];
    let rotating = true;
    let n = 0;

    // Even writes are valid OperatorVersions; odd ones lack a deploy plan, which the webhook refuses.
    const write = (i: number): Promise<Outcome> => probeWrite(kube, ns(), 'rot', i);
    const writers = Array.from({ length: 4 }, async () => {
      while (rotating || n < WRITES) outcomes.push(await write(n++));
    });
    // The apiserver keeps its connections to the webhook alive; new ones (new handshakes,
    // with whatever certificate is served then) are seen by sampling the socket table.
    const firstSeen = new Map<number, number>();
    const sample = () => {
      for (const p of connectionsTo(stack.webhookPort)) if (!firstSeen.has(p)) firstSeen.set(p, Date.now());
    };
    sample();
    const sampler = setInterval(sample, 50);
    const servedAt: number[] = [];

    const serials = [await servedSerial(stack.webhookPort, stack.caPem)];
    try {
      for (let r = 0; r < RENEWALS; r++) {
        await sleep(300);
        const renewed = await ensureWebhookCerts({
          dir: tls.dir,
          service: 'planwarden-webhook',
          namespace: 'planwarden-system',
          renew: true,
        });
        expect(renewed.action).to.equal('renewed');
        const want = new X509Certificate(readFileSync(tls.cert)).serialNumber.toUpperCase();
        await until(
          `the webhook to serve renewal ${r + 1} (serial ${want})`,
          async () => ((await servedSerial(stack.webhookPort, stack.caPem)) === want ? true : undefined),
          30_000,
          100,
        );
        serials.push(want);
        servedAt.push(Date.now());
        // A burst beyond the steady writers' connections makes the apiserver open new ones
        // (until its idle pool is large enough), which handshake with the renewed certificate.
        const burst = Array.from({ length: 40 }, () => write(n++));
        outcomes.push(...(await Promise.all(burst)));
        sample();
      }
    } finally {
      rotating = false;
      await Promise.all(writers);
      clearInterval(sampler);
    }
    // Connections first seen a little after a renewal was served cannot have used the old certificate.
    const newConnections = servedAt.map(
      (t, i) => [...firstSeen.values()].filter((seen) => seen > t + 100 && seen < (servedAt[i + 1] ?? Infinity)).length,
    );

    const failed = outcomes.filter((o): o is Extract<Outcome, { kind: 'failed' }> => o.kind === 'failed');
    const stored = outcomes.filter((o) => o.kind === 'stored').length;
    const denied = outcomes.filter((o) => o.kind === 'denied').length;
    console.log(
      `      (${outcomes.length} writes: ${stored} stored, ${denied} refused by the webhook, ${failed.length} failed; ` +
        `${serials.length} certificates served; new apiserver connections after each renewal: ${newConnections.join(', ')})`,
    );
    expect(new Set(serials).size, 'distinct certificates served').to.equal(RENEWALS + 1);
    expect(outcomes.length).to.be.at.least(WRITES);
    expect(failed.map((f) => f.message).slice(0, 5), `${failed.length} writes failed`).to.deep.equal([]);
    expect(stored).to.equal(Math.ceil(outcomes.length / 2));
    expect(denied).to.equal(Math.floor(outcomes.length / 2));
    // Not vacuous: the apiserver opened connections (new handshakes) to a renewed certificate.
    // It reuses its idle keep-alive connections otherwise, so later bursts often need none.
    expect(
      newConnections.reduce((a, b) => a + b, 0),
      'new apiserver connections after renewals',
    ).to.be.greaterThan(0);
  });
});
