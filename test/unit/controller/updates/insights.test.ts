// The pure half of UpdateInformer support: endpoints, answer validation, folding answers
// into UpdatePlan.status, and the Analyzed / RisksAccepted conditions.
import { expect } from 'chai';
import type {
  Condition,
  ImpactLevel,
  InformerStatus,
  Insight,
  UpdateInformer,
  UpdateInformerSpec,
  UpdatePlan,
} from '../../../../shared/api/schema.ts';
import { findCondition } from '../../../../shared/conditions/conditions.ts';
import {
  HOOK_PATHS,
  MAX_RESOLVED_KEPT,
  informerEndpoint,
  mergeInformerResponse,
  parseDiscoveryResponse,
  parseInformerResponse,
  updateInsightsRequest,
  updatePlanConditions,
  updatePlanInsightsRequest,
  type ParsedResponse,
} from '../../../../controller/updates/insights.ts';

const EARLIER = '2026-01-01T00:00:00Z';
const NOW = '2026-01-01T01:00:00Z';
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const PLAN_HOOK = HOOK_PATHS.updatePlanInsights;

function insight(uid: string, level: ImpactLevel = 'warning', resolved?: boolean): Insight {
  return {
    uid,
    impact: { level, summary: `summary of ${uid}` },
    ...(resolved === undefined ? {} : { remediation: { resolved } }),
  };
}

describe('informerEndpoint', () => {
  const rows: { says: string; clientConfig: UpdateInformerSpec['clientConfig']; url?: string; caPem?: string; error?: RegExp }[] = [
    {
      says: 'an https url gets the hook path appended',
      clientConfig: { url: 'https://informer.example.com' },
      url: `https://informer.example.com${PLAN_HOOK}`,
    },
    {
      says: 'an https url with a base path keeps it, without a doubled slash',
      clientConfig: { url: 'https://informer.example.com:8443/base/' },
      url: `https://informer.example.com:8443/base${PLAN_HOOK}`,
    },
    {
      says: 'a caBundle is decoded to the PEM the client trusts',
      clientConfig: { url: 'https://10.0.0.1', caBundle: b64(PEM) },
      url: `https://10.0.0.1${PLAN_HOOK}`,
      caPem: PEM,
    },
    {
      says: 'plain http to 127.0.0.1 is allowed (an informer sidecar)',
      clientConfig: { url: 'http://127.0.0.1:9000' },
      url: `http://127.0.0.1:9000${PLAN_HOOK}`,
    },
    {
      says: 'plain http to localhost is allowed',
      clientConfig: { url: 'http://localhost:9000/x' },
      url: `http://localhost:9000/x${PLAN_HOOK}`,
    },
    {
      says: 'plain http to [::1] is allowed',
      clientConfig: { url: 'http://[::1]:9000' },
      url: `http://[::1]:9000${PLAN_HOOK}`,
    },
    {
      says: 'plain http to any other host is refused',
      clientConfig: { url: 'http://informer.example.com' },
      error: /must use https \(plain http only to a loopback host\)/,
    },
    { says: 'another scheme is refused', clientConfig: { url: 'ftp://x.example.com' }, error: /must use https/ },
    { says: 'a url that does not parse is named', clientConfig: { url: 'not a url' }, error: /"not a url" is not a URL/ },
    {
      says: 'user info in the url is refused',
      clientConfig: { url: 'https://user:pw@informer.example.com' },
      error: /must not carry user info/,
    },
    {
      says: 'a query in the url is refused',
      clientConfig: { url: 'https://informer.example.com/?a=b' },
      error: /must not carry a query or fragment/,
    },
    {
      says: 'a service becomes https://name.namespace.svc (port 443) by default',
      clientConfig: { service: { namespace: 'brokers', name: 'broker-informer' } },
      url: `https://broker-informer.brokers.svc${PLAN_HOOK}`,
    },
    {
      says: 'a service port and path are used',
      clientConfig: { service: { namespace: 'brokers', name: 'broker-informer', port: 8443, path: '/hooks/' } },
      url: `https://broker-informer.brokers.svc:8443/hooks${PLAN_HOOK}`,
    },
    {
      says: 'a service name that is not a DNS label is refused',
      clientConfig: { service: { namespace: 'brokers', name: 'Broker_Informer' } },
      error: /service.name "Broker_Informer" is not a DNS label/,
    },
    {
      says: 'a service path without a leading slash is refused',
      clientConfig: { service: { namespace: 'brokers', name: 'b', path: 'hooks' } },
      error: /service.path "hooks" must start with "\/"/,
    },
    {
      says: 'both url and service is refused',
      clientConfig: { url: 'https://x.example.com', service: { namespace: 'n', name: 'b' } },
      error: /both url and service/,
    },
    { says: 'neither url nor service is refused', clientConfig: {}, error: /neither url nor service/ },
    {
      says: 'a caBundle that is not base64 is refused',
      clientConfig: { url: 'https://x.example.com', caBundle: 'not base64!' },
      error: /caBundle is not base64/,
    },
    {
      says: 'a caBundle without a certificate is refused',
      clientConfig: { url: 'https://x.example.com', caBundle: b64('hello') },
      error: /does not hold a PEM certificate/,
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const got = informerEndpoint({ clientConfig: row.clientConfig }, PLAN_HOOK);
      if (row.error) {
        expect(got).to.have.property('error').that.matches(row.error);
      } else {
        expect(got).to.deep.equal({ url: row.url, ...(row.caPem ? { caPem: row.caPem } : {}) });
      }
    });
  }
});

