// The pure parts of a plan preview (shared/plan/preview.ts): the diff a person reads (the API
// server's noise taken out, list-map keys honoured, secrets hidden), the digest, and a golden
// tree.
import { expect } from 'chai';
import {
  comparable,
  countObjects,
  diffObjects,
  planDigest,
  renderPreviewDiff,
  renderPreviewTree,
  secretHash,
  type FieldChange,
  type Preview,
} from '../../../../shared/plan/preview.ts';
import type { PlannedTask } from '../../../../shared/plan/preflight.ts';

const deployment = (replicas: number, image = 'web:1', extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' }, ...extra },
  spec: {
    replicas,
    template: {
      spec: {
        containers: [
          { name: 'sidecar', image: 'proxy:2' },
          { name: 'web', image, env: [{ name: 'A', value: '1' }] },
        ],
      },
    },
  },
});

describe('plan preview: the diff (shared/plan/preview.ts)', function () {
  it('a changed REPLICAS is one field, the server’s metadata and status are not changes', function () {
    const live = {
      ...deployment(1),
      metadata: {
        ...deployment(1).metadata,
        resourceVersion: '41',
        uid: 'u',
        generation: 3,
        creationTimestamp: '2026-01-01T00:00:00Z',
        managedFields: [{ manager: 'x' }],
        annotations: { 'deployment.kubernetes.io/revision': '3' },
      },
      status: { replicas: 1 },
    };
    expect(
      diffObjects(live, { ...deployment(3), metadata: { ...deployment(3).metadata, resourceVersion: '42', managedFields: [] } }),
    ).to.deep.equal([{ path: 'spec.replicas', op: '~', from: 1, to: 3 }]);
  });

  it('lists of maps are compared by their key (containers by name), not by position', function () {
    const live = deployment(1);
    const desired = deployment(1, 'web:2');
    desired.spec.template.spec.containers.reverse();
    expect(diffObjects(live, desired)).to.deep.equal([
      { path: 'spec.template.spec.containers[name=web].image', op: '~', from: 'web:1', to: 'web:2' },
    ]);
  });

  it('an added and a removed field', function () {
    expect(diffObjects({ a: 1, b: { c: 2 } }, { a: 1, b: { d: 3 } })).to.deep.equal([
      { path: 'b.c', op: '-', from: 2 },
      { path: 'b.d', op: '+', to: 3 },
    ]);
  });

  it('a Secret’s data is compared by hash, stringData as the data it becomes; a value from a secret parameter is not compared', function () {
    const live = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      data: { password: Buffer.from('hunter2').toString('base64'), user: Buffer.from('root').toString('base64') },
    };
    const desired = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      stringData: { password: '<secret: creds/password>', user: 'admin' },
    };
    const changes = diffObjects(live, desired);
    expect(changes).to.deep.equal([
      { path: 'data.password', op: '?' },
      { path: 'data.user', op: '~', from: secretHash('root'), to: secretHash('admin') },
    ]);
    expect(JSON.stringify(changes)).to.not.include('hunter2').and.not.include('root"').and.not.include('admin"');
    expect(JSON.stringify(comparable(live))).to.not.include(Buffer.from('hunter2').toString('base64'));
  });
});

describe('plan preview: the digest', function () {
  const tasks: PlannedTask[] = [
    { phase: 'p', step: 's', task: 'app', kind: 'Apply', objects: [{ template: 'd.yaml', object: deployment(1) }] },
  ];
  const base = { operatorVersion: { name: 'app-1', uid: 'u1', generation: 1 }, plan: 'deploy', values: { REPLICAS: '1' }, tasks };
  it('is stable, and changes with a value, an object, the blueprint’s generation or uid', function () {
    const d = planDigest(base);
    expect(d).to.match(/^sha256:[0-9a-f]{32}$/);
    expect(planDigest({ ...base, values: { REPLICAS: '1' } })).to.equal(d);
    expect(planDigest({ ...base, values: { REPLICAS: '2' } })).to.not.equal(d);
    expect(planDigest({ ...base, operatorVersion: { ...base.operatorVersion, generation: 2 } })).to.not.equal(d);
    expect(planDigest({ ...base, operatorVersion: { ...base.operatorVersion, uid: 'u2' } })).to.not.equal(d);
    expect(planDigest({ ...base, tasks: [{ ...tasks[0]!, objects: [{ template: 'd.yaml', object: deployment(2) }] }] })).to.not.equal(d);
  });
});

