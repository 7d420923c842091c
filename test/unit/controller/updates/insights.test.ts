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
import { scopeDigest } from '../../../../shared/insights.ts';
import {
  HOOK_PATHS,
  MAX_RESOLVED_KEPT,
  informerEndpoint,
  mergeInformerResponse,
  updateInsightsRequest,
  updatePlanConditions,
  updatePlanInsightsRequest,
  DEGRADED_INSIGHT_UID,
  degradedInsight,
  type InformerOutcome,
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
    const context = { clusterID: 'c-uid', current: ov('kafka-1.2.0', '1.2.0'), target: ov('kafka-1.3.0', '1.3.0'), informerUpdate: true };
    expect(updatePlanInsightsRequest(plan, context)).to.deep.equal({
      apiVersion: 'hooks.planwarden.dev/v1alpha1',
      kind: 'UpdatePlanInsightsRequest',
      spec: {
        clusterID: 'c-uid',
        currentOperatorVersion: { name: 'kafka-1.2.0', namespace: 'ns', version: '1.2.0' },
        targetOperatorVersion: { name: 'kafka-1.3.0', namespace: 'ns', version: '1.3.0' },
        informerUpdate: true,
        updatePlan: { namespace: 'ns', name: 'to-1.3', uid: 'u-1', generation: 2 },
        targetRelease: 'kafka-1.3.0',
      },
    });
    expect(updateInsightsRequest({ namespace: 'ns', name: 'kafka', plan: 'upgrade' }, { informerUpdate: false }).spec).to.deep.equal({
      informerUpdate: false,
      instance: { namespace: 'ns', name: 'kafka', plan: 'upgrade' },
    });
  });
});

