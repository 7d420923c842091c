// A cache keyed by text and bounded by an estimate of the memory its values hold: the least
// recently used entries go first. An entry too large for it (more than a quarter of the bound:
// a parse of a 1 MiB template) is held only weakly, in a few slots: it lives while the garbage
// collector lets it (always until the end of the synchronous work that made or read it, as
// WeakRef promises), so one review that reads a large template several times parses it once,
// and nothing large stays in memory on its account afterwards.

/** How many entries too large to be held strongly are remembered weakly (their keys are held). */
const WEAK_SLOTS = 4;

export class MemoryCache<V extends object> {
  private readonly strong = new Map<string, { value: V; bytes: number }>();
  private readonly weak = new Map<string, WeakRef<V>>();
  private held = 0;

  constructor(private readonly capacityBytes: number) {}

  get(key: string): V | undefined {
    const hit = this.strong.get(key);
    if (hit) {
      this.strong.delete(key);
      this.strong.set(key, hit);
      return hit.value;
    }
    const ref = this.weak.get(key);
    if (!ref) return undefined;
    const value = ref.deref();
    if (value === undefined) this.weak.delete(key);
    return value;
  }

  /** Remembers `value` for `key`; `bytes` is an estimate of the memory it (and its key) hold. */
  set(key: string, value: V, bytes: number): void {
    if (bytes > this.capacityBytes / 4) {
      this.weak.delete(key);
      while (this.weak.size >= WEAK_SLOTS) this.weak.delete(this.weak.keys().next().value as string);
      this.weak.set(key, new WeakRef(value));
      return;
    }
    const old = this.strong.get(key);
    if (old) {
      this.strong.delete(key);
      this.held -= old.bytes;
    }
    while (this.strong.size && this.held + bytes > this.capacityBytes) {
      const [oldest, entry] = this.strong.entries().next().value as [string, { value: V; bytes: number }];
      this.strong.delete(oldest);
      this.held -= entry.bytes;
    }
    this.strong.set(key, { value, bytes });
    this.held += bytes;
  }

  /** The estimated bytes held strongly (for tests and figures). */
  get heldBytes(): number {
    return this.held;
  }
}
