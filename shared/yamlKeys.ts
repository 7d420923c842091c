// Duplicate mapping keys, found in linear time. yaml's own check (`uniqueKeys: true`) scans the
// mapping's earlier keys for each key, so one mapping of n keys costs n²/2 comparisons (a
// ConfigMap of 20,000 lines: tens of seconds). Here each mapping keeps a Set of its scalar keys'
// values: documents are parsed with `uniqueKeys: false`, and these errors are added to the
// document's — the same error yaml gives (DUPLICATE_KEY, "Map keys must be unique", at the
// repeated key), in the same order.
import {
  isMap,
  isPair,
  isScalar,
  isSeq,
  parseDocument,
  YAMLParseError,
  type Document,
  type DocumentOptions,
  type ParseOptions,
  type SchemaOptions,
} from 'yaml';

/** Work done by duplicateKeyErrors in this process: one unit per key compared or looked up (for tests). */
export const duplicateKeyWork = { comparisons: 0 };

/**
 * yaml's DUPLICATE_KEY errors of a document parsed with `uniqueKeys: false`, in the order yaml's
 * `uniqueKeys: true` reports them: two scalar keys of one mapping are the same when their values
 * are (`===`, as yaml's default), collection and alias keys never are.
 */
export function duplicateKeyErrors(doc: Pick<Document, 'contents'>, source?: string): YAMLParseError[] {
  const errors: YAMLParseError[] = [];
  // Depth first, in the order yaml composes: for each pair its key, then the key's check and its value.
  const work: unknown[] = [doc.contents];
  while (work.length) {
    const item = work.pop();
    if (item instanceof KeyCheck) {
      duplicateKeyWork.comparisons++;
      const key = item.key;
      if (!isScalar(key)) continue;
      const value = key.value;
      if (typeof value === 'number' && Number.isNaN(value)) continue;
      if (item.seen.has(value)) {
        let at = key.range?.[0] ?? 0;
        // An empty key sits where yaml puts the empty node; yaml names the next token (past
        // blanks and comments), where the key would have started.
        if (source !== undefined && key.range && key.range[0] === key.range[1]) at = nextToken(source, at);
        errors.push(new YAMLParseError([at, at + 1], 'DUPLICATE_KEY', 'Map keys must be unique'));
      } else item.seen.add(value);
      continue;
    }
    if (isMap(item)) {
      const seen = new Set<unknown>();
      for (let i = item.items.length - 1; i >= 0; i--) {
        const pair = item.items[i];
        if (!isPair(pair)) continue;
        // yaml checks a block mapping's key before its value, a flow mapping's after.
        if (item.flow) work.push(new KeyCheck(pair.key, seen), pair.value, pair.key);
        else work.push(pair.value, new KeyCheck(pair.key, seen), pair.key);
      }
    } else if (isSeq(item)) {
      for (let i = item.items.length - 1; i >= 0; i--) work.push(item.items[i]);
    }
  }
  return errors;
}

function nextToken(source: string, at: number): number {
  let i = at;
  while (i < source.length) {
    const c = source[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i++;
    else if (c === '#') {
      const nl = source.indexOf('\n', i);
      i = nl < 0 ? source.length : nl;
    } else break;
  }
  return i;
}

class KeyCheck {
  constructor(
    readonly key: unknown,
    readonly seen: Set<unknown>,
  ) {}
}

/** Adds duplicateKeyErrors to a document's errors, each before the first later error (by position), as yaml orders them. */
export function addDuplicateKeyErrors(doc: Document, source?: string): void {
  const dups = duplicateKeyErrors(doc, source);
  if (!dups.length) return;
  const merged: YAMLParseError[] = [];
  let d = 0;
  for (const e of doc.errors) {
    while (d < dups.length && dups[d]!.pos[0] < e.pos[0]) merged.push(dups[d++]!);
    merged.push(e);
  }
  while (d < dups.length) merged.push(dups[d++]!);
  doc.errors.length = 0;
  for (const e of merged) doc.errors.push(e);
}

/** yaml's parseDocument with `uniqueKeys: true`, in linear time (errors are never prettified). */
export function parseDocumentUniqueKeys(text: string, options: ParseOptions & DocumentOptions & SchemaOptions = {}): Document.Parsed {
  const doc = parseDocument(text, { ...options, uniqueKeys: false, prettyErrors: false });
  addDuplicateKeyErrors(doc, text);
  return doc;
}
