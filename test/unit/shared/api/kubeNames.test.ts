// The API server's name rules, as the preflight applies them to rendered objects.
import { expect } from 'chai';
import { labelValueProblem, objectNameProblem, qualifiedNameProblem } from '../../../../shared/api/kubeNames.ts';

describe('shared/api/kubeNames', () => {
  const names: [string, string, string, boolean][] = [
    ['a ConfigMap may be named with dots', 'v1/ConfigMap', 'app.config-1', true],
    ['a ConfigMap may not have upper case', 'v1/ConfigMap', 'App', false],
    ['a ConfigMap may not end in a dash', 'v1/ConfigMap', 'app-', false],
    ['a ConfigMap name may be 253 characters', 'v1/ConfigMap', 'a'.repeat(253), true],
    ['but not 254', 'v1/ConfigMap', 'a'.repeat(254), false],
    ['a name may not contain a newline', 'apps/v1/Deployment', 'web\nx', false],
    ['a name may not contain a space', 'apps/v1/Deployment', 'web x', false],
    ['a Service may not contain dots', 'v1/Service', 'web.x', false],
    ['a Service may not start with a digit', 'v1/Service', '1web', false],
    ['a Service may be named web-1', 'v1/Service', 'web-1', true],
    ['a Namespace is a DNS label', 'v1/Namespace', 'a'.repeat(64), false],
    ['a custom kind gets the subdomain rule', 'example.com/v1/Thing', 'x.y', true],
  ];
  for (const [sentence, kindKey, name, ok] of names) {
    it(`${sentence}`, () => {
      const [apiVersion, kind] = [kindKey.slice(0, kindKey.lastIndexOf('/')), kindKey.slice(kindKey.lastIndexOf('/') + 1)];
      const problem = objectNameProblem(apiVersion, kind, name);
      if (ok) expect(problem).to.equal(undefined);
      else expect(problem).to.be.a('string');
    });
  }

  const keys: [string, string, boolean][] = [
    ['a plain key', 'app', true],
    ['a prefixed key', 'planwarden.dev/instance', true],
    ['an empty key', '', false],
    ['a key with two slashes', 'a/b/c', false],
    ['a key with an upper-case prefix', 'Example.com/x', false],
    ['a key with a space', 'my key', false],
    ['a key of 64 characters', 'k'.repeat(64), false],
  ];
  for (const [sentence, key, ok] of keys) {
    it(`label key: ${sentence} is ${ok ? 'valid' : 'refused'}`, () => {
      expect(qualifiedNameProblem(key) === undefined).to.equal(ok);
    });
  }

  const values: [string, string, boolean][] = [
    ['empty', '', true],
    ['v1.2_3-x', 'v1.2_3-x', true],
    ['a value with a colon', 'a:b', false],
    ['a value ending in a dot', 'a.', false],
    ['a value of 64 characters', 'v'.repeat(64), false],
  ];
  for (const [sentence, value, ok] of values) {
    it(`label value: ${sentence} is ${ok ? 'valid' : 'refused'}`, () => {
      expect(labelValueProblem(value) === undefined).to.equal(ok);
    });
  }
});
