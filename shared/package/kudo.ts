// Reads a package in KUDO's layout — operator.yaml, params.yaml, templates/*.yaml — into one
// planwarden OperatorVersion named `<name>-<operatorVersion>`. Pure: the files come in as
// (path, text) pairs, so the CLI reads the folder and tests pass literals.
//
// KUDO's fields are read as they are. A parameter's `default` of any YAML type becomes its
// string form (a list or map: its JSON text, with type array / map when no type is given);
// `required` is true unless written false (KUDO's rule). What planwarden does not use is
// kept as an annotation (display fields, maintainers, url …) or dropped with a note —
// never an error. Errors are values naming file and line: a missing operator.yaml, a file
// that is not YAML, a template named twice, a task naming a missing template.
import { isScalar, LineCounter, type Document, type Node as YamlNode } from 'yaml';
import { parseDocumentUniqueKeys } from '../yamlKeys.ts';
import { API_VERSION, type OperatorVersion, type Parameter } from '../api/schema.ts';

export const KUDO_API_VERSION = 'kudo.dev/v1beta1';
export const OPERATOR_FILE = 'operator.yaml';
export const PARAMS_FILE = 'params.yaml';
export const TEMPLATES_DIR = 'templates';

/** Annotation keys the package's descriptive fields are kept under. */
export const PACKAGE_ANNOTATION_PREFIX = 'package.planwarden.dev/';

/** Rule ids of a package that cannot be read. */
export const PACKAGE_RULES = {
  missingFile: 'package.operator-missing',
  notYaml: 'package.not-yaml',
  badField: 'package.field-invalid',
  duplicateTemplate: 'package.template-duplicate',
  missingTemplate: 'package.template-missing',
  unknownTask: 'package.task-missing',
} as const;

export interface PackageFile {
  /** Relative to the package folder, with `/`: `operator.yaml`, `templates/statefulset.yaml`. */
  path: string;
  text: string;
}

/** Something the reader could not turn into an OperatorVersion. */
export interface PackageProblem {
  rule: string;
  file: string;
  line?: number;
  message: string;
}

/** Something kept elsewhere or left out, said so the author knows. */
export interface PackageNote {
  file: string;
  line?: number;
  message: string;
}

export type PackageResult =
  { ok: true; operatorVersion: OperatorVersion; notes: PackageNote[] } | { ok: false; problems: PackageProblem[]; notes: PackageNote[] };

export interface ReadOptions {
  /** metadata.namespace of the OperatorVersion (omitted when absent). */
  namespace?: string;
}

/** `file:line: message`, as compilers print it. */
export function describeProblem(p: PackageProblem | PackageNote): string {
  return `${p.file}${p.line !== undefined ? `:${p.line}` : ''}: ${p.message}`;
}

/** Task kinds KUDO packages use, with the spec fields each reads. */
const TASK_SPEC_FIELDS: Record<string, readonly string[]> = {
  Apply: ['resources'],
  Delete: ['resources'],
  Dummy: ['done', 'wantErr', 'fatal'],
  Toggle: ['parameter', 'resources'],
  Pipe: ['pod', 'pipe'],
  KudoOperator: ['package', 'instanceName', 'appVersion', 'operatorVersion', 'parameterFile'],
};

// secret and perRun are planwarden's (KUDO has neither): a package written for planwarden may use them.
const PARAMETER_FIELDS = new Set([
  'name',
  'description',
  'default',
  'required',
  'immutable',
  'trigger',
  'type',
  'enum',
  'secret',
  'perRun',
]);
const PARAMETER_DISPLAY_FIELDS = ['displayName', 'hint', 'group', 'advanced'] as const;
const OPERATOR_DESCRIPTIVE_FIELDS = ['description', 'kudoVersion', 'kubernetesVersion', 'maintainers', 'url'] as const;

