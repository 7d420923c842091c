// Informer answers parsed by the API's own schemas, as tolerant as the OpenShift seed: every
// shape of the seed accepted, one bad insight a finding that keeps the good ones.
import { expect } from 'chai';
import { durationMs, parseDiscoveryResponse, parseInformerResponse, type ParsedResponse } from '../../../../controller/updates/answers.ts';

const NOW = '2026-01-01T01:00:00.000Z';
const ok = (uid: string, level = 'warning') => ({ uid, impact: { level, summary: `summary of ${uid}` } });

describe('parseInformerResponse', () => {
  it("accepts the seed's normal-progress insight: level status, a WorkerPool scope, estimatedFinish 15m", () => {
    const reboot = {
      uid: 'reboot-1',
      acquisitionTime: '2026-01-01T00:00:00Z',
      scope: {
        type: 'WorkerPool',
        workerPool: [{ kind: 'MachineSet', namespace: 'openshift-machine-api', name: 'my-machine-set' }],
        resources: [{ kind: 'Node', name: 'ip-10-0-137-108.ec2.internal' }],
      },
      impact: { level: 'status', summary: 'Node rebooting' },
      remediation: { estimatedFinish: '15m' },
    };
    const seed = { apiVersion: 'config.openshift.io/v1beta1', kind: 'UpdateInsightsResponse', spec: { insights: [reboot] }, status: { response: 'Success' } };
    expect(parseInformerResponse(seed, NOW)).to.deep.equal({
      response: 'Success',
      findings: [],
      insights: [{ ...reboot, remediation: { estimatedFinish: '2026-01-01T00:15:00.000Z' } }],
    });
  });

  it("accepts the seed's warning example with every field, dropping fields it does not know", () => {
    const got = parseInformerResponse(
      {
        status: { response: 'Success', message: 'ok', extra: true },
        spec: {
          insights: [
            {
              uid: 'cpu',
              acquisitionTime: '2026-01-01T00:00:00Z',
              scope: { type: 'ControlPlane', resources: [{ kind: 'Pod', namespace: 'a-namespace', name: 'api-server' }] },
              impact: { level: 'warning', type: 'api-availability', summary: 'High CPU', description: 'long', extra: 1 },
              remediation: { reference: 'https://docs.example.com', resolved: false, estimatedFinish: '2026-01-01T00:15:00+01:00' },
              extra: 2,
            },
          ],
        },
      },
      NOW,
    );
    expect(got).to.deep.equal({
      response: 'Success',
      message: 'ok',
      findings: [],
      insights: [
        {
          uid: 'cpu',
          acquisitionTime: '2026-01-01T00:00:00Z',
          scope: { type: 'ControlPlane', resources: [{ kind: 'Pod', namespace: 'a-namespace', name: 'api-server' }] },
          impact: { level: 'warning', type: 'api-availability', summary: 'High CPU', description: 'long' },
          remediation: { reference: 'https://docs.example.com', resolved: false, estimatedFinish: '2026-01-01T00:15:00+01:00' },
        },
      ],
    });
  });

  const one = (insight: unknown) => ({ status: { response: 'Success' }, spec: { insights: [insight] } });
  const rows: { says: string; body: unknown; insights?: unknown[]; findings?: RegExp[]; error?: RegExp }[] = [
    { says: 'a bare Success without spec means no insights', body: { status: { response: 'Success' } }, insights: [] },
    { says: 'every known level is kept: info', body: one(ok('i', 'info')), insights: [ok('i', 'info')] },
    { says: 'every known level is kept: critical', body: one(ok('c', 'critical')), insights: [ok('c', 'critical')] },
    { says: 'levels are matched whatever their case', body: one(ok('w', 'Warning')), insights: [ok('w', 'warning')] },
    {
      says: 'an unknown level is kept as unknown, with the level as reported',
      body: one(ok('x', 'catastrophic')),
      insights: [{ uid: 'x', impact: { level: 'unknown', reportedLevel: 'catastrophic', summary: 'summary of x' } }],
    },
    {
      says: 'a duration estimatedFinish without acquisitionTime counts from receipt',
      body: one({ ...ok('d'), remediation: { estimatedFinish: '1h30m' } }),
      insights: [{ ...ok('d'), remediation: { estimatedFinish: '2026-01-01T02:30:00.000Z' } }],
    },
    {
      says: 'an insight without uid is a finding; the others are kept',
      body: { status: { response: 'Success' }, spec: { insights: [ok('a'), { impact: { level: 'error', summary: 's' } }, ok('b')] } },
      insights: [ok('a'), ok('b')],
      findings: [/^insights\[1\] is ignored: uid is required$/],
    },
    {
      says: 'a uid reported twice: the first counts, the second is a finding',
      body: { status: { response: 'Success' }, spec: { insights: [ok('dup'), ok('b'), { ...ok('dup'), impact: { level: 'info', summary: 'again' } }] } },
      insights: [ok('dup'), ok('b')],
      findings: [/^insights\[2\] \(uid "dup"\) is ignored: its uid was reported before in the same answer/],
    },
    {
      says: 'an insight without summary is a finding naming its uid',
      body: one({ uid: 'u', impact: { level: 'info' } }),
      insights: [],
      findings: [/insights\[0\] \(uid "u"\) is ignored: impact.summary is required/],
    },
    {
      says: 'an estimatedFinish that is neither a time nor a duration is a finding',
      body: one({ ...ok('u'), remediation: { estimatedFinish: 'soon' } }),
      insights: [],
      findings: [/remediation.estimatedFinish must be an RFC 3339 date-time, got "soon"/],
    },
    { says: 'an insight that is not an object is a finding', body: one('text'), insights: [], findings: [/insights\[0\] is ignored: must be an object/] },
    {
      says: 'more than 250 insights: the first 250 are read, and that is a finding',
      body: { status: { response: 'Success' }, spec: { insights: Array.from({ length: 251 }, (_, i) => ok(`u${i}`)) } },
      findings: [/holds 251 insights; only the first 250 are read/],
    },
    { says: 'a body that is not an object is no answer', body: 'Success', error: /must be an object/ },
    { says: 'null is no answer', body: null, error: /must be an object/ },
    { says: 'a missing status is no answer', body: { spec: {} }, error: /status is required/ },
    { says: 'an unknown response is no answer, naming the allowed ones', body: { status: { response: 'OK' } }, error: /status.response must be one of Success, Failure, Wait, got "OK"/ },
    { says: 'insights that are not a list are no answer', body: { status: { response: 'Success' }, spec: { insights: {} } }, error: /spec.insights must be a list/ },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const got = parseInformerResponse(row.body, NOW);
      if (row.error) {
        expect(got).to.have.property('error').that.matches(/^malformed informer answer: /).and.matches(row.error);
        return;
      }
      const parsed = got as ParsedResponse;
      if (row.insights) expect(parsed.insights).to.deep.equal(row.insights);
      expect(parsed.findings).to.have.length((row.findings ?? []).length);
      for (const [i, f] of (row.findings ?? []).entries()) expect(parsed.findings[i]).to.match(f);
    });
  }

  it('Failure and Wait keep their message and the insights they carry', () => {
    expect(parseInformerResponse({ status: { response: 'Failure', message: 'down' }, spec: { insights: [ok('why', 'error')] } }, NOW)).to.deep.equal({
      response: 'Failure',
      message: 'down',
      insights: [ok('why', 'error')],
      findings: [],
    });
  });
});

describe('durationMs', () => {
  const rows: [string, number | undefined][] = [
    ['15m', 15 * 60_000],
    ['1h30m', 90 * 60_000],
    ['90s', 90_000],
    ['1.5h', 90 * 60_000],
    ['', undefined],
    ['soon', undefined],
    ['2026-01-01T00:00:00Z', undefined],
  ];
  for (const [text, ms] of rows) it(`"${text}" is ${ms ?? 'no duration'}`, () => expect(durationMs(text)).to.equal(ms));
});

describe('parseDiscoveryResponse', () => {
  it('lists the handlers an informer serves, whatever its apiVersion', () => {
    expect(parseDiscoveryResponse({ apiVersion: 'x/v1', kind: 'DiscoveryResponse', handlers: ['updatePlanInsights'], level: 2 })).to.deep.equal({
      handlers: ['updatePlanInsights'],
    });
  });
  it('refuses an answer without handlers', () => {
    expect(parseDiscoveryResponse({})).to.have.property('error').that.matches(/handlers is required/);
  });
  it('refuses a handler that is not a string', () => {
    expect(parseDiscoveryResponse({ handlers: [1] })).to.have.property('error').that.matches(/handlers.0 must be a non-empty string, got number 1/);
  });
});
