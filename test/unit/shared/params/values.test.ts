// Table tests of typed parameters: each row a value against a declaration (fits, or the
// reason it does not), then declarations against themselves.
import { expect } from 'chai';
import type { Parameter } from '../../../../shared/api/schema.ts';
import { declarationProblems, describeDeclaration, showValue, valueProblem, VALUE_MAX_BYTES } from '../../../../shared/params/values.ts';

const decl = (extra: Partial<Parameter> = {}): Parameter => ({ name: 'P', ...extra });

/** [sentence, declaration, value, expected: undefined (fits) or a fragment of the reason] */
const VALUES: [string, Parameter, string, string | undefined][] = [
  ['a string without declaration of type fits anything', decl(), 'debug\n  extra: added', undefined],
  ['an integer with digits fits', decl({ type: 'integer' }), '42', undefined],
  ['an integer with a sign fits', decl({ type: 'integer' }), '-7', undefined],
  ['an integer "+3" fits', decl({ type: 'integer' }), '+3', undefined],
  ['an integer "0" fits', decl({ type: 'integer' }), '0', undefined],
  ['an integer "1e3" is refused', decl({ type: 'integer' }), '1e3', 'not a base-10 integer'],
  ['an integer "0x10" is refused', decl({ type: 'integer' }), '0x10', 'not a base-10 integer'],
  ['an integer " 3" is refused', decl({ type: 'integer' }), ' 3', 'not a base-10 integer'],
  ['an integer "3 " is refused', decl({ type: 'integer' }), '3 ', 'not a base-10 integer'],
  ['an integer "+-1" is refused', decl({ type: 'integer' }), '+-1', 'not a base-10 integer'],
  ['an integer "007" (octal in YAML 1.1) is refused', decl({ type: 'integer' }), '007', 'not a base-10 integer'],
  ['an integer "five" is refused', decl({ type: 'integer' }), 'five', 'not a base-10 integer'],
  ['an empty integer is refused', decl({ type: 'integer' }), '', 'not a base-10 integer'],
  ['an integer at int64 max fits', decl({ type: 'integer' }), '9223372036854775807', undefined],
  ['an integer past int64 max is refused', decl({ type: 'integer' }), '9223372036854775808', 'outside the 64-bit'],
  ['an integer below its minimum is refused', decl({ type: 'integer', minimum: 1 }), '0', 'less than the minimum 1'],
  ['an integer above its maximum is refused', decl({ type: 'integer', maximum: 10 }), '11', 'greater than the maximum 10'],
  [
    'a big integer is compared exactly with the maximum',
    decl({ type: 'integer', maximum: 9007199254740992 }),
    '9007199254740993',
    'greater than the maximum',
  ],
  ['an integer on its bounds fits', decl({ type: 'integer', minimum: 1, maximum: 10 }), '10', undefined],
  ['a number "2.5" fits', decl({ type: 'number' }), '2.5', undefined],
  ['a number ".5" fits', decl({ type: 'number' }), '.5', undefined],
  ['a number "1e3" fits', decl({ type: 'number' }), '1e3', undefined],
  ['a number "1e999" (infinite) is refused', decl({ type: 'number' }), '1e999', 'not a finite number'],
  ['a number ".inf" is refused', decl({ type: 'number' }), '.inf', 'not a decimal number'],
  ['a number "NaN" is refused', decl({ type: 'number' }), 'NaN', 'not a decimal number'],
  ['a number "0x10" is refused', decl({ type: 'number' }), '0x10', 'not a decimal number'],
  ['a number below its minimum is refused', decl({ type: 'number', minimum: 0.5 }), '0.25', 'less than the minimum 0.5'],
  ['a boolean "true" fits', decl({ type: 'boolean' }), 'true', undefined],
  ['a boolean "false" fits', decl({ type: 'boolean' }), 'false', undefined],
  ['a boolean "yes" is refused', decl({ type: 'boolean' }), 'yes', 'not "true" or "false"'],
  ['a boolean "True" is refused', decl({ type: 'boolean' }), 'True', 'not "true" or "false"'],
  ['an array in flow style fits', decl({ type: 'array' }), '[a, b]', undefined],
  ['an array in block style fits', decl({ type: 'array' }), '- a\n- b', undefined],
  ['an array in JSON fits', decl({ type: 'array' }), '["a", 1]', undefined],
  ['an array that is a mapping is refused', decl({ type: 'array' }), '{a: 1}', 'not a list'],
  ['an array that is a scalar is refused', decl({ type: 'array' }), 'a', 'not a list'],
  ['an array of two documents is refused', decl({ type: 'array' }), '[a]\n---\n[b]', 'does not parse as YAML'],
  ['an array with an anchor is refused', decl({ type: 'array' }), '[&x a, b]', 'an anchor'],
  ['an array with an alias is refused', decl({ type: 'array' }), '[*x]', 'alias'],
  ['a billion-laughs alias bomb is refused', decl({ type: 'array' }), 'a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]', 'anchor'],
  ['an array with a tag is refused', decl({ type: 'array' }), '[!!binary aGk=]', 'a tag'],
  [
    'an array nested deeper than the parser can go is refused, not a crash',
    decl({ type: 'array' }),
    '['.repeat(30000),
    'does not parse as YAML',
  ],
  ['an array nested 100 deep fits', decl({ type: 'array' }), `${'['.repeat(100)}${']'.repeat(100)}`, undefined],
  [
    'an array nested 101 deep is refused before it is parsed',
    decl({ type: 'array' }),
    `${'['.repeat(101)}${']'.repeat(101)}`,
    'nested deeper than 100 levels',
  ],
  ['brackets inside a quoted item are text, not nesting', decl({ type: 'array' }), `["${'['.repeat(500)}"]`, undefined],
  ['a map in flow style fits', decl({ type: 'map' }), '{a: 1, b: [x]}', undefined],
  ['a map in block style fits', decl({ type: 'map' }), 'a: 1\nb: two', undefined],
  ['a map that is a list is refused', decl({ type: 'map' }), '[a]', 'not a mapping'],
  ['a map with a duplicate key is refused', decl({ type: 'map' }), '{a: 1, a: 2}', 'does not parse as YAML'],
  ['an empty map text (null) is refused', decl({ type: 'map' }), '', 'not a mapping'],
  ['a value in the enum fits', decl({ enum: ['small', 'large'] }), 'large', undefined],
  ['a value outside the enum is refused', decl({ enum: ['small', 'large'] }), 'huge', 'not one of the allowed values'],
  ['an integer in its enum fits', decl({ type: 'integer', enum: ['1', '3'] }), '3', undefined],
  ['an integer outside its enum is refused', decl({ type: 'integer', enum: ['1', '3'] }), '2', 'not one of the allowed values'],
  ['a string matching its pattern fits', decl({ pattern: '[a-z]+' }), 'abc', undefined],
  ['a string matching only part of its pattern is refused', decl({ pattern: '[a-z]+' }), 'abc1', 'does not match the pattern'],
  ['a catastrophic pattern answers (RE2: linear time)', decl({ pattern: '(a+)+$' }), `${'a'.repeat(30)}!`, 'does not match the pattern'],
  [
    'a catastrophic pattern answers on a 64 KiB value',
    decl({ pattern: '(a|aa)+$' }),
    `${'a'.repeat(VALUE_MAX_BYTES - 1)}!`,
    'does not match the pattern',
  ],
  ['a 1 MiB value is refused before anything else', decl({ pattern: '(a+)+$' }), 'a'.repeat(1 << 20), 'at most 65536 bytes'],
  ['a value of exactly 64 KiB fits', decl(), 'a'.repeat(VALUE_MAX_BYTES), undefined],
  [
    'a value of 64 KiB of multi-byte characters is refused by its bytes',
    decl(),
    'é'.repeat(VALUE_MAX_BYTES / 2 + 1),
    'at most 65536 bytes',
  ],
  ['a value with NUL is refused', decl(), 'a\u0000b', 'NUL'],
  ['a value with a lone surrogate is refused', decl(), 'a\ud800b', 'lone surrogate'],
  ['a value with U+FFFD (invalid UTF-8 decoded) is refused', decl(), 'a\ufffdb', 'not valid UTF-8'],
  ['a value with an emoji (a surrogate pair) fits', decl(), 'ok 🚀', undefined],
];