describe('parseInformerResponse', () => {
  const full = {
    apiVersion: 'hooks.planwarden.dev/v1alpha1',
    kind: 'UpdatePlanInsightsResponse',
    spec: {
      insights: [
        {
          uid: 'pdb-1',
          acquisitionTime: '2026-01-01T00:00:00Z',
          scope: { type: 'Instance', resources: [{ kind: 'Pod', namespace: 'ns', name: 'broker-0' }], workerPool: [] },
          impact: { level: 'warning', type: 'api-availability', summary: 'PDB blocks drain', description: 'long', extra: 1 },
          remediation: { reference: 'https://docs.example.com', resolved: false, estimatedFinish: '2026-01-01T00:15:00+01:00' },
        },
      ],
    },
    status: { response: 'Success', message: 'ok' },
  };
  const withInsight = (patch: Record<string, unknown>) => ({
    status: { response: 'Success' },
    spec: { insights: [{ uid: 'u', impact: { level: 'info', summary: 's' }, ...patch }] },
  });

  it('a complete answer keeps every known field and drops unknown ones', () => {
    expect(parseInformerResponse(full)).to.deep.equal({
      response: 'Success',
      message: 'ok',
      insights: [
        {
          uid: 'pdb-1',
          acquisitionTime: '2026-01-01T00:00:00Z',
          scope: { type: 'Instance', resources: [{ kind: 'Pod', namespace: 'ns', name: 'broker-0' }] },
          impact: { level: 'warning', type: 'api-availability', summary: 'PDB blocks drain', description: 'long' },
          remediation: { reference: 'https://docs.example.com', resolved: false, estimatedFinish: '2026-01-01T00:15:00+01:00' },
        },
      ],
    });
  });

  const rows: { says: string; body: unknown; ok?: ParsedResponse; error?: RegExp }[] = [
    {
      says: 'a bare Success without spec means no insights',
      body: { status: { response: 'Success' } },
      ok: { response: 'Success', insights: [] },
    },
    {
      says: 'Wait with a message is well-formed',
      body: { status: { response: 'Wait', message: 'building' } },
      ok: { response: 'Wait', message: 'building', insights: [] },
    },
    {
      says: 'Failure carrying an insight is well-formed',
      body: { status: { response: 'Failure' }, spec: { insights: [{ uid: 'x', impact: { level: 'error', summary: 's' } }] } },
      ok: { response: 'Failure', insights: [{ uid: 'x', impact: { level: 'error', summary: 's' } }] },
    },
    { says: 'a body that is not an object is refused', body: 'Success', error: /body must be an object, got string "Success"/ },
    { says: 'null is refused', body: null, error: /body must be an object, got null/ },
    { says: 'a missing status is refused', body: { spec: {} }, error: /body.status must be an object, got nothing|body.status must be an object/ },
    {
      says: 'an unknown response is refused naming the allowed ones',
      body: { status: { response: 'OK' } },
      error: /body.status.response must be one of Success, Failure, Wait, got string "OK"/,
    },
    { says: 'a missing response is refused', body: { status: {} }, error: /body.status.response must be one of .* got nothing/ },
    { says: 'a message that is not a string is refused', body: { status: { response: 'Wait', message: 5 } }, error: /body.status.message must be a string, got number 5/ },
    {
      says: 'another apiVersion is refused',
      body: { apiVersion: 'config.openshift.io/v1beta1', status: { response: 'Success' } },
      error: /body.apiVersion must be hooks.planwarden.dev\/v1alpha1/,
    },
    { says: 'another kind is refused', body: { kind: 'Pod', status: { response: 'Success' } }, error: /body.kind must be one of/ },
    {
      says: 'insights that are not an array are refused',
      body: { status: { response: 'Success' }, spec: { insights: {} } },
      error: /body.spec.insights must be an array, got an object/,
    },
    { says: 'an insight without uid is refused with its index', body: withInsight({ uid: undefined }), error: /body.spec.insights\[0\].uid is required/ },
    { says: 'an empty uid is refused', body: withInsight({ uid: '' }), error: /insights\[0\].uid is required/ },
    {
      says: 'the seed\'s "status" level is not a planwarden level',
      body: withInsight({ impact: { level: 'status', summary: 's' } }),
      error: /impact.level must be one of unknown, info, warning, error, critical, got string "status"/,
    },
    { says: 'an insight without impact is refused', body: withInsight({ impact: undefined }), error: /insights\[0\].impact must be an object/ },
    { says: 'an impact without summary is refused', body: withInsight({ impact: { level: 'info' } }), error: /impact.summary is required/ },
    {
      says: 'a duration is not an estimatedFinish date-time',
      body: withInsight({ remediation: { estimatedFinish: '15m' } }),
      error: /remediation.estimatedFinish must be an RFC 3339 date-time, got "15m"/,
    },
    { says: 'an acquisitionTime without zone is refused', body: withInsight({ acquisitionTime: '2026-01-01T00:00:00' }), error: /acquisitionTime must be an RFC 3339/ },
    { says: 'resolved must be a boolean', body: withInsight({ remediation: { resolved: 'yes' } }), error: /remediation.resolved must be a boolean, got string "yes"/ },
    { says: 'a scope without type is refused', body: withInsight({ scope: { resources: [] } }), error: /scope.type is required/ },
    {
      says: 'a scope resource without name is refused with its index',
      body: withInsight({ scope: { type: 'Instance', resources: [{ kind: 'Pod' }] } }),
      error: /scope.resources\[0\].name is required/,
    },
    {
      says: 'a uid reported twice is refused: uids identify insights',
      body: {
        status: { response: 'Success' },
        spec: { insights: [insight('dup'), insight('ok'), insight('dup')] },
      },
      error: /insights\[2\].uid "dup" is reported twice/,
    },
    {
      says: 'more than 250 insights are refused',
      body: { status: { response: 'Success' }, spec: { insights: Array.from({ length: 251 }, (_, i) => insight(`u${i}`)) } },
      error: /holds 251 insights, more than 250/,
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const got = parseInformerResponse(row.body);
      if (row.error) expect(got).to.have.property('error').that.matches(/^malformed informer answer: /).and.matches(row.error);
      else expect(got).to.deep.equal(row.ok);
    });
  }
});

