// The flags node runs the controller with, wherever it runs: the Deployment of manifests/
// and of the chart (checked by test/unit/manifests/overlays.test.ts), the bench and the
// integration tests' controller processes.
//
// --max-semi-space-size=4 (MiB; node 20's default grows to 16): a controller's first list
// allocates its whole cache at once, which grows V8's young generation to its largest, and
// the pages it touched stay resident long after the heap shrank back. Measured on a standby
// replica with 10,000 Instances cached (npm run bench, controller part, and two more
// replicas each): RSS 147–151 MiB by default, 106–108 MiB with 4 MiB semi-spaces, the V8
// heap in use the same (40–53 MiB). The price is more scavenges while the cache fills.
export const CONTROLLER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];