/** [sentence, declaration, expected: [] (valid) or fragments of the problems] */
const DECLARATIONS: [string, Parameter, string[]][] = [
  ['a plain string parameter is valid', decl({ default: 'x' }), []],
  ['a typed parameter with a fitting default is valid', decl({ type: 'integer', default: '3', minimum: 1, maximum: 5 }), []],
  ['a default that does not fit the type is refused', decl({ type: 'integer', default: 'five' }), ['default "five" does not fit']],
  ['a default outside the enum is refused', decl({ enum: ['a'], default: 'b' }), ['default "b" does not fit']],
  ['a default not matching the pattern is refused', decl({ pattern: '[0-9]+', default: 'x' }), ['default "x" does not fit']],
  ['an unknown type is refused', decl({ type: 'float' as Parameter['type'] }), ['type "float" is not one of']],
  ['a pattern that is not RE2 (lookahead) is refused', decl({ pattern: '(?=a)a' }), ['does not compile']],
  ['a pattern with a repeat count over 1000 is refused', decl({ pattern: 'a{1001}' }), ['does not compile']],
  ['a pattern of 5,000 characters is refused', decl({ pattern: 'a'.repeat(5000) }), ['5000 characters long']],
  ['a pattern on an integer is refused', decl({ type: 'integer', pattern: '[0-9]+' }), ['pattern applies to strings only']],
  ['minimum on a string is refused', decl({ minimum: 1 }), ['apply to integer and number only']],
  ['maximum on a boolean is refused', decl({ type: 'boolean', maximum: 1 }), ['apply to integer and number only']],
  ['minimum greater than maximum is refused', decl({ type: 'integer', minimum: 5, maximum: 1 }), ['minimum 5 is greater than maximum 1']],
  ['an enum on an integer with integer values is valid', decl({ type: 'integer', enum: ['1', '2'] }), []],
  [
    'an enum on an integer with a non-integer value is refused',
    decl({ type: 'integer', enum: ['1', 'two'] }),
    ['enum value "two" does not fit'],
  ],
  [
    'an enum value outside minimum/maximum is refused',
    decl({ type: 'integer', enum: ['1', '20'], maximum: 10 }),
    ['enum value "20" does not fit'],
  ],
  ['an enum on an array is refused', decl({ type: 'array', enum: ['[a]'] }), ['enum applies to string, integer, number and boolean']],
  ['an empty enum is refused', decl({ enum: [] }), ['enum is empty']],
  ['a default of an array that is a list is valid', decl({ type: 'array', default: '[]' }), []],
  ['a default of a map that is a list is refused', decl({ type: 'map', default: '[]' }), ['not a mapping']],
  ['perRun with immutable is refused', decl({ perRun: true, immutable: true }), ['perRun and immutable']],
];

describe('typed parameter values (shared/params/values.ts)', () => {
  for (const [sentence, d, value, expected] of VALUES) {
    it(sentence, () => {
      const problem = valueProblem(d, value);
      if (expected === undefined) expect(problem, `${describeDeclaration(d)} ${showValue(value)}`).to.equal(undefined);
      else expect(problem).to.be.a('string').that.includes(expected);
    });
  }
});

describe('typed parameter declarations (shared/params/values.ts)', () => {
  for (const [sentence, d, expected] of DECLARATIONS) {
    it(sentence, () => {
      const problems = declarationProblems(d);
      if (expected.length === 0) expect(problems).to.deep.equal([]);
      else for (const e of expected) expect(problems.join('\n')).to.include(e);
    });
  }

  it('a value in a message is clipped: a 1 MiB value is shown in at most 42 characters', () => {
    expect(showValue('x'.repeat(1 << 20)).length).to.be.at.most(42);
  });
});