describe('parseDiscoveryResponse', () => {
  it('lists the handlers an informer serves', () => {
    expect(parseDiscoveryResponse({ kind: 'DiscoveryResponse', handlers: ['updatePlanInsights'] })).to.deep.equal({
      handlers: ['updatePlanInsights'],
    });
  });
  it('refuses an answer without handlers', () => {
    expect(parseDiscoveryResponse({})).to.have.property('error').that.matches(/body.handlers is required/);
  });
  it('refuses a handler that is not a string', () => {
    expect(parseDiscoveryResponse({ handlers: [1] })).to.have.property('error').that.matches(/handlers\[0\] must be a non-empty string/);
  });
});

describe('request bodies', () => {
  it('updatePlanInsights names the plan, the target and the versions given', () => {
    const plan: UpdatePlan = {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'UpdatePlan',
      metadata: { namespace: 'ns', name: 'to-1.3', uid: 'u-1', generation: 2 },
      spec: { targetRelease: 'kafka-1.3.0' },
    };
    const ov = (name: string, version: string) => ({
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'OperatorVersion',
      metadata: { namespace: 'ns', name },
      spec: { version, plans: {} },
    });
    expect(updatePlanInsightsRequest(plan, { target: ov('kafka-1.3.0', '1.3.0') })).to.deep.equal({
      apiVersion: 'hooks.planwarden.dev/v1alpha1',
      kind: 'UpdatePlanInsightsRequest',
      spec: {
        updatePlan: { namespace: 'ns', name: 'to-1.3', uid: 'u-1', generation: 2 },
        targetRelease: 'kafka-1.3.0',
        targetOperatorVersion: { name: 'kafka-1.3.0', namespace: 'ns', version: '1.3.0' },
      },
    });
    expect(updateInsightsRequest({ instance: { namespace: 'ns', name: 'kafka' } }).spec).to.deep.equal({
      instance: { namespace: 'ns', name: 'kafka' },
    });
  });
});

