import { expect } from 'chai';
import { renderIdentity } from '../../../../shared/blueprint/identity.ts';

describe('renderIdentity', () => {
  const rows: {
    says: string;
    name?: string;
    spec: { version: string; operatorName?: string; appVersion?: string };
    want: { operatorName: string; appVersion: string };
  }[] = [
    {
      says: '.OperatorName is metadata.name without its trailing -<version>',
      name: 'kafka-1.2.0',
      spec: { version: '1.2.0' },
      want: { operatorName: 'kafka', appVersion: '' },
    },
    {
      says: 'a name that does not end in -<version> is the name itself',
      name: 'kafka',
      spec: { version: '1.2.0' },
      want: { operatorName: 'kafka', appVersion: '' },
    },
    {
      says: 'only a trailing -<version> is removed, not one in the middle',
      name: 'kafka-1.2.0-rc',
      spec: { version: '1.2.0' },
      want: { operatorName: 'kafka-1.2.0-rc', appVersion: '' },
    },
    {
      says: 'a name that is only the version stays whole (never empty)',
      name: '-1.2.0',
      spec: { version: '1.2.0' },
      want: { operatorName: '-1.2.0', appVersion: '' },
    },
    {
      says: 'spec.operatorName and spec.appVersion win when set',
      name: 'kafka-1.2.0',
      spec: { version: '1.2.0', operatorName: 'confluent', appVersion: '3.7.1' },
      want: { operatorName: 'confluent', appVersion: '3.7.1' },
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      expect(renderIdentity({ metadata: { ...(row.name === undefined ? {} : { name: row.name }) }, spec: row.spec })).to.deep.equal(
        row.want,
      );
    });
  }
});
