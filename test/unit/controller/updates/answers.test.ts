// Informer answers parsed by the API's own schemas, as tolerant as the OpenShift seed: every
// shape of the seed accepted, one bad insight a finding that keeps the good ones.
import { expect } from 'chai';
import {
  discoveryAsks,
  durationMs,
  normalizeHandlerName,
  parseDiscoveryResponse,
  parseInformerResponse,
  type DiscoveryResponse,
  type InsightsHook,
  type InvalidResponse,
  type ParsedResponse,
} from '../../../../controller/updates/answers.ts';

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
    const seed = {
      apiVersion: 'config.openshift.io/v1beta1',
      kind: 'UpdateInsightsResponse',
      spec: { insights: [reboot] },
      status: { response: 'Success' },
    };
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
      body: {
        status: { response: 'Success' },
        spec: { insights: [ok('dup'), ok('b'), { ...ok('dup'), impact: { level: 'info', summary: 'again' } }] },
      },
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
    {
      says: 'an insight that is not an object is a finding',
      body: one('text'),
      insights: [],
      findings: [/insights\[0\] is ignored: must be an object/],
    },
    {
      says: 'more than 250 insights: the first 250 are read, and that is a finding',
      body: { status: { response: 'Success' }, spec: { insights: Array.from({ length: 251 }, (_, i) => ok(`u${i}`)) } },
      findings: [/holds 251 insights; only the first 250 are read/],
    },
    { says: 'a body that is not an object is no answer', body: 'Success', error: /the answer is "Success", not an object/ },
    { says: 'null is no answer', body: null, error: /the answer is null, not an object/ },
    {
      says: 'insights that are not a list are no answer',
      body: { status: { response: 'Success' }, spec: { insights: {} } },
      error: /insights at spec must be a list, got \{\}/,
    },
    {
      says: 'a message that is not text is no answer',
      body: { status: { response: 'Success', message: 3 } },
      error: /status.message must be a string/,
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const got = parseInformerResponse(row.body, NOW);
      if (row.error) {
        expect(got)
          .to.have.property('error')
          .that.matches(/^malformed informer answer: /)
          .and.matches(row.error);
        return;
      }
      const parsed = got as ParsedResponse;
      if (row.insights) expect(parsed.insights).to.deep.equal(row.insights);
      expect(parsed.findings).to.have.length((row.findings ?? []).length);
      for (const [i, f] of (row.findings ?? []).entries()) expect(parsed.findings[i]).to.match(f);
    });
  }

  it('Failure and Wait keep their message and the insights they carry', () => {
    expect(
      parseInformerResponse({ status: { response: 'Failure', message: 'down' }, spec: { insights: [ok('why', 'error')] } }, NOW),
    ).to.deep.equal({
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

describe('the envelope of an insights answer, read tolerantly (never an empty Success for what it cannot read)', () => {
  const warn = ok('w', 'warning');
  const rows: { says: string; body: unknown; response: string; uids: string[]; reported?: string }[] = [
    { says: "the seed's shape", body: { status: { response: 'Success' }, spec: { insights: [warn] } }, response: 'Success', uids: ['w'] },
    {
      says: 'the response in any case',
      body: { status: { response: 'sUCCESS ' }, spec: { insights: [warn] } },
      response: 'Success',
      uids: ['w'],
    },
    { says: 'insights at the top level', body: { status: { response: 'Success' }, insights: [warn] }, response: 'Success', uids: ['w'] },
    { says: 'insights under status', body: { status: { response: 'Success', insights: [warn] } }, response: 'Success', uids: ['w'] },
    {
      says: 'insights in two places (all count; one repeated verbatim counts once)',
      body: { status: { response: 'Success', insights: [warn] }, spec: { insights: [warn, ok('x')] } },
      response: 'Success',
      uids: ['w', 'x'],
    },
    { says: 'status as a text', body: { status: 'wait' }, response: 'Wait', uids: [] },
    { says: 'a top-level response', body: { response: 'Failure', message: 'down', insights: [warn] }, response: 'Failure', uids: ['w'] },
    {
      says: 'keys in another case',
      body: { Status: { Response: 'Success' }, Spec: { Insights: [warn] } },
      response: 'Success',
      uids: ['w'],
    },
    {
      says: 'no response at all: a Failure that keeps its insights',
      body: { spec: { insights: [warn] } },
      response: 'Failure',
      uids: ['w'],
      reported: 'missing',
    },
    {
      says: 'an unknown response: a Failure that keeps its insights',
      body: { status: { response: 'OK' }, spec: { insights: [warn] } },
      response: 'Failure',
      uids: ['w'],
      reported: '"OK"',
    },
  ];
  for (const row of rows) {
    it(`${row.says}: ${row.response} with ${row.uids.join(', ') || 'no insight'}`, () => {
      const got = parseInformerResponse(row.body, NOW) as ParsedResponse;
      expect(got.response).to.equal(row.response);
      expect(got.insights.map((i) => i.uid)).to.deep.equal(row.uids);
      expect(got.reportedResponse).to.equal(row.reported);
    });
  }
});

describe('parseDiscoveryResponse', () => {
  it('keeps the names as listed, unknown ones too, the API level, and the hooks they name', () => {
    expect(
      parseDiscoveryResponse({
        apiVersion: 'x/v1',
        kind: 'DiscoveryResponse',
        apiLevel: 'v1alpha1',
        handlers: ['status', 'plan', 'metrics'],
      }),
    ).to.deep.equal({
      handlers: ['status', 'plan', 'metrics'],
      apiLevel: 'v1alpha1',
      serves: ['updatePlanInsights', 'updateInsights'],
    });
  });
  it('an answer without handlers anywhere is malformed', () => {
    expect(parseDiscoveryResponse({ apiLevel: 'v1' }))
      .to.have.property('error')
      .that.matches(/no handlers \(looked for handlers, spec.handlers and status.handlers\)/);
  });
  it('a handler that is not a name makes the list ambiguous', () => {
    expect(parseDiscoveryResponse({ handlers: ['status', 1] })).to.deep.include({
      handlers: ['status'],
      doubt: '1 of its handler entries is not a name',
    });
  });
  const names: [string, string][] = [
    ['updatePlanInsights', 'updateplaninsights'],
    [' Update_Plan-Insights ', 'updateplaninsights'],
    ['/hooks.config.openshift.io/v1alpha/updatePlanInsights', 'updateplaninsights'],
    ['STATUS', 'status'],
  ];
  for (const [name, normalized] of names)
    it(`"${name}" is compared as "${normalized}"`, () => expect(normalizeHandlerName(name)).to.equal(normalized));
});

/** Which insights hooks are asked after a discovery answer (the table). */
describe('discovery → which hooks are asked (when in doubt, ask)', () => {
  const both = ['updatePlanInsights', 'updateInsights'];
  const rows: { says: string; answer: DiscoveryResponse | InvalidResponse | undefined; asked: string[] }[] = [
    {
      says: 'our hook names at the top level',
      answer: parseDiscoveryResponse({ handlers: ['updatePlanInsights', 'updateInsights'] }),
      asked: both,
    },
    {
      says: 'the hook names under spec, in the envelope of the insight answers',
      answer: parseDiscoveryResponse({
        apiVersion: 'v',
        kind: 'DiscoveryResponse',
        spec: { apiLevel: 'v1alpha1', handlers: ['updatePlanInsights', 'updateInsights'] },
      }),
      asked: both,
    },
    {
      says: 'the hook names under status',
      answer: parseDiscoveryResponse({ status: { handlers: ['updateInsights'] } }),
      asked: ['updateInsights'],
    },
    {
      says: "the seed's example names",
      answer: parseDiscoveryResponse({ apiLevel: 'v1alpha1', handlers: ['status', 'plan'] }),
      asked: both,
    },
    { says: "the seed's plan alone", answer: parseDiscoveryResponse({ handlers: ['plan'] }), asked: ['updatePlanInsights'] },
    { says: "the seed's status alone", answer: parseDiscoveryResponse({ handlers: ['status'] }), asked: ['updateInsights'] },
    { says: 'the other aliases', answer: parseDiscoveryResponse({ handlers: ['planInsights', 'insights'] }), asked: both },
    { says: 'mixed case', answer: parseDiscoveryResponse({ handlers: ['UPDATEPLANINSIGHTS', 'Status'] }), asked: both },
    {
      says: 'a known name beside unknown ones (the unknown ignored)',
      answer: parseDiscoveryResponse({ handlers: ['updateInsights', 'metrics'] }),
      asked: ['updateInsights'],
    },
    { says: 'discovery only: clearly no insights hook', answer: parseDiscoveryResponse({ handlers: ['discovery'] }), asked: [] },
    { says: 'unknown names only', answer: parseDiscoveryResponse({ handlers: ['pre-checks', 'health'] }), asked: both },
    { says: 'an empty list', answer: parseDiscoveryResponse({ handlers: [] }), asked: both },
    {
      says: 'handlers split between the top level and spec',
      answer: parseDiscoveryResponse({ handlers: ['status'], spec: { handlers: ['plan'] } }),
      asked: both,
    },
    {
      says: 'handlers as a map of name → on',
      answer: parseDiscoveryResponse({ handlers: { plan: true, status: false } }),
      asked: ['updatePlanInsights'],
    },
    {
      says: 'handlers as a list of {name}',
      answer: parseDiscoveryResponse({ handlers: [{ name: 'updatePlanInsights' }] }),
      asked: ['updatePlanInsights'],
    },
    { says: 'handlers of a type no reader knows', answer: parseDiscoveryResponse({ handlers: 7 }), asked: both },
    { says: 'no handlers field', answer: parseDiscoveryResponse({ apiLevel: 'v1alpha1' }), asked: both },
    { says: "not JSON (the client's error)", answer: { error: 'GET …/discovery: the answer is not JSON (Unexpected token)' }, asked: both },
    { says: "HTTP 404 (the client's error)", answer: { error: 'GET …/discovery: HTTP 404: no hook' }, asked: both },
    { says: 'never read', answer: undefined, asked: both },
  ];
  for (const row of rows) {
    it(`${row.says}: asks ${row.asked.join(' and ') || 'no insights hook'}`, () => {
      expect(both.filter((hook) => discoveryAsks(row.answer, hook as InsightsHook))).to.deep.equal(row.asked);
    });
  }
});
