import { expect } from 'chai';
import { apiCostTable, apiCountsDelta, apiCountsFromMetrics } from '../../../bench/apiRequests.ts';

// Two scrapes of an API server's /metrics around 100 Instances created and deployed: what the
// per-Instance table must make of them.
const before = `
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="planwarden.dev",resource="instances",scope="resource",subresource="",verb="POST",version="v1alpha1"} 10
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 40
apiserver_admission_webhook_admission_duration_seconds_count{name="instances.planwarden.dev",operation="CREATE",rejected="false",type="validating"} 10
`;
const after = `
apiserver_request_total{code="201",component="apiserver",dry_run="",group="planwarden.dev",resource="instances",scope="resource",subresource="",verb="POST",version="v1alpha1"} 110
apiserver_request_total{code="409",component="apiserver",dry_run="",group="planwarden.dev",resource="instances",scope="resource",subresource="",verb="POST",version="v1alpha1"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="planwarden.dev",resource="instances",scope="resource",subresource="status",verb="PUT",version="v1alpha1"} 100
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="events",scope="resource",subresource="",verb="POST",version="v1"} 600
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 45
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="nodes",scope="resource",subresource="status",verb="PATCH",version="v1"} 3
apiserver_admission_webhook_admission_duration_seconds_count{name="instances.planwarden.dev",operation="CREATE",rejected="false",type="validating"} 112
apiserver_admission_webhook_admission_duration_seconds_count{name="instance-status.planwarden.dev",operation="UPDATE",rejected="false",type="validating"} 100
apiserver_admission_webhook_admission_duration_seconds_count{name="instance-status-defaults.planwarden.dev",operation="UPDATE",rejected="false",type="admit"} 100
`;

describe('bench/apiRequests: API server work per Instance', function () {
  const table = apiCostTable(apiCountsDelta(apiCountsFromMetrics(before), apiCountsFromMetrics(after)), 100, 'Instance', 12);
  const row = (verb: string, resource: string) => table.rows.find((r) => r.verb === verb && r.resource === resource);

  it('counts every response code of a request together, per Instance (102 creates, two of them conflicts)', function () {
    expect(row('POST', 'planwarden.dev/instances')).to.include({ total: 102, perInstance: 1.02 });
  });
  it('names a subresource after its resource', function () {
    expect(row('PUT', 'planwarden.dev/instances/status')).to.include({ total: 100, perInstance: 1 });
  });
  it('keeps core-group resources without a group prefix', function () {
    expect(row('POST', 'events')).to.include({ total: 600, perInstance: 6 });
  });
  it('lists Leases and node heartbeats apart as background, not per Instance', function () {
    expect(table.background).to.deep.equal({ 'PUT coordination.k8s.io/leases': 5, 'PATCH nodes/status': 3 });
    expect(row('PUT', 'coordination.k8s.io/leases')).to.equal(undefined);
  });
  it('counts writes to planwarden.dev only (Events are not such writes) and webhook calls per such write', function () {
    expect(table.writesPerUnit).to.equal(2.02);
    expect(table.webhookCallsPerWrite).to.equal(Math.round((302 / 202) * 1000) / 1000);
  });
  it('gives webhook calls per Instance by webhook name, type and operation', function () {
    expect(table.webhookCalls.map((r) => [r.resource, r.verb, r.perInstance])).to.deep.equal([
      ['instances.planwarden.dev', 'validating CREATE', 1.02],
      ['instance-status-defaults.planwarden.dev', 'admit UPDATE', 1],
      ['instance-status.planwarden.dev', 'validating UPDATE', 1],
    ]);
  });
  it('leaves out what did not change between the scrapes', function () {
    const same = apiCostTable(apiCountsDelta(apiCountsFromMetrics(after), apiCountsFromMetrics(after)), 100, 'Instance', 1);
    expect(same.rows).to.deep.equal([]);
    expect(same.webhookCalls).to.deep.equal([]);
  });
});