describe('plan preview: the tree (golden)', function () {
  const preview: Preview = {
    instance: 'web',
    namespace: 'shop',
    plan: 'update',
    operatorVersion: 'webapp-1.0.0',
    trigger: 'change of REPLICAS',
    verdict: { allowed: true, warnings: [] },
    serviceAccount: 'planwarden-plans',
    tasks: [
      {
        phase: 'main',
        step: 'config',
        task: 'config',
        kind: 'Apply',
        objects: [{ ref: 'ConfigMap shop/web', template: 'cm.yaml', state: 'unchanged' }],
      },
      {
        phase: 'main',
        step: 'app',
        task: 'app',
        kind: 'Apply',
        objects: [
          {
            ref: 'Deployment shop/web',
            template: 'deploy.yaml',
            state: 'change',
            changes: [{ path: 'spec.replicas', op: '~', from: 1, to: 3 }],
          },
          { ref: 'Service shop/web', template: 'svc.yaml', state: 'create' },
        ],
      },
      {
        phase: 'main',
        step: 'app',
        task: 'old',
        kind: 'Delete',
        objects: [{ ref: 'Job shop/migrate', template: 'job.yaml', state: 'delete' }],
      },
      { phase: 'check', step: 'smoke', task: 'wait', kind: 'Dummy', note: 'nothing to apply', objects: [] },
    ],
    counts: { create: 0, change: 0, delete: 0, unchanged: 0, unknown: 0 },
    digest: 'sha256:0123456789abcdef0123456789abcdef',
  };
  preview.counts = countObjects(preview.tasks);

  it('reads as phases, steps, tasks and objects, with counts and the digest', function () {
    expect(renderPreviewTree(preview)).to.equal(
      [
        'Preview of plan update on Instance shop/web (change of REPLICAS), OperatorVersion webapp-1.0.0, as ServiceAccount planwarden-plans',
        'The trigger would be admitted.',
        'phase main',
        '  step config',
        '    task config (Apply)',
        '      = ConfigMap shop/web (template cm.yaml): unchanged',
        '  step app',
        '    task app (Apply)',
        '      ~ Deployment shop/web (template deploy.yaml): changed',
        '          ~ spec.replicas: 1 → 3',
        '      + Service shop/web (template svc.yaml): created',
        '    task old (Delete)',
        '      - Job shop/migrate (template job.yaml): deleted',
        'phase check',
        '  step smoke',
        '    task wait (Dummy): nothing to apply',
        '1 to create, 1 to change, 1 to delete, 1 unchanged',
        'digest sha256:0123456789abcdef0123456789abcdef',
        '',
      ].join('\n'),
    );
  });

  it('the diff lists what changes, object by object', function () {
    expect(renderPreviewDiff(preview)).to.equal(
      [
        '--- live Deployment shop/web',
        '+++ plan update Deployment shop/web',
        '~ spec.replicas: 1 → 3',
        '--- /dev/null',
        '+++ plan update Service shop/web',
        '--- live Job shop/migrate',
        '+++ /dev/null',
        '',
      ].join('\n'),
    );
  });
});

describe('plan preview: a multi-line value, line by line', function () {
  const conf = (lines: string[]) => `${lines.join('\n')}\n`;
  const base = Array.from({ length: 12 }, (_, i) => `key${i} ${i}`);
  const withChange = (changes: FieldChange[]): Preview => ({
    instance: 'store',
    namespace: 'kv',
    plan: 'upgrade',
    operatorVersion: 'kv-store-1.1.0',
    trigger: 'upgrade to kv-store-1.1.0',
    verdict: { allowed: true, warnings: [] },
    serviceAccount: 'planwarden-plans',
    tasks: [
      {
        phase: 'upgrade',
        step: 'config',
        task: 'config',
        kind: 'Apply',
        objects: [{ ref: 'ConfigMap kv/store-config', template: 'configmap.yaml', state: 'change', changes }],
      },
    ],
    counts: { create: 0, change: 1, delete: 0, unchanged: 0, unknown: 0 },
    digest: 'sha256:0123456789abcdef0123456789abcdef',
  });
  const fieldLines = (p: Preview) => renderPreviewDiff(p).split('\n').slice(2, -1);

  it('shows the lines that change with two around them, and counts the rest (one is shown, not counted)', function () {
    const to = [...base];
    to[5] = 'key5 five';
    to.push('maxclients 1000');
    expect(
      fieldLines(
        withChange([{ path: 'data.kv.conf', op: '~', from: conf(base.slice(0, 4)), to: conf(['key0 zero', ...base.slice(1, 4)]) }]),
      ),
    ).to.deep.equal(['~ data.kv.conf:', '    - key0 0', '    + key0 zero', '      key1 1', '      key2 2', '      key3 3']);
    expect(fieldLines(withChange([{ path: 'data.kv.conf', op: '~', from: conf(base), to: conf(to) }]))).to.deep.equal([
      '~ data.kv.conf:',
      '      … 3 unchanged lines',
      '      key3 3',
      '      key4 4',
      '    - key5 5',
      '    + key5 five',
      '      key6 6',
      '      key7 7',
      '      … 2 unchanged lines',
      '      key10 10',
      '      key11 11',
      '    + maxclients 1000',
    ]);
  });

  it('indents it in the tree under its object, and shows an added or removed text whole', function () {
    const tree = renderPreviewTree(
      withChange([
        { path: 'data.a', op: '+', to: 'one\ntwo\n' },
        { path: 'data.b', op: '-', from: 'three\nfour' },
      ]),
    );
    expect(tree).to.contain(
      [
        '      ~ ConfigMap kv/store-config (template configmap.yaml): changed',
        '          + data.a:',
        '              + one',
        '              + two',
        '          - data.b:',
        '              - three',
        '              - four',
      ].join('\n'),
    );
  });

  it('bounds what it shows: 60 lines of a long text, a count for texts too different to compare', function () {
    const long = Array.from({ length: 500 }, (_, i) => `line ${i}`);
    const added = fieldLines(withChange([{ path: 'data.big', op: '+', to: conf(long) }]));
    expect(added).to.have.length(62);
    expect(added.at(-1)).to.equal('      … 440 more lines');
    const other = long.map((l) => `${l} changed`);
    expect(
      fieldLines(
        withChange([
          {
            path: 'data.big',
            op: '~',
            from: conf(long.concat(long, long, long, long)),
            to: conf(other.concat(other, other, other, other)),
          },
        ]),
      ),
    ).to.deep.equal(['~ data.big:', '      2500 lines replaced by 2500 lines (too different to compare line by line)']);
  });
});