/** One YAML file parsed, with what is needed to say where a node is. */
class Source {
  readonly lines = new LineCounter();
  readonly doc: Document;
  constructor(
    readonly file: string,
    text: string,
  ) {
    // uniqueKeys: a key written twice is an error to report, not a silent overwrite.
    this.doc = parseDocumentUniqueKeys(text, { lineCounter: this.lines, merge: false });
  }
  /** The first syntax error, as a problem. */
  syntaxProblem(): PackageProblem | undefined {
    const e = this.doc.errors[0];
    if (!e) return undefined;
    const line = e.linePos?.[0].line ?? this.lineOfOffset(e.pos[0]);
    return { rule: PACKAGE_RULES.notYaml, file: this.file, line, message: `not valid YAML: ${e.message.split('\n')[0]}` };
  }
  lineOfOffset(offset: number): number {
    return this.lines.linePos(offset).line;
  }
  /** The line of the node at `path` (or of its nearest existing parent). */
  lineOf(path: readonly (string | number)[]): number | undefined {
    for (let n = path.length; n >= 0; n--) {
      const node = n === 0 ? this.doc.contents : (this.doc.getIn(path.slice(0, n), true) as YamlNode | undefined);
      const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
      if (range) return this.lineOfOffset(range[0]);
    }
    return undefined;
  }
  /** The node at `path`, for its source text. */
  nodeAt(path: readonly (string | number)[]): unknown {
    return this.doc.getIn(path, true);
  }
  /** The document as plain data; an alias bomb or a broken alias is a problem, not a throw. */
  toJS(problems: PackageProblem[]): unknown {
    try {
      return this.doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      problems.push({
        rule: PACKAGE_RULES.notYaml,
        file: this.file,
        message: `cannot be read: ${err instanceof Error ? err.message : String(err)}`,
      });
      return undefined;
    }
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Normalises a path inside the package: `./a//b` → `a/b`; undefined when it leaves the folder. */
function normalizePath(path: string): string | undefined {
  const parts: string[] = [];
  for (const part of path.replace(/\\/g, '/').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else {
      parts.push(part);
    }
  }
  return parts.join('/');
}

/** The package's templates: name (path under templates/) → text, and what went wrong. */
function readTemplates(
  files: readonly PackageFile[],
  problems: PackageProblem[],
  notes: PackageNote[],
): Map<string, { text: string; file: string }> {
  const templates = new Map<string, { text: string; file: string }>();
  const byFoldedName = new Map<string, string>();
  for (const f of files) {
    const path = normalizePath(f.path);
    if (path === undefined || !path.startsWith(`${TEMPLATES_DIR}/`)) continue;
    const name = path.slice(TEMPLATES_DIR.length + 1);
    if (!/\.ya?ml$/.test(name)) {
      notes.push({ file: path, message: 'not a .yaml file: not a template, left out' });
      continue;
    }
    // Two files one name (an archive with an entry twice), or two names only case tells apart
    // (one file on macOS or Windows, and a task cannot tell which it means): refused.
    const folded = name.toLowerCase();
    const earlier = byFoldedName.get(folded);
    if (earlier !== undefined) {
      problems.push({
        rule: PACKAGE_RULES.duplicateTemplate,
        file: path,
        message:
          earlier === name
            ? `template ${name} is given twice; keep one file of that name`
            : `template ${name} and template ${earlier} differ only in case (one file on a case-insensitive file system); rename one`,
      });
      continue;
    }
    byFoldedName.set(folded, name);
    templates.set(name, { text: f.text, file: path });
  }
  return templates;
}

/** The source text of a scalar (e.g. `1.10` stays `1.10`, not 1.1), else its JSON. */
function scalarText(node: unknown, value: unknown): string {
  if (typeof value === 'string') return value;
  if (isScalar(node) && typeof node.source === 'string' && node.source !== '') return node.source;
  return String(value);
}

interface Conversion {
  source: Source;
  problems: PackageProblem[];
  notes: PackageNote[];
}

function problem(c: Conversion, path: readonly (string | number)[], message: string, rule: string = PACKAGE_RULES.badField): void {
  c.problems.push({ rule, file: c.source.file, line: c.source.lineOf(path), message });
}

function note(c: Conversion, path: readonly (string | number)[], message: string): void {
  c.notes.push({ file: c.source.file, line: c.source.lineOf(path), message });
}

function readApiVersion(c: Conversion, top: Record<string, unknown>): void {
  const v = top.apiVersion;
  if (v !== undefined && v !== KUDO_API_VERSION) {
    problem(c, ['apiVersion'], `apiVersion ${JSON.stringify(v)} is not a KUDO package version; expected ${KUDO_API_VERSION}`);
  }
}

function stringField(c: Conversion, top: Record<string, unknown>, key: string, required: boolean): string | undefined {
  const v = top[key];
  if (v === undefined || v === null || v === '') {
    if (required) problem(c, [], `${key} is required`);
    return undefined;
  }
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return scalarText(c.source.nodeAt([key]), v);
  problem(c, [key], `${key} must be a string, not ${describeType(v)}`);
  return undefined;
}

function describeType(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  if (isRecord(v)) return 'a map';
  if (v === null) return 'null';
  return `a ${typeof v}`;
}

/** The parameter's value of any YAML type as planwarden's string, and the type a list / map implies. */
function valueText(c: Conversion, path: readonly (string | number)[], value: unknown): { text: string; type?: 'array' | 'map' } {
  if (Array.isArray(value)) return { text: JSON.stringify(value), type: 'array' };
  if (isRecord(value)) return { text: JSON.stringify(value), type: 'map' };
  return { text: scalarText(c.source.nodeAt(path), value) };
}

function readParameters(c: Conversion, top: Record<string, unknown>, annotations: Record<string, string>): Parameter[] {
  readApiVersion(c, top);
  for (const key of Object.keys(top)) {
    if (key !== 'apiVersion' && key !== 'parameters' && key !== 'groups')
      note(c, [key], `field ${key} is not used by planwarden: left out`);
  }
  if (top.groups !== undefined) {
    if (Array.isArray(top.groups)) annotations[`${PACKAGE_ANNOTATION_PREFIX}parameter-groups`] = JSON.stringify(top.groups);
    else note(c, ['groups'], 'groups is not a list: left out');
  }
  const list = top.parameters;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) {
    problem(c, ['parameters'], `parameters must be a list, not ${describeType(list)}`);
    return [];
  }
  const out: Parameter[] = [];
  const display: Record<string, Record<string, unknown>> = {};
  const seen = new Set<string>();
  list.forEach((raw: unknown, i) => {
    const at = ['parameters', i];
    if (!isRecord(raw)) return problem(c, at, `parameters[${i}] must be a map with a name, not ${describeType(raw)}`);
    const name = raw.name;
    if (typeof name !== 'string' || name === '') return problem(c, at, `parameters[${i}] has no name`);
    if (seen.has(name)) return problem(c, [...at, 'name'], `parameter ${name} is declared twice`);
    seen.add(name);
    const p: Parameter = { name };
    const text = (key: string): string | undefined => {
      const v = raw[key];
      if (v === undefined || v === null || v === '') return undefined;
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return scalarText(c.source.nodeAt([...at, key]), v);
      problem(c, [...at, key], `parameter ${name}: ${key} must be text, not ${describeType(v)}`);
      return undefined;
    };
    const description = text('description');
    if (description !== undefined) p.description = description;
    let implied: 'array' | 'map' | undefined;
    if (raw.default !== undefined && raw.default !== null) {
      const v = valueText(c, [...at, 'default'], raw.default);
      p.default = v.text;
      implied = v.type;
    }
    // KUDO: a parameter is required unless it says otherwise (a default still satisfies it).
    if (raw.required !== undefined && typeof raw.required !== 'boolean')
      problem(c, [...at, 'required'], `parameter ${name}: required must be true or false`);
    p.required = raw.required !== false;
    if (raw.immutable !== undefined) {
      if (typeof raw.immutable !== 'boolean') problem(c, [...at, 'immutable'], `parameter ${name}: immutable must be true or false`);
      else if (raw.immutable) p.immutable = true;
    }
    for (const flag of ['secret', 'perRun'] as const) {
      if (raw[flag] === undefined) continue;
      if (typeof raw[flag] !== 'boolean') problem(c, [...at, flag], `parameter ${name}: ${flag} must be true or false`);
      else if (raw[flag]) p[flag] = true;
    }
    const trigger = text('trigger');
    if (trigger !== undefined) p.trigger = trigger;
    const type = text('type');
    if (type !== undefined) {
      // Checked by the OperatorVersion admission (its rule names the allowed types).
      p.type = type as Parameter['type'];
    } else if (implied !== undefined) {
      p.type = implied;
      note(
        c,
        [...at, 'default'],
        `parameter ${name}: its default is a ${implied === 'array' ? 'list' : 'map'}: type ${implied}, default written as JSON text`,
      );
    }
    if (raw.enum !== undefined && raw.enum !== null) {
      if (!Array.isArray(raw.enum)) problem(c, [...at, 'enum'], `parameter ${name}: enum must be a list`);
      else p.enum = raw.enum.map((e: unknown, j) => valueText(c, [...at, 'enum', j], e).text);
    }
    const shown: Record<string, unknown> = {};
    for (const f of PARAMETER_DISPLAY_FIELDS) if (raw[f] !== undefined && raw[f] !== null) shown[f] = raw[f];
    if (Object.keys(shown).length > 0) display[name] = shown;
    for (const key of Object.keys(raw)) {
      if (!PARAMETER_FIELDS.has(key) && !(PARAMETER_DISPLAY_FIELDS as readonly string[]).includes(key)) {
        note(c, [...at, key], `parameter ${name}: field ${key} is not used by planwarden: left out`);
      }
    }
    out.push(p);
  });
  if (Object.keys(display).length > 0) annotations[`${PACKAGE_ANNOTATION_PREFIX}parameter-display`] = JSON.stringify(display);
  return out;
}

type TaskOut = { name: string; kind: string; spec?: Record<string, unknown> };

function readTasks(c: Conversion, raw: unknown, templates: ReadonlyMap<string, unknown>): TaskOut[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    problem(c, ['tasks'], `tasks must be a list, not ${describeType(raw)}`);
    return [];
  }
  const out: TaskOut[] = [];
  raw.forEach((t: unknown, i) => {
    const at = ['tasks', i];
    if (!isRecord(t)) return problem(c, at, `tasks[${i}] must be a map with name, kind and spec`);
    if (typeof t.name !== 'string' || t.name === '') return problem(c, at, `tasks[${i}] has no name`);
    if (typeof t.kind !== 'string' || t.kind === '') return problem(c, at, `task ${t.name} has no kind`);
    const fields = TASK_SPEC_FIELDS[t.kind];
    // An unknown kind is kept as written: the OperatorVersion admission refuses it with its rule.
    if (!fields) note(c, [...at, 'kind'], `task ${t.name}: kind ${t.kind} is not a KUDO task kind planwarden knows`);
    else if (t.kind === 'KudoOperator')
      note(c, [...at, 'kind'], `task ${t.name}: kind KudoOperator (a dependency on another operator) is not supported by planwarden`);
    const task: TaskOut = { name: t.name, kind: t.kind };
    if (t.spec !== undefined && t.spec !== null && !isRecord(t.spec)) {
      problem(c, [...at, 'spec'], `task ${t.name}: spec must be a map`);
    } else if (isRecord(t.spec)) {
      const spec: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(t.spec)) {
        if (value === null || value === undefined) continue; // KUDO writes `resources:` empty on Dummy tasks
        if (fields && !fields.includes(key)) {
          note(c, [...at, 'spec', key], `task ${t.name}: spec.${key} means nothing to a ${t.kind} task: left out`);
          continue;
        }
        spec[key] = value;
      }
      for (const key of ['resources', 'pod'] as const) {
        const names = key === 'pod' ? (spec.pod === undefined ? [] : [spec.pod]) : spec.resources;
        if (names === undefined) continue;
        if (!Array.isArray(names) || names.some((n) => typeof n !== 'string')) {
          problem(
            c,
            [...at, 'spec', key],
            `task ${t.name}: spec.${key} must be ${key === 'pod' ? 'a template name' : 'a list of template names'}`,
          );
          continue;
        }
        (names as string[]).forEach((n, j) => {
          if (!templates.has(normalizePath(n) ?? n)) {
            const where = key === 'pod' ? [...at, 'spec', 'pod'] : [...at, 'spec', 'resources', j];
            const known = [...templates.keys()].sort();
            problem(
              c,
              where,
              `task ${String(t.name)} names template ${String(n)}, which is not in ${TEMPLATES_DIR}/${known.length ? ` (templates: ${known.join(', ')})` : ' (no templates)'}`,
              PACKAGE_RULES.missingTemplate,
            );
          }
        });
      }
      if (Object.keys(spec).length > 0) task.spec = spec;
    }
    for (const key of Object.keys(t))
      if (key !== 'name' && key !== 'kind' && key !== 'spec') note(c, [...at, key], `task ${t.name}: field ${key} is not used: left out`);
    out.push(task);
  });
  return out;
}

