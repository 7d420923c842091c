// Writes the Grafana dashboard (scripts/dashboard.ts) to manifests/observability/;
// test/unit/manifests/observability.test.ts fails when the committed file differs.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DASHBOARD_FILE, renderDashboard } from './dashboard.ts';

const file = fileURLToPath(new URL(`../${DASHBOARD_FILE}`, import.meta.url));
writeFileSync(file, renderDashboard());
console.log(`wrote ${DASHBOARD_FILE}`);
