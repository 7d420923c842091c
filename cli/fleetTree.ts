// A FleetRollout as text: a head line (what, progress, conditions that matter), the counts,
// then waves → targets. Targets come from status.resolved and status.states (every target,
// one letter each) with the details status.targets keeps (run id, message).
import type { FleetRollout, FleetTarget, FleetTargetState } from '../shared/api/schema.ts';
import { render, type Node } from './tree.ts';
import { counted } from '../shared/text.ts';

const STATE_OF: Record<string, FleetTargetState> = { P: 'Pending', W: 'Waiting', R: 'Running', C: 'Completed', F: 'Failed', S: 'Skipped' };
/** Targets of one state shown per wave at most; the rest are counted. */
const SHOWN_PER_STATE = 20;

export function renderFleet(rollout: FleetRollout): string {
  const st = rollout.status ?? {};
  const name = rollout.metadata.name ?? '';
  const cond = (type: string) => st.conditions?.find((c) => c.type === type);
  const lines = [
    `FleetRollout ${name}: ${st.action ?? '(not started)'}${st.progress ? `, ${st.progress} completed` : ''}${rollout.spec.paused ? ' [Paused]' : ''}`,
  ];
  for (const type of ['Failed', 'Complete', 'Progressing']) {
    const c = cond(type);
    if (c?.status === 'True' || (type === 'Progressing' && c)) lines.push(`  ${type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`);
  }
  if (st.counts) {
    const c = st.counts;
    lines.push(
      `  targets ${c.total}: ${c.completed} completed, ${c.running} running, ${c.waiting} waiting, ${c.pending} pending, ${c.failed} failed, ${c.skipped} skipped`,
    );
  }
  if (!st.resolved) return `${lines.join('\n')}\n  targets not resolved yet\n`;
  const details = new Map((st.targets ?? []).map((t) => [`${t.namespace}/${t.name}`, t]));
  const ends = st.waveEnds ?? [];
  const waves: Node[] = ends.map((end, w) => ({ line: `Wave ${w + 1} (through target ${end})`, children: [] }));
  const waveTargets: { state: FleetTargetState; node: Node }[][] = ends.map(() => []);
  let index = 0;
  for (const ns of st.resolved) {
    for (const n of ns.names) {
      const w = Math.max(
        0,
        ends.findIndex((end) => index < end),
      );
      const state = STATE_OF[(st.states ?? '')[index] ?? 'P'] ?? 'Pending';
      waveTargets[w]?.push({
        state,
        node: { line: targetLine(`${ns.namespace}/${n}`, state, details.get(`${ns.namespace}/${n}`)), children: [] },
      });
      index++;
    }
  }
  waves.forEach((wave, w) => {
    const all = waveTargets[w] ?? [];
    const byState = new Map<FleetTargetState, Node[]>();
    for (const t of all) byState.set(t.state, [...(byState.get(t.state) ?? []), t.node]);
    const done = all.every((t) => t.state === 'Completed' || t.state === 'Failed' || t.state === 'Skipped');
    const current = w === st.currentWave && !done;
    wave.line += ` [${done ? 'done' : current ? 'in progress' : 'not started'}]: ${counted(all.length, 'target')}`;
    for (const [state, nodes] of byState) {
      wave.children.push(...nodes.slice(0, SHOWN_PER_STATE));
      if (nodes.length > SHOWN_PER_STATE) wave.children.push({ line: `… ${nodes.length - SHOWN_PER_STATE} more ${state}`, children: [] });
    }
  });
  return `${[...lines, ...render(waves)].join('\n')}\n`;
}

function targetLine(key: string, state: FleetTargetState, d: FleetTarget | undefined): string {
  const facts = [d?.runId ? `run ${d.runId}` : undefined, d?.retryAt && state === 'Waiting' ? `retry at ${d.retryAt}` : undefined].filter(
    Boolean,
  );
  return `${key} [${state}]${facts.length ? ` ${facts.join(', ')}` : ''}${d?.message ? `: ${d.message}` : ''}`;
}