type PlanOut = { strategy?: string; phases: { name: string; strategy?: string; steps: { name: string; tasks: string[] }[] }[] };

function readPlans(c: Conversion, raw: unknown, taskNames: ReadonlySet<string>): Record<string, PlanOut> {
  if (raw === undefined || raw === null) {
    problem(c, [], 'plans is required (at least a deploy plan)');
    return {};
  }
  if (!isRecord(raw)) {
    problem(c, ['plans'], `plans must be a map of plan name to plan, not ${describeType(raw)}`);
    return {};
  }
  const out: Record<string, PlanOut> = {};
  for (const [name, plan] of Object.entries(raw)) {
    const at = ['plans', name];
    if (!isRecord(plan)) {
      problem(c, at, `plan ${name} must be a map with phases`);
      continue;
    }
    const p: PlanOut = { ...(typeof plan.strategy === 'string' && plan.strategy !== '' ? { strategy: plan.strategy } : {}), phases: [] };
    for (const key of Object.keys(plan))
      if (key !== 'strategy' && key !== 'phases') note(c, [...at, key], `plan ${name}: field ${key} is not used: left out`);
    const phases = plan.phases ?? [];
    if (!Array.isArray(phases)) {
      problem(c, [...at, 'phases'], `plan ${name}: phases must be a list`);
      continue;
    }
    phases.forEach((phase: unknown, i) => {
      const pat = [...at, 'phases', i];
      if (!isRecord(phase)) return problem(c, pat, `plan ${name}: phases[${i}] must be a map with name and steps`);
      const phaseName = typeof phase.name === 'string' ? phase.name : '';
      if (phaseName === '') return problem(c, pat, `plan ${name}: phases[${i}] has no name`);
      const strategy = typeof phase.strategy === 'string' && phase.strategy !== '' ? { strategy: phase.strategy } : {};
      const ph: PlanOut['phases'][number] = { name: phaseName, ...strategy, steps: [] };
      const steps = phase.steps ?? [];
      if (!Array.isArray(steps)) return problem(c, [...pat, 'steps'], `plan ${name}, phase ${ph.name}: steps must be a list`);
      steps.forEach((step: unknown, j) => {
        const sat = [...pat, 'steps', j];
        if (!isRecord(step) || typeof step.name !== 'string' || step.name === '')
          return problem(c, sat, `plan ${name}, phase ${ph.name}: steps[${j}] must be a map with a name and tasks`);
        const tasks = step.tasks ?? [];
        if (!Array.isArray(tasks) || tasks.some((t) => typeof t !== 'string'))
          return problem(c, [...sat, 'tasks'], `plan ${name}, step ${step.name}: tasks must be a list of task names`);
        (tasks as string[]).forEach((t, k) => {
          if (!taskNames.has(t))
            problem(
              c,
              [...sat, 'tasks', k],
              `plan ${name}, step ${String(step.name)} names task ${String(t)}, which is not in tasks`,
              PACKAGE_RULES.unknownTask,
            );
        });
        ph.steps.push({ name: step.name, tasks: tasks as string[] });
      });
      p.phases.push(ph);
    });
    out[name] = p;
  }
  return out;
}