describe('mergeInformerResponse', () => {
  const BOUND = 5 * 60_000;
  const merge = (previous: InformerStatus | undefined, outcome: InformerOutcome, now = NOW) =>
    mergeInformerResponse('broker', previous, outcome, now, { waitBoundMs: BOUND });
  const previous = (
    insights: Insight[],
    response: InformerStatus['response'] = 'Success',
    extra: Partial<InformerStatus> = {},
  ): InformerStatus => ({
    name: 'broker',
    response,
    lastQueryTime: EARLIER,
    insights,
    ...extra,
  });
  const answer = (response: InformerStatus['response'], insights: Insight[] = [], message?: string, findings: string[] = []) => ({
    response,
    insights,
    findings,
    ...(message === undefined ? {} : { message }),
  });
  const uids = (entry: InformerStatus) => (entry.insights ?? []).map((i) => `${i.uid}${i.remediation?.resolved ? ' (resolved)' : ''}`);

  const rows: {
    says: string;
    previous?: InformerStatus;
    outcome: InformerOutcome;
    expected: Omit<InformerStatus, 'name' | 'lastQueryTime'>;
  }[] = [
    {
      says: 'a first Success records its insights',
      outcome: answer('Success', [insight('a')]),
      expected: { response: 'Success', insights: [insight('a')] },
    },
    {
      says: 'a first Wait records no insights and when the waiting began',
      outcome: answer('Wait', [], 'building'),
      expected: { response: 'Wait', message: 'building', waitingSince: NOW, insights: [] },
    },
    {
      says: 'Success replaces a reported insight with its new version',
      previous: previous([insight('a', 'warning')]),
      outcome: answer('Success', [insight('a', 'critical')]),
      expected: { response: 'Success', insights: [insight('a', 'critical')] },
    },
    {
      says: 'an insight no longer reported is kept as resolved, after the reported ones',
      previous: previous([insight('gone'), insight('a')]),
      outcome: answer('Success', [insight('a'), insight('new')]),
      expected: { response: 'Success', insights: [insight('a'), insight('new'), insight('gone', 'warning', true)] },
    },
    {
      says: 'an insight reported again after being resolved comes back as the informer says',
      previous: previous([insight('a', 'warning', true)]),
      outcome: answer('Success', [insight('a', 'error', false)]),
      expected: { response: 'Success', insights: [insight('a', 'error', false)] },
    },
    {
      says: 'identity is informer + scope + uid: the same uid with another scope resolves the old one',
      previous: previous([{ ...insight('a'), scope: { type: 'Instance', resources: [{ kind: 'Pod', name: 'p-0' }] } }]),
      outcome: answer('Success', [{ ...insight('a'), scope: { type: 'Instance', resources: [{ kind: 'Pod', name: 'p-1' }] } }]),
      expected: {
        response: 'Success',
        insights: [
          { ...insight('a'), scope: { type: 'Instance', resources: [{ kind: 'Pod', name: 'p-1' }] } },
          { ...insight('a', 'warning', true), scope: { type: 'Instance', resources: [{ kind: 'Pod', name: 'p-0' }] } },
        ],
      },
    },
    {
      says: 'resolution keeps the rest of the remediation',
      previous: previous([{ ...insight('a'), remediation: { reference: 'https://r', resolved: false } }]),
      outcome: answer('Success'),
      expected: { response: 'Success', insights: [{ ...insight('a'), remediation: { reference: 'https://r', resolved: true } }] },
    },
    {
      says: 'Wait keeps the previous insights and ignores the ones it carries',
      previous: previous([insight('a')]),
      outcome: answer('Wait', [insight('partial')]),
      expected: { response: 'Wait', waitingSince: NOW, insights: [insight('a')] },
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      expect(merge(row.previous, row.outcome)).to.deep.equal({ name: 'broker', lastQueryTime: NOW, ...row.expected });
    });
  }

  it('Failure keeps the previous insights, adds the ones it carries, and makes the informer a risk of its own', () => {
    const merged = merge(
      previous([insight('a', 'info'), insight('b')]),
      answer('Failure', [insight('why', 'error'), insight('a', 'critical')], 'backend down'),
    );
    expect(merged.response).to.equal('Failure');
    expect(merged.message).to.equal('backend down');
    expect(merged.findings).to.deep.equal(['answered Failure: backend down']);
    expect(uids(merged)).to.deep.equal([DEGRADED_INSIGHT_UID, 'a', 'b', 'why']);
    const degraded = merged.insights![0]!;
    expect(degraded.impact).to.include({ level: 'error', type: 'informer-degraded' });
    expect(degraded.impact.summary).to.match(
      /^informer broker is degraded, its insights may be incomplete: answered Failure: backend down$/,
    );
    expect(degraded.scope).to.deep.equal({
      type: 'UpdateInformer',
      resources: [{ group: 'planwarden.dev', kind: 'UpdateInformer', name: 'broker' }],
    });
    expect(merged.insights![1]!.impact.level).to.equal('critical');
  });

  it('Failure without a message says so', () => {
    expect(merge(previous([]), answer('Failure')).message).to.equal('the informer answered Failure without a message');
  });

  it('a query that got no answer keeps the insights and records the error as the finding', () => {
    const merged = merge(previous([insight('a')]), { error: 'POST https://x/…: HTTP 500: boom' });
    expect(merged.response).to.equal('Failure');
    expect(merged.findings).to.deep.equal(['POST https://x/…: HTTP 500: boom']);
    expect(uids(merged)).to.deep.equal([DEGRADED_INSIGHT_UID, 'a']);
  });

  it('findings in a Success keep the good insights and add the degraded insight, stable across rounds', () => {
    const first = merge(undefined, answer('Success', [insight('a')], undefined, ['insights[1] is ignored: uid is required']));
    expect(uids(first)).to.deep.equal([DEGRADED_INSIGHT_UID, 'a']);
    const again = merge(
      first,
      answer('Success', [insight('a')], undefined, ['insights[1] is ignored: uid is required']),
      '2026-01-01T02:00:00Z',
    );
    expect(again.insights![0]!.acquisitionTime, 'the degraded insight keeps its first acquisitionTime').to.equal(NOW);
  });

  it('a clean Success after a degradation resolves the degraded insight', () => {
    const degraded = merge(previous([insight('a')]), answer('Failure', [], 'down'));
    const healed = merge(degraded, answer('Success', [insight('a')]));
    expect(healed.findings).to.equal(undefined);
    expect(uids(healed)).to.deep.equal(['a', `${DEGRADED_INSIGHT_UID} (resolved)`]);
  });

  it('a response that is none of Success, Failure and Wait counts as a Failure: its insights kept, the informer degraded', () => {
    const merged = merge(previous([insight('a')]), { ...answer('Failure', [insight('b')]), reportedResponse: '"OK"' });
    expect(merged.findings).to.deep.equal([
      'answered status.response "OK", none of Success, Failure and Wait: counted as a Failure, its insights kept',
    ]);
    expect(merged.message).to.equal('status.response "OK": counted as a Failure');
    expect(uids(merged)).to.deep.equal([DEGRADED_INSIGHT_UID, 'a', 'b']);
  });

  it('Wait is honoured up to the bound; past it the informer is degraded, waitingSince kept', () => {
    const waiting = previous([insight('a')], 'Wait', { waitingSince: EARLIER });
    const within = merge(waiting, answer('Wait'), '2026-01-01T00:04:59Z');
    expect(within.findings).to.equal(undefined);
    expect(within.waitingSince).to.equal(EARLIER);
    const past = merge(waiting, answer('Wait'), '2026-01-01T00:05:00Z');
    expect(past.findings).to.deep.equal(['has answered Wait for more than 5m']);
    expect(past.waitingSince).to.equal(EARLIER);
    expect(uids(past)).to.deep.equal([DEGRADED_INSIGHT_UID, 'a']);
  });

  it(`keeps at most ${MAX_RESOLVED_KEPT} resolved insights, dropping the longest-resolved first`, () => {
    const old = Array.from({ length: MAX_RESOLVED_KEPT }, (_, i) => insight(`old${i}`, 'warning', true));
    const merged = merge(previous([insight('fresh'), ...old]), answer('Success'));
    const list = (merged.insights ?? []).map((i) => i.uid);
    expect(list).to.have.length(MAX_RESOLVED_KEPT);
    expect(list[0]).to.equal('fresh');
    expect(list).not.to.include(`old${MAX_RESOLVED_KEPT - 1}`);
    expect(merged.insights!.every((i) => i.remediation?.resolved === true)).to.equal(true);
  });

  it('does not mutate the previous entry', () => {
    const before = previous([insight('a')]);
    const copy = structuredClone(before);
    merge(before, answer('Failure', [], 'x'));
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
  function degraded(name: string, response: InformerStatus['response']): InformerStatus {
    return { ...entry(name, response, [degradedInsight(name, ['x'], EARLIER)]), findings: ['x'] };
  }
  function plan(opts: {
    entries: InformerStatus[];
    accepted?: [string, string, boolean?][];
    acceptedDigests?: [string, string, string][];
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
        acceptedInsights: [
          ...(opts.accepted ?? []).map(([updateInformer, uid, accepted]) => ({ updateInformer, uid, accepted: accepted ?? true })),
          ...(opts.acceptedDigests ?? []).map(([updateInformer, uid, digest]) => ({
            updateInformer,
            uid,
            accepted: true,
            scopeDigest: digest,
          })),
        ],
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
      says: 'a degraded informer has had its say: the analysis is True, naming it, and its risk is pending',
      plan: plan({ entries: [degraded('a', 'Failure'), entry('b', 'Success')] }),
      informers: [a, b],
      analyzed: ['True', 'InformersDegraded', /degraded \(a risk to fix or accept\): "a"/],
      risks: ['False', 'RisksPending', /a\/planwarden.dev\/informer-degraded \(error\)/],
    },
    {
      says: 'a wait within the bound still holds the analysis while another informer is degraded',
      plan: plan({ entries: [entry('a', 'Wait'), degraded('b', 'Failure')] }),
      informers: [a, b],
      analyzed: ['Unknown', 'Waiting', /"a" answered Wait/],
    },
    {
      says: 'a wait past the bound (degraded) no longer holds the analysis',
      plan: plan({ entries: [degraded('a', 'Wait'), entry('b', 'Success')] }),
      informers: [a, b],
      analyzed: ['True', 'InformersDegraded', /"a"/],
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
      says: 'status and info insights need no acceptance',
      plan: plan({ entries: [entry('a', 'Success', [insight('i', 'info'), insight('s', 'status')])] }),
      informers: [a],
      risks: ['True', 'NoRisks'],
    },
    {
      says: 'an insight of a level planwarden does not know needs acceptance',
      plan: plan({ entries: [entry('a', 'Success', [insight('u', 'unknown')])] }),
      informers: [a],
      risks: ['False', 'RisksPending', /a\/u \(unknown\)/],
    },
    {
      says: 'an acceptance is bound to the scope it was given for',
      plan: plan({
        entries: [entry('a', 'Success', [{ ...insight('w'), scope: { type: 'Instance', resources: [{ kind: 'Pod', name: 'p-1' }] } }])],
        acceptedDigests: [['a', 'w', scopeDigest({ type: 'Instance', resources: [{ kind: 'Pod', name: 'p-0' }] })]],
      }),
      informers: [a],
      risks: ['False', 'RisksPending', /a\/w/],
    },
    {
      says: 'an acceptance of the same scope counts, in any order of its elements',
      plan: plan({
        entries: [
          entry('a', 'Success', [
            {
              ...insight('w'),
              scope: {
                type: 'Instance',
                resources: [
                  { kind: 'Pod', name: 'p-1' },
                  { kind: 'Node', name: 'n' },
                ],
              },
            },
          ]),
        ],
        acceptedDigests: [
          [
            'a',
            'w',
            scopeDigest({
              type: 'Instance',
              resources: [
                { kind: 'Node', name: 'n' },
                { kind: 'Pod', name: 'p-1' },
              ],
            }),
          ],
        ],
      }),
      informers: [a],
      risks: ['True', 'AllRisksAccepted'],
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
        entries: [
          entry('a', 'Success', [insight('w', 'warning'), insight('e', 'error')]),
          entry('b', 'Success', [insight('c', 'critical')]),
        ],
        accepted: [
          ['a', 'w'],
          ['a', 'e'],
          ['b', 'c'],
        ],
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
      plan: plan({
        entries: [
          entry(
            'a',
            'Success',
            ['1', '2', '3', '4', '5'].map((u) => insight(u, 'error')),
          ),
        ],
      }),
      informers: [a],
      risks: ['False', 'RisksPending', /^5 insights need acceptance: a\/1 \(error\), a\/2 \(error\), a\/3 \(error\) and 2 more$/],
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const conditions = updatePlanConditions(row.plan, row.informers, NOW);
      for (const [type, want] of [
        ['Analyzed', row.analyzed],
        ['RisksAccepted', row.risks],
      ] as const) {
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
