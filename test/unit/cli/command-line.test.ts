// kubectl's global flags (-n/--namespace, --kubeconfig, --context) are accepted anywhere on
// the command line, before the command words as well as after them, in every spelling
// kubectl itself takes; `kubectl planwarden -n shop plan status --instance web` works.
import { expect } from 'chai';
import { defineVerb, parseVerb, splitCommandLine } from '../../../cli/args.ts';
import { CliError, EXIT, memoryIO } from '../../../cli/io.ts';
import { run } from '../../../cli/run.ts';

const statusVerb = defineVerb({
  name: 'plan status',
  options: { instance: { type: 'string' }, output: { type: 'string', short: 'o' } },
  help: 'help text',
});

/** What the verb's parser sees after the command line is split. */
function parsed(argv: string[]) {
  const { words, args } = splitCommandLine(argv);
  return { words, values: parseVerb(statusVerb, args).values };
}

describe('cli command line: kubectl global flags anywhere', () => {
  const namespacePlacements: [string, string[]][] = [
    ['-n x before the command', ['-n', 'shop', 'plan', 'status', '--instance', 'web']],
    ['-n=x before the command', ['-n=shop', 'plan', 'status', '--instance', 'web']],
    ['-nx before the command', ['-nshop', 'plan', 'status', '--instance', 'web']],
    ['--namespace x before the command', ['--namespace', 'shop', 'plan', 'status', '--instance', 'web']],
    ['--namespace=x before the command', ['--namespace=shop', 'plan', 'status', '--instance', 'web']],
    ['-n x between the group and the verb', ['plan', '-n', 'shop', 'status', '--instance', 'web']],
    ['--namespace=x between the group and the verb', ['plan', '--namespace=shop', 'status', '--instance', 'web']],
    ['-n x after the verb', ['plan', 'status', '-n', 'shop', '--instance', 'web']],
    ['-n=x after the verb', ['plan', 'status', '-n=shop', '--instance', 'web']],
    ['-nx after the verb', ['plan', 'status', '-nshop', '--instance', 'web']],
    ['--namespace x after the verb', ['plan', 'status', '--namespace', 'shop', '--instance', 'web']],
    ['--namespace=x after the verb', ['plan', 'status', '--instance', 'web', '--namespace=shop']],
  ];
  for (const [placement, argv] of namespacePlacements) {
    it(`reads the namespace given as ${placement}`, () => {
      const { words, values } = parsed(argv);
      expect(words).to.deep.equal(['plan', 'status']);
      expect(values).to.deep.include({ namespace: 'shop', instance: 'web' });
    });
  }

  const connectionPlacements: [string, string[]][] = [
    ['all before the command', ['--kubeconfig', '/k', '--context', 'kind', '-n', 'shop', 'plan', 'status', '--instance', 'web']],
    ['all before the command, with =', ['--kubeconfig=/k', '--context=kind', '-n=shop', 'plan', 'status', '--instance', 'web']],
    ['spread over the line', ['--context', 'kind', 'plan', '--kubeconfig=/k', 'status', '--instance', 'web', '-n', 'shop']],
    ['all after the verb', ['plan', 'status', '--instance', 'web', '--kubeconfig', '/k', '--context=kind', '--namespace', 'shop']],
  ];
  for (const [placement, argv] of connectionPlacements) {
    it(`reads --kubeconfig, --context and -n ${placement}`, () => {
      const { words, values } = parsed(argv);
      expect(words).to.deep.equal(['plan', 'status']);
      expect(values).to.deep.include({ kubeconfig: '/k', context: 'kind', namespace: 'shop', instance: 'web' });
    });
  }

  it("keeps the verb's own arguments in order, and its short flags with = (as kubectl reads -o=json)", () => {
    const { words, args } = splitCommandLine(['-n', 'shop', 'plan', 'trigger', 'backup', '-o=json', '--instance', 'web']);
    expect(words).to.deep.equal(['plan', 'trigger']);
    expect(args).to.deep.equal(['--namespace', 'shop', 'backup', '-o', 'json', '--instance', 'web']);
  });

  it('leaves what follows -- alone', () => {
    expect(splitCommandLine(['plan', 'trigger', '--', '-n=x']).args).to.deep.equal(['--', '-n=x']);
  });

  it('a later flag wins over an earlier one, as in kubectl', () => {
    expect(parsed(['-n', 'first', 'plan', 'status', '--instance', 'web', '-n', 'second']).values.namespace).to.equal('second');
  });

  it('stops at help: `-n shop --help` is the top-level help', () => {
    expect(splitCommandLine(['-n', 'shop', '--help']).words).to.deep.equal(['--help']);
  });

  const errors: [string, string[], string][] = [
    ['a flag of a verb before the command', ['--wait', 'plan', 'status'], 'unknown flag: --wait'],
    ['an unknown flag before the command', ['--namespaces=x', 'plan', 'status'], 'unknown flag: --namespaces'],
    ['a global flag without its value', ['-n'], 'flag needs an argument: -n'],
  ];
  for (const [sentence, argv, message] of errors) {
    it(`usage error: ${sentence}`, () => {
      try {
        splitCommandLine(argv);
      } catch (err) {
        expect(err).to.be.instanceOf(CliError);
        expect((err as CliError).exitCode).to.equal(EXIT.usage);
        expect((err as CliError).message).to.equal(message);
        return;
      }
      throw new Error('expected a usage error');
    });
  }

  describe('through the dispatcher', () => {
    it('`-n shop plan status --help` prints the verb help', async () => {
      const io = memoryIO();
      expect(await run(['-n', 'shop', 'plan', 'status', '--help'], io)).to.equal(EXIT.ok);
      expect(io.out()).to.contain('plan status --instance INSTANCE');
    });

    it('`-n shop plan status` reaches the verb (which asks for --instance), not "unknown command"', async () => {
      const io = memoryIO();
      expect(await run(['-n', 'shop', 'plan', 'status'], io)).to.equal(EXIT.usage);
      expect(io.err()).to.contain('error: --instance is required');
    });

    it('`--wait plan status` is an unknown flag, with the top-level help pointer', async () => {
      const io = memoryIO();
      expect(await run(['--wait', 'plan', 'status'], io)).to.equal(EXIT.usage);
      expect(io.err()).to.equal("error: unknown flag: --wait\nSee 'kubectl planwarden --help' for usage.\n");
    });
  });
});
