// The command line: kubectl-style flags, durations, output formats, colors, and usage
// errors (exit code 2) that point at the verb's --help.
import { expect } from 'chai';
import { defineVerb, parseColor, parseDuration, parseOutput, parseVerb, required, useColor } from '../../../cli/args.ts';
import { CliError, EXIT } from '../../../cli/io.ts';

const verb = defineVerb({
  name: 'plan status',
  options: {
    instance: { type: 'string' },
    wait: { type: 'boolean' },
    output: { type: 'string', short: 'o' },
    accept: { type: 'string', multiple: true },
  },
  help: 'help text',
});

function usageErrorOf(fn: () => unknown): CliError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(CliError);
    expect((err as CliError).exitCode).to.equal(EXIT.usage);
    expect((err as CliError).hint).to.equal("See 'kubectl planwarden plan status --help' for usage.");
    return err as CliError;
  }
  throw new Error('expected a usage error');
}

describe('cli args: parsing a verb', () => {
  it('reads the verb flags and kubectl connection flags, in any order, with = or a space', () => {
    const { values, positionals } = parseVerb(verb, [
      '--instance=web',
      '-n',
      'prod',
      '--wait',
      '--context',
      'kind',
      '--kubeconfig',
      '/k',
      '-o',
      'json',
      'extra',
    ]);
    expect(values).to.deep.include({ instance: 'web', namespace: 'prod', wait: true, context: 'kind', kubeconfig: '/k', output: 'json' });
    expect(positionals).to.deep.equal(['extra']);
  });

  it('collects a repeated flag', () => {
    expect(parseVerb(verb, ['--accept', 'a', '--accept', 'b']).values.accept).to.deep.equal(['a', 'b']);
  });

  const errors: [string, string[], string][] = [
    ['an unknown flag is named', ['--instnace', 'web'], 'unknown flag: --instnace'],
    ['a flag without its value is named', ['--instance'], 'flag needs an argument: --instance'],
    ['a boolean flag given a value is named', ['--wait=yes'], 'flag takes no argument: --wait'],
  ];
  for (const [sentence, args, message] of errors) {
    it(`usage error: ${sentence}`, () => {
      expect(usageErrorOf(() => parseVerb(verb, args)).message).to.equal(message);
    });
  }

  it('a missing required flag is a usage error naming it', () => {
    expect(usageErrorOf(() => required('plan status', undefined, '--instance')).message).to.equal('--instance is required');
  });
});

describe('cli args: durations (as kubectl --timeout)', () => {
  const cases: [string, string, number][] = [
    ['seconds', '90s', 90_000],
    ['minutes', '10m', 600_000],
    ['hours and minutes', '1h30m', 5_400_000],
    ['milliseconds', '500ms', 500],
    ['fractions', '1.5s', 1500],
    ['a bare number is seconds', '30', 30_000],
  ];
  for (const [sentence, text, ms] of cases) {
    it(`${text}: ${sentence}`, () => {
      expect(parseDuration('plan status', '--timeout', text)).to.equal(ms);
    });
  }

  it('anything else is a usage error with examples', () => {
    expect(usageErrorOf(() => parseDuration('plan status', '--timeout', '10 minutes')).message).to.equal(
      '--timeout "10 minutes": not a duration (examples: 90s, 10m, 1h30m)',
    );
  });
});

describe('cli args: output and colors', () => {
  it('-o is text by default, json or yaml when asked, anything else a usage error', () => {
    expect(parseOutput('plan status', undefined)).to.equal('text');
    expect(parseOutput('plan status', 'yaml')).to.equal('yaml');
    expect(usageErrorOf(() => parseOutput('plan status', 'wide')).message).to.equal('--output "wide": allowed values are json, yaml');
  });

  const colors: [string, string | undefined, boolean, Record<string, string>, boolean][] = [
    ['auto colors a terminal', undefined, true, {}, true],
    ['auto does not color a pipe', undefined, false, {}, false],
    ['auto respects NO_COLOR', 'auto', true, { NO_COLOR: '1' }, false],
    ['auto does not color a dumb terminal', 'auto', true, { TERM: 'dumb' }, false],
    ['always colors a pipe', 'always', false, {}, true],
    ['never colors a terminal', 'never', true, {}, false],
  ];
  for (const [sentence, flag, tty, env, expected] of colors) {
    it(sentence, () => {
      expect(useColor(parseColor('plan status', flag), tty, env)).to.equal(expected);
    });
  }
});
