// Text helpers for messages a person reads (denials, Events, conditions): one definition
// each, so the webhook, the controller and the CLI word the same things the same way.

/** `one` or `many` by count. */
export function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}

/** The count and its word: "1 target", "3 targets". */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n} ${plural(n, one, many)}`;
}

/** `"a", "b"` */
export function quoted(names: readonly string[]): string {
  return names.map((n) => `"${n}"`).join(', ');
}

/** `text` cut to `max` characters with an ellipsis; the default is a warning's length (kubectl shows < 120 on one line). */
export function clipText(text: string, max = 119): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/** The candidate a typo most likely meant (case-insensitive, at most a third of it wrong). */
export function closestName(name: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const c of candidates) {
    const distance = levenshtein(name.toLowerCase(), c.toLowerCase());
    if (distance <= Math.max(1, Math.floor(c.length / 3)) && (!best || distance < best.distance)) {
      best = { name: c, distance };
    }
  }
  return best?.name;
}
