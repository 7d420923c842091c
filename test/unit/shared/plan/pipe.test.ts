// Pipe's pure parts: the names KUDO's packages expect, the Pod's shape, and what a finished
// Pod's termination messages carry.
import { expect } from 'chai';
import { pipeObjectName, pipePodShape, planPipes, readPipeCapture, TERMINATION_MESSAGE_LIMIT } from '../../../../shared/plan/pipe.ts';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const at = { instance: 'My-Shop', plan: 'deploy', phase: 'main', step: 'gen_certs', task: 'certs' };

describe('shared/plan/pipe', () => {
  describe('pipeObjectName', () => {
    it("is KUDO's <instance>.<plan>.<phase>.<step>.<task>.<key>, lower-cased, letters and digits only", () => {
      expect(pipeObjectName(at, 'Cert')).to.equal('myshop.deploy.main.gencerts.certs.cert');
    });
    it('cuts a name past 253 characters and ends it in a hash: still valid, and distinct per task', () => {
      const long = { ...at, instance: 'a'.repeat(250) };
      const a = pipeObjectName(long, 'cert');
      const b = pipeObjectName({ ...long, task: 'other' }, 'cert');
      expect(a.length).to.be.at.most(253);
      expect(a).to.match(DNS_SUBDOMAIN);
      expect(a).not.to.equal(b);
    });
    it('hashes a name with a part that has no letter or digit instead of writing an empty label', () => {
      expect(pipeObjectName({ ...at, step: '--' }, 'cert')).to.match(DNS_SUBDOMAIN);
    });
  });

  it("planPipes names every key the plan's Pipe tasks store", () => {
    const spec = {
      tasks: [{ name: 'certs', kind: 'Pipe' as const, spec: { pod: 'p', pipe: [{ file: '/o/c', kind: 'Secret' as const, key: 'cert' }] } }],
      plans: { deploy: { phases: [{ name: 'main', steps: [{ name: 'gen_certs', tasks: ['certs'] }] }] }, other: { phases: [] } },
    };
    expect(planPipes(spec, 'My-Shop', 'deploy')).to.deep.equal({ cert: 'myshop.deploy.main.gencerts.certs.cert' });
    expect(planPipes(spec, 'My-Shop', 'other')).to.deep.equal({});
  });

  describe('pipePodShape', () => {
    const pod = (spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec });
    const init = { name: 'g', image: 'x', volumeMounts: [{ name: 'out', mountPath: '/out' }] };
    const files = [{ file: '/out/c.pem', kind: 'Secret' as const, key: 'c' }];
    it("accepts KUDO's Pipe Pod: one init container writing into the one emptyDir", () => {
      expect(pipePodShape(pod({ volumes: [{ name: 'out', emptyDir: {} }], initContainers: [init] }), files)).to.deep.equal({
        volume: 'out',
        mountPath: '/out',
      });
    });
    it('refuses a file outside the mount, or reaching out of it with ..', () => {
      const p = pod({ volumes: [{ name: 'out', emptyDir: {} }], initContainers: [init] });
      expect(pipePodShape(p, [{ ...files[0]!, file: '/etc/passwd' }])).to.deep.equal({
        problems: ['file /etc/passwd is not under the mount path /out of volume out'],
      });
      expect(pipePodShape(p, [{ ...files[0]!, file: '/out/../etc/passwd' }])).to.have.property('problems');
    });
    it('refuses containers, two init containers, no emptyDir, restartPolicy Always', () => {
      const out = pipePodShape(pod({ containers: [{ name: 'c' }], initContainers: [init, init], restartPolicy: 'Always' }), files);
      expect(out).to.have.property('problems').with.length(4);
    });
  });

  describe('readPipeCapture', () => {
    const files = [{ file: '/out/c.pem', kind: 'Secret' as const, key: 'c' }];
    const done = (message: string) => ({
      status: { phase: 'Succeeded', containerStatuses: [{ name: 'capture-0', state: { terminated: { exitCode: 0, message } } }] },
    });
    it('decodes the base64 the capture container wrote', () => {
      expect(readPipeCapture(done(Buffer.from('pem').toString('base64')), files)).to.deep.equal({
        kind: 'captured',
        contents: [Buffer.from('pem')],
      });
    });
    it("refuses a message that reached the kubelet's limit: it may have been cut", () => {
      const out = readPipeCapture(done('A'.repeat(TERMINATION_MESSAGE_LIMIT)), files);
      expect(out.kind).to.equal('failed');
    });
    it('refuses a message that is not base64', () => {
      expect(readPipeCapture(done('hello world'), files).kind).to.equal('failed');
    });
    it('is running until the Pod succeeded or failed', () => {
      expect(readPipeCapture({ status: { phase: 'Running' } }, files).kind).to.equal('running');
      expect(readPipeCapture({}, files).kind).to.equal('running');
    });
  });
});
