// The --cert-* flags: durations, defaults, and settings that could not keep a certificate valid.
import { expect } from 'chai';
import { parseDuration, readCertConfig } from '../../../../controller/certs/config.ts';

describe('controller/certs/config', () => {
  const rows: [string, number | undefined][] = [
    ['90d', 90 * 86_400_000],
    ['12h', 12 * 3_600_000],
    ['1.5s', 1500],
    ['500ms', 500],
    ['0s', undefined],
    ['-1s', undefined],
    ['10', undefined],
    ['1y', undefined],
  ];
  for (const [text, ms] of rows) {
    it(`${JSON.stringify(text)} is ${ms === undefined ? 'refused' : `${ms} ms`}`, () => {
      expect(parseDuration(text)).to.equal(ms);
    });
  }

  it('defaults to external mode: the controller touches no certificate unless asked', () => {
    const c = readCertConfig({}, 'planwarden-system');
    expect(c.mode).to.equal('external');
    expect(c.secret).to.deep.equal({ namespace: 'planwarden-system', name: 'planwarden-webhook-tls' });
    expect(c.webhookConfigurations).to.deep.equal(['planwarden']);
  });

  it('reads self-signed lifetimes and a list of webhook configurations', () => {
    const c = readCertConfig(
      {
        'cert-mode': 'self-signed',
        'cert-leaf-validity': '20s',
        'cert-renew-before': '12s',
        'cert-ca-validity': '60s',
        'cert-ca-renew-before': '30s',
        'cert-ca-trust-settle': '2s',
        'webhook-configurations': 'a, b',
      },
      'ns',
    );
    expect(c.settings).to.include({
      leafValidityMs: 20_000,
      leafRenewBeforeMs: 12_000,
      caValidityMs: 60_000,
      caRenewBeforeMs: 30_000,
      caTrustSettleMs: 2000,
    });
    expect(c.webhookConfigurations).to.deep.equal(['a', 'b']);
  });

  it('refuses an unknown mode and lifetimes that cannot work', () => {
    expect(() => readCertConfig({ 'cert-mode': 'manual' }, 'ns')).to.throw('--cert-mode');
    expect(() => readCertConfig({ 'cert-mode': 'self-signed', 'cert-renew-before': '100d' }, 'ns')).to.throw(
      '--cert-renew-before must be shorter',
    );
    expect(() => readCertConfig({ 'cert-leaf-validity': 'soon' }, 'ns')).to.throw('--cert-leaf-validity must be a positive duration');
  });
});