describe('mergeInformerResponse', () => {
  const previous = (insights: Insight[], response: InformerStatus['response'] = 'Success'): InformerStatus => ({
    name: 'broker',
    response,
    lastQueryTime: EARLIER,
    insights,
  });
  const rows: {
    says: string;
    previous?: InformerStatus;
    response: ParsedResponse;
    expected: Omit<InformerStatus, 'name' | 'lastQueryTime'>;
  }[] = [
    {
      says: 'a first Success records its insights',
      response: { response: 'Success', insights: [insight('a')] },
      expected: { response: 'Success', insights: [insight('a')] },
    },
    {
      says: 'a first Wait records no insights',
      response: { response: 'Wait', message: 'building', insights: [] },
      expected: { response: 'Wait', message: 'building', insights: [] },
    },
    {
      says: 'Success replaces a reported insight with its new version',
      previous: previous([insight('a', 'warning')]),
      response: { response: 'Success', insights: [insight('a', 'critical')] },
      expected: { response: 'Success', insights: [insight('a', 'critical')] },
    },
    {
      says: 'an insight no longer reported is kept as resolved, after the reported ones',
      previous: previous([insight('gone'), insight('a')]),
      response: { response: 'Success', insights: [insight('a'), insight('new')] },
      expected: { response: 'Success', insights: [insight('a'), insight('new'), insight('gone', 'warning', true)] },
    },
    {
      says: 'an insight reported again after being resolved comes back as the informer says',
      previous: previous([insight('a', 'warning', true)]),
      response: { response: 'Success', insights: [insight('a', 'error', false)] },
      expected: { response: 'Success', insights: [insight('a', 'error', false)] },
    },
    {
      says: 'resolution keeps the rest of the remediation',
      previous: previous([{ ...insight('a'), remediation: { reference: 'https://r', resolved: false } }]),
      response: { response: 'Success', insights: [] },
      expected: { response: 'Success', insights: [{ ...insight('a'), remediation: { reference: 'https://r', resolved: true } }] },
    },
    {
      says: 'Failure keeps the previous insights unresolved and records its message',
      previous: previous([insight('a')]),
      response: { response: 'Failure', message: 'backend down', insights: [] },
      expected: { response: 'Failure', message: 'backend down', insights: [insight('a')] },
    },
    {
      says: 'Failure without a message says so',
      previous: previous([insight('a')]),
      response: { response: 'Failure', insights: [] },
      expected: { response: 'Failure', message: 'the informer answered Failure without a message', insights: [insight('a')] },
    },
    {
      says: 'Failure adds the insights explaining it and updates ones with the same uid',
      previous: previous([insight('a', 'info'), insight('b')]),
      response: { response: 'Failure', message: 'x', insights: [insight('why', 'error'), insight('a', 'critical')] },
      expected: { response: 'Failure', message: 'x', insights: [insight('a', 'critical'), insight('b'), insight('why', 'error')] },
    },
    {
      says: 'Wait keeps the previous insights and ignores the ones it carries',
      previous: previous([insight('a')]),
      response: { response: 'Wait', insights: [insight('partial')] },
      expected: { response: 'Wait', insights: [insight('a')] },
    },
    {
      says: 'the Success after a Failure resolves the insight that explained the Failure',
      previous: previous([insight('a'), insight('why', 'error')], 'Failure'),
      response: { response: 'Success', insights: [insight('a')] },
      expected: { response: 'Success', insights: [insight('a'), insight('why', 'error', true)] },
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      expect(mergeInformerResponse('broker', row.previous, row.response, NOW)).to.deep.equal({
        name: 'broker',
        lastQueryTime: NOW,
        ...row.expected,
      });
    });
  }

  it(`keeps at most ${MAX_RESOLVED_KEPT} resolved insights, dropping the longest-resolved first`, () => {
    const old = Array.from({ length: MAX_RESOLVED_KEPT }, (_, i) => insight(`old${i}`, 'warning', true));
    const merged = mergeInformerResponse('broker', previous([insight('fresh'), ...old]), { response: 'Success', insights: [] }, NOW);
    const uids = (merged.insights ?? []).map((i) => i.uid);
    expect(uids).to.have.length(MAX_RESOLVED_KEPT);
    expect(uids[0]).to.equal('fresh');
    expect(uids).not.to.include(`old${MAX_RESOLVED_KEPT - 1}`);
    expect(merged.insights!.every((i) => i.remediation?.resolved === true)).to.equal(true);
  });

  it('does not mutate the previous entry', () => {
    const before = previous([insight('a')]);
    const copy = structuredClone(before);
    mergeInformerResponse('broker', before, { response: 'Success', insights: [] }, NOW);
    expect(before).to.deep.equal(copy);
  });
});