/** A DNS-1123 subdomain made of the package's name and version, as KUDO names OperatorVersions. */
export function operatorVersionName(name: string, version: string): string {
  return `${name}-${version}`;
}

/** Reads the package in `files` into one OperatorVersion. */
export function readKudoPackage(files: readonly PackageFile[], options: ReadOptions = {}): PackageResult {
  const problems: PackageProblem[] = [];
  const notes: PackageNote[] = [];
  const find = (name: string) => files.find((f) => normalizePath(f.path) === name);
  const operatorFile = find(OPERATOR_FILE);
  if (!operatorFile) {
    const found = files.length
      ? ` (found: ${files
          .slice(0, 5)
          .map((f) => f.path)
          .join(', ')}${files.length > 5 ? ', …' : ''})`
      : ' (the folder is empty)';
    return {
      ok: false,
      problems: [
        {
          rule: PACKAGE_RULES.missingFile,
          file: OPERATOR_FILE,
          message: `no ${OPERATOR_FILE} in the package folder${found}: a KUDO package has operator.yaml, params.yaml and templates/`,
        },
      ],
      notes,
    };
  }
  const templates = readTemplates(files, problems, notes);
  const annotations: Record<string, string> = {};

  // params.yaml (optional: a package without parameters).
  let parameters: Parameter[] = [];
  const paramsFile = find(PARAMS_FILE);
  if (paramsFile) {
    const source = new Source(PARAMS_FILE, paramsFile.text);
    const syntax = source.syntaxProblem();
    if (syntax) problems.push(syntax);
    else {
      const top = source.toJS(problems);
      const c = { source, problems, notes };
      if (top === null || top === undefined) parameters = [];
      else if (!isRecord(top)) problem(c, [], `${PARAMS_FILE} must be a map with apiVersion and parameters, not ${describeType(top)}`);
      else parameters = readParameters(c, top, annotations);
    }
  }

  const source = new Source(OPERATOR_FILE, operatorFile.text);
  const syntax = source.syntaxProblem();
  if (syntax) return { ok: false, problems: [syntax, ...problems], notes };
  const top = source.toJS(problems);
  const c: Conversion = { source, problems, notes };
  if (top === undefined && problems.length > 0) return { ok: false, problems, notes };
  if (!isRecord(top)) {
    problem(c, [], `${OPERATOR_FILE} must be a map with name, operatorVersion, tasks and plans, not ${describeType(top)}`);
    return { ok: false, problems, notes };
  }
  readApiVersion(c, top);
  const name = stringField(c, top, 'name', true);
  const version = stringField(c, top, 'operatorVersion', true);
  const tasks = readTasks(c, top.tasks, templates);
  const plans = readPlans(c, top.plans, new Set(tasks.map((t) => t.name)));
  for (const key of OPERATOR_DESCRIPTIVE_FIELDS) {
    const v = top[key];
    if (v === undefined || v === null || v === '') continue;
    annotations[`${PACKAGE_ANNOTATION_PREFIX}${key.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`)}`] =
      typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : scalarText(source.nodeAt([key]), v);
  }
  const appVersion = stringField(c, top, 'appVersion', false);
  const known = new Set<string>(['apiVersion', 'name', 'operatorVersion', 'appVersion', 'tasks', 'plans', ...OPERATOR_DESCRIPTIVE_FIELDS]);
  for (const key of Object.keys(top)) if (!known.has(key)) note(c, [key], `field ${key} is not used by planwarden: left out`);
  if (problems.length > 0 || name === undefined || version === undefined) return { ok: false, problems, notes };

  const ov: OperatorVersion = {
    apiVersion: API_VERSION,
    kind: 'OperatorVersion',
    metadata: {
      name: operatorVersionName(name, version),
      ...(options.namespace ? { namespace: options.namespace } : {}),
      ...(Object.keys(annotations).length
        ? { annotations: Object.fromEntries(Object.entries(annotations).sort(([a], [b]) => a.localeCompare(b))) }
        : {}),
    },
    spec: {
      version,
      operatorName: name,
      ...(appVersion !== undefined ? { appVersion } : {}),
      ...(parameters.length ? { parameters } : {}),
      templates: Object.fromEntries([...templates.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, v.text])),
      // Kinds and spec fields beyond today's schema (Toggle, Pipe …) are kept as written;
      // the OperatorVersion admission judges them.
      tasks: tasks as unknown as NonNullable<OperatorVersion['spec']['tasks']>,
      plans: plans as unknown as OperatorVersion['spec']['plans'],
    },
  };
  return { ok: true, operatorVersion: ov, notes };
}
