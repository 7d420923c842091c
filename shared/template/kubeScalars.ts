// Plain scalars of a template's own text are read as Kubernetes reads a manifest.
//
// kubectl, the API machinery and KUDO decode YAML with go-yaml v2 (through sigs.k8s.io/yaml),
// which resolves plain scalars by YAML 1.1's rules: `defaultMode: 0755` is the integer 493,
// `enabled: yes` is true. A package written for them means that, so planwarden reads the
// author's text the same way; a YAML 1.2 reader would send 755 and the API server would
// refuse the object only when the plan runs. Only the forms where the two readers disagree
// are added here, before YAML 1.2's core tags; everything else (hex, 0o octal, floats, null)
// is the core schema's, which agrees with go-yaml. Sexagesimal numbers (`10:30`) are YAML
// 1.1 but not go-yaml's, so they stay strings.
//
// Parameter values are not read here: a value is data, typed by its declaration
// (docs/api.md, "Types").
import type { ScalarTag, Tags } from 'yaml';

const INT = 'tag:yaml.org,2002:int';
const BOOL = 'tag:yaml.org,2002:bool';

/** `y`, `yes`, `on` (three casings each) are true; `n`, `no`, `off` false — go-yaml v2's table. */
const yes: ScalarTag = { default: true, tag: BOOL, test: /^(?:y|Y|yes|Yes|YES|on|On|ON)$/, resolve: () => true };
const no: ScalarTag = { default: true, tag: BOOL, test: /^(?:n|N|no|No|NO|off|Off|OFF)$/, resolve: () => false };

/** An integer in go-yaml's eyes: underscores dropped, then Go's base prefixes (0 octal, 0b binary). */
function goInt(radix: number, skip: number) {
  return (source: string): number | string => {
    const negative = source.startsWith('-');
    const digits = source.replace(/^[-+]/, '').replace(/_/g, '').slice(skip);
    const n = parseInt(digits === '' ? '0' : digits, radix);
    // Past ±2^53 the number would be rounded: keep the text, which the API server reads or refuses.
    if (!Number.isSafeInteger(n)) return source;
    return negative ? (n === 0 ? 0 : -n) : n;
  };
}

/** `0755`, `-0644`, `07_55`: octal, as C and Go read a leading zero. */
const octal: ScalarTag = { default: true, tag: INT, format: 'OCT', test: /^[-+]?0[0-7_]*[0-7][0-7_]*$/, resolve: goInt(8, 0) };
/** `0b1010`: binary. */
const binary: ScalarTag = { default: true, tag: INT, format: 'BIN', test: /^[-+]?0[bB][01_]*[01][01_]*$/, resolve: goInt(2, 2) };
/** `1_000`: a decimal with underscores. */
const grouped: ScalarTag = { default: true, tag: INT, test: /^[-+]?[1-9][0-9_]*_[0-9_]*$/, resolve: goInt(10, 0) };

/** The `customTags` option that puts go-yaml's readings ahead of the core schema's. */
export function kubeScalarTags(tags: Tags): Tags {
  return [yes, no, octal, binary, grouped, ...tags];
}