describe('updatePlanConditions', () => {
  function informer(name: string, enabled?: boolean, deleting = false): UpdateInformer {
    return {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'UpdateInformer',
      metadata: { name, ...(deleting ? { deletionTimestamp: EARLIER } : {}) },
      spec: { clientConfig: { url: `https://${name}.example.com` }, ...(enabled === undefined ? {} : { enabled }) },
    };
  }
  function entry(name: string, response: InformerStatus['response'], insights: Insight[] = [], message?: string): InformerStatus {
    return { name, response, lastQueryTime: EARLIER, insights, ...(message ? { message } : {}) };
  }
  function plan(opts: {
    entries: InformerStatus[];
    accepted?: [string, string, boolean?][];
    generation?: number;
    observedGeneration?: number;
    conditions?: Condition[];
  }): UpdatePlan {
    const generation = opts.generation ?? 1;
    return {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'UpdatePlan',
      metadata: { namespace: 'ns', name: 'p', generation },
      spec: {
        targetRelease: 'kafka-1.3.0',
        acceptedInsights: (opts.accepted ?? []).map(([updateInformer, uid, accepted]) => ({ updateInformer, uid, accepted: accepted ?? true })),
      },
      status: { observedGeneration: opts.observedGeneration ?? generation, informers: opts.entries, conditions: opts.conditions ?? [] },
    };
  }
  type Expect = [Condition['status'], string, RegExp?];
  const a = informer('a');
  const b = informer('b');
  const rows: { says: string; plan: UpdatePlan; informers: UpdateInformer[]; analyzed?: Expect; risks?: Expect }[] = [
    {
      says: 'with no informers at all the plan is analysed (nothing to ask)',
      plan: plan({ entries: [] }),
      informers: [],
      analyzed: ['True', 'NoInformers'],
      risks: ['True', 'NoRisks'],
    },
    {
      says: 'with only disabled informers the plan is analysed',
      plan: plan({ entries: [] }),
      informers: [informer('off', false)],
      analyzed: ['True', 'NoInformers'],
    },
    {
      says: 'every enabled informer answering Success makes it analysed',
      plan: plan({ entries: [entry('a', 'Success'), entry('b', 'Success')] }),
      informers: [a, b],
      analyzed: ['True', 'AllInformersAnswered', /all 2 informers answered Success/],
    },
    {
      says: 'an informer without spec.enabled counts as enabled',
      plan: plan({ entries: [entry('a', 'Success')] }),
      informers: [a, informer('silent')],
      analyzed: ['Unknown', 'Waiting', /"silent" has not answered yet/],
    },
    {
      says: 'a disabled informer does not hold up the analysis',
      plan: plan({ entries: [entry('a', 'Success')] }),
      informers: [a, informer('off', false)],
      analyzed: ['True', 'AllInformersAnswered', /the informer answered Success/],
    },
    {
      says: 'an informer being deleted does not hold up the analysis',
      plan: plan({ entries: [entry('a', 'Success')] }),
      informers: [a, informer('leaving', true, true)],
      analyzed: ['True', 'AllInformersAnswered'],
    },
    {
      says: 'an informer that answered Wait keeps the analysis Unknown, with its message',
      plan: plan({ entries: [entry('a', 'Success'), entry('b', 'Wait', [], 'warming up')] }),
      informers: [a, b],
      analyzed: ['Unknown', 'Waiting', /"b" answered Wait: warming up/],
    },
    {
      says: 'an informer that failed makes the analysis False, naming it and its message',
      plan: plan({ entries: [entry('a', 'Failure', [], 'backend down'), entry('b', 'Success')] }),
      informers: [a, b],
      analyzed: ['False', 'InformerFailed', /informer "a" failed: backend down/],
    },
    {
      says: 'a failure wins over a wait',
      plan: plan({ entries: [entry('a', 'Wait'), entry('b', 'Failure', [], 'x')] }),
      informers: [a, b],
      analyzed: ['False', 'InformerFailed', /"b" failed/],
    },
    {
      says: 'several failures are all named',
      plan: plan({ entries: [entry('a', 'Failure', [], 'x'), entry('b', 'Failure', [], 'y')] }),
      informers: [b, a],
      analyzed: ['False', 'InformerFailed', /"a" failed: x \(also failed: "b"\)/],
    },
    {
      says: 'answers for an older generation do not count: Unknown until asked again',
      plan: plan({ entries: [entry('a', 'Success')], generation: 3, observedGeneration: 2 }),
      informers: [a],
      analyzed: ['Unknown', 'Waiting', /generation 3/],
    },
    {
      says: 'the entry of an informer that no longer exists is ignored by Analyzed',
      plan: plan({ entries: [entry('a', 'Success'), entry('gone', 'Failure', [], 'x')] }),
      informers: [a],
      analyzed: ['True', 'AllInformersAnswered'],
    },
    {
      says: 'info and unknown insights need no acceptance',
      plan: plan({ entries: [entry('a', 'Success', [insight('i', 'info'), insight('u', 'unknown')])] }),
      informers: [a],
      risks: ['True', 'NoRisks'],
    },
    {
      says: 'an unaccepted warning leaves risks pending, naming it',
      plan: plan({ entries: [entry('a', 'Success', [insight('w', 'warning')])] }),
      informers: [a],
      risks: ['False', 'RisksPending', /^1 insight needs acceptance: a\/w \(warning\)$/],
    },
    {
      says: 'accepted warning, error and critical insights make risks accepted',
      plan: plan({
        entries: [entry('a', 'Success', [insight('w', 'warning'), insight('e', 'error')]), entry('b', 'Success', [insight('c', 'critical')])],
        accepted: [['a', 'w'], ['a', 'e'], ['b', 'c']],
      }),
      informers: [a, b],
      risks: ['True', 'AllRisksAccepted', /all 3 unresolved risks are accepted/],
    },
    {
      says: 'an acceptance with accepted: false does not count',
      plan: plan({ entries: [entry('a', 'Success', [insight('w')])], accepted: [['a', 'w', false]] }),
      informers: [a],
      risks: ['False', 'RisksPending'],
    },
    {
      says: 'an acceptance names the informer too: the same uid from another informer is not accepted',
      plan: plan({ entries: [entry('a', 'Success', [insight('w')])], accepted: [['b', 'w']] }),
      informers: [a, b],
      risks: ['False', 'RisksPending', /a\/w/],
    },
    {
      says: 'a resolved insight needs no acceptance',
      plan: plan({ entries: [entry('a', 'Success', [insight('w', 'critical', true)])] }),
      informers: [a],
      risks: ['True', 'NoRisks'],
    },
    {
      says: 'the insights kept through a Failure still need acceptance',
      plan: plan({ entries: [entry('a', 'Failure', [insight('w', 'error')], 'x')] }),
      informers: [a],
      risks: ['False', 'RisksPending', /a\/w \(error\)/],
    },
    {
      says: 'many pending risks list the first three and count the rest',
      plan: plan({ entries: [entry('a', 'Success', ['1', '2', '3', '4', '5'].map((u) => insight(u, 'error')))] }),
      informers: [a],
      risks: ['False', 'RisksPending', /^5 insights need acceptance: a\/1 \(error\), a\/2 \(error\), a\/3 \(error\) and 2 more$/],
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const conditions = updatePlanConditions(row.plan, row.informers, NOW);
      for (const [type, want] of [['Analyzed', row.analyzed], ['RisksAccepted', row.risks]] as const) {
        if (!want) continue;
        const c = findCondition(conditions, type)!;
        expect([c.status, c.reason], `${type}: ${c.message}`).to.deep.equal([want[0], want[1]]);
        if (want[2]) expect(c.message).to.match(want[2]);
        expect(c.observedGeneration).to.equal(row.plan.metadata.generation);
      }
    });
  }

  it('keeps other conditions and moves lastTransitionTime only on a change of status', () => {
    const previous: Condition[] = [
      { type: 'Custom', status: 'True', lastTransitionTime: EARLIER },
      { type: 'Analyzed', status: 'True', reason: 'Old', lastTransitionTime: EARLIER },
      { type: 'RisksAccepted', status: 'True', lastTransitionTime: EARLIER },
    ];
    const p = plan({ entries: [entry('a', 'Success', [insight('w')])], conditions: previous });
    const conditions = updatePlanConditions(p, [informer('a')], NOW);
    expect(conditions.map((c) => c.type)).to.deep.equal(['Custom', 'Analyzed', 'RisksAccepted']);
    expect(findCondition(conditions, 'Analyzed')!.lastTransitionTime).to.equal(EARLIER);
    expect(findCondition(conditions, 'RisksAccepted')!.lastTransitionTime).to.equal(NOW);
  });
});
