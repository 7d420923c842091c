import { expect } from 'chai';
import {
  dueTick,
  governs,
  maintenanceHold,
  maintenanceProblems,
  maintenanceState,
  nextMaintenanceEdge,
  nextWindowSpan,
  parseGoDuration,
  calendarWarnings,
  parsePause,
  scheduleProblems,
  tickRunId,
  zoneNameProblem,
  type MaintenanceSpec,
  type ScheduleSpec,
} from '../../../shared/calendar.ts';

const t = (s: string) => Date.parse(s);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString().replace(/\.000Z$/, 'Z'));

describe('shared/calendar', function () {
  describe('parseGoDuration', function () {
    const rows: [string, number | undefined][] = [
      ['2h', 7_200_000],
      ['1h30m', 5_400_000],
      ['90m', 5_400_000],
      ['1.5h', 5_400_000],
      ['300ms', 300],
      ['0', 0],
      ['-1h', -3_600_000],
      ['2 hours', undefined],
      ['h', undefined],
      ['', undefined],
      ['10', undefined],
    ];
    for (const [text, ms] of rows) {
      it(`"${text}" is ${ms === undefined ? 'not a duration' : `${ms} ms`}`, function () {
        expect(parseGoDuration(text)).to.equal(ms);
      });
    }
  });

  describe('parsePause', function () {
    const rows: [string | null | undefined, string][] = [
      [undefined, 'none'],
      [null, 'none'],
      ['false', 'none'],
      ['true', 'indefinite'],
      ['2026-12-01T06:00:00Z', 'until'],
      ['2026-12-01T07:00:00+01:00', 'until'],
      ['2026-12-01', 'invalid'],
      ['tomorrow', 'invalid'],
      ['TRUE', 'invalid'],
      // Issue 36, item 5: times that do not exist are refused, not rolled over.
      ['2026-02-30T00:00:00Z', 'invalid'],
      ['2026-04-31T00:00:00Z', 'invalid'],
      ['2026-12-01T24:00:00Z', 'invalid'],
      ['2026-12-01T23:59:60Z', 'invalid'],
      ['2028-02-29T00:00:00Z', 'until'],
    ];
    for (const [value, kind] of rows) {
      it(`pausedUntil ${JSON.stringify(value)} is ${kind}`, function () {
        expect(parsePause(value).kind).to.equal(kind);
      });
    }
  });

  describe('what admission refuses (maintenanceProblems, scheduleProblems)', function () {
    const now = t('2026-11-25T04:00:00Z');
    const rows: [string, MaintenanceSpec, string | undefined][] = [
      [
        'a window every Saturday at 02:00 for 2h in Europe/Berlin is valid',
        { windows: [{ schedule: '0 2 * * 6', duration: '2h', timeZone: 'Europe/Berlin' }] },
        undefined,
      ],
      ['@weekly for 168h is valid', { windows: [{ schedule: '@weekly', duration: '168h' }] }, undefined],
      ['minute 61 does not parse', { windows: [{ schedule: '61 * * * *', duration: '1h' }] }, 'windows[0].schedule'],
      ['six fields are refused', { windows: [{ schedule: '0 0 2 * * 6', duration: '1h' }] }, 'windows[0].schedule'],
      ['Mars/Base is no time zone', { windows: [{ schedule: '0 2 * * *', duration: '1h', timeZone: 'Mars/Base' }] }, 'windows[0].timeZone'],
      ['a window on 30 February never opens', { windows: [{ schedule: '0 0 30 2 *', duration: '1h' }] }, 'windows[0].schedule'],
      ['a duration of 0 is refused', { windows: [{ schedule: '0 2 * * *', duration: '0s' }] }, 'windows[0].duration'],
      ['a negative duration is refused', { windows: [{ schedule: '0 2 * * *', duration: '-1h' }] }, 'windows[0].duration'],
      ['a duration over a week is refused', { windows: [{ schedule: '0 2 * * *', duration: '169h' }] }, 'windows[0].duration'],
      ['"2 hours" is no Go duration', { windows: [{ schedule: '0 2 * * *', duration: '2 hours' }] }, 'windows[0].duration'],
      ['pausedUntil "yes" is refused', { pausedUntil: 'yes' }, 'pausedUntil'],
      ['pausedUntil an RFC 3339 time is valid', { pausedUntil: '2026-12-01T06:00:00Z' }, undefined],
      // Issue 36, items 4 and 6.
      [
        'PST is an abbreviation, not a tz name',
        { windows: [{ schedule: '0 2 * * *', duration: '1h', timeZone: 'PST' }] },
        'windows[0].timeZone',
      ],
      [
        'IST (India, Ireland or Israel) is refused',
        { windows: [{ schedule: '0 2 * * *', duration: '1h', timeZone: 'IST' }] },
        'windows[0].timeZone',
      ],
      ['CST is refused', { windows: [{ schedule: '0 2 * * *', duration: '1h', timeZone: 'CST' }] }, 'windows[0].timeZone'],
      [
        'europe/berlin is not spelled as the tz database spells it',
        { windows: [{ schedule: '0 2 * * *', duration: '1h', timeZone: 'europe/berlin' }] },
        'windows[0].timeZone',
      ],
      [
        'ASIA/KOLKATA is refused',
        { windows: [{ schedule: '0 2 * * *', duration: '1h', timeZone: 'ASIA/KOLKATA' }] },
        'windows[0].timeZone',
      ],
      ['the link Europe/Kiev is a name', { windows: [{ schedule: '0 2 * * *', duration: '1h', timeZone: 'Europe/Kiev' }] }, undefined],
      [
        'Europe/Kyiv and Asia/Kolkata are names',
        {
          windows: [
            { schedule: '0 2 * * *', duration: '1h', timeZone: 'Europe/Kyiv' },
            { schedule: '0 2 * * *', duration: '1h', timeZone: 'Asia/Kolkata' },
          ],
        },
        undefined,
      ],
      ['EST is a name (with a warning)', { windows: [{ schedule: '0 2 * * *', duration: '1h', timeZone: 'EST' }] }, undefined],
      ['a window of 1ms is refused', { windows: [{ schedule: '0 2 * * *', duration: '1ms' }] }, 'windows[0].duration'],
      ['a window of 59s is refused', { windows: [{ schedule: '0 2 * * *', duration: '59s' }] }, 'windows[0].duration'],
      ['a window of 1m is valid', { windows: [{ schedule: '* * * * *', duration: '1m' }] }, undefined],
      ['L in day of month is refused', { windows: [{ schedule: '0 2 L * *', duration: '1h' }] }, 'windows[0].schedule'],
      ['# in day of week is refused', { windows: [{ schedule: '0 2 * * 1#2', duration: '1h' }] }, 'windows[0].schedule'],
      ['W in day of month is refused', { windows: [{ schedule: '0 2 15W * *', duration: '1h' }] }, 'windows[0].schedule'],
      ['day names are not extensions', { windows: [{ schedule: '0 2 * * SAT,WED', duration: '1h' }] }, undefined],
    ];
    for (const [sentence, m, field] of rows) {
      it(sentence, function () {
        const problems = maintenanceProblems(m, now);
        if (field === undefined) expect(problems).to.deep.equal([]);
        else expect(problems.map((p) => p.field)).to.deep.equal([`spec.maintenance.${field}`]);
      });
    }
    it('a schedule with an unknown zone and one that never fires are refused, a daily one is not', function () {
      const base: ScheduleSpec = { name: 'nightly', plan: 'backup', schedule: '0 3 * * *' };
      expect(scheduleProblems(base, 0, now)).to.deep.equal([]);
      expect(scheduleProblems({ ...base, timeZone: 'Mars/Base' }, 1, now).map((p) => p.field)).to.deep.equal([
        'spec.schedules[1].timeZone',
      ]);
      expect(scheduleProblems({ ...base, schedule: '0 0 30 2 *' }, 0, now)[0]?.why).to.match(/never fires/);
    });
    it('startingDeadlineSeconds below 10 is refused (a reconcile 50 ms late would miss the tick); 10 is not', function () {
      const base: ScheduleSpec = { name: 'nightly', plan: 'backup', schedule: '0 3 * * *' };
      expect(scheduleProblems({ ...base, startingDeadlineSeconds: 0 }, 0, now).map((p) => p.field)).to.deep.equal([
        'spec.schedules[0].startingDeadlineSeconds',
      ]);
      expect(scheduleProblems({ ...base, startingDeadlineSeconds: 9 }, 0, now).map((p) => p.field)).to.deep.equal([
        'spec.schedules[0].startingDeadlineSeconds',
      ]);
      expect(scheduleProblems({ ...base, startingDeadlineSeconds: 10 }, 0, now)).to.deep.equal([]);
    });
  });

  describe('zone names as the tz database spells them (zoneNameProblem)', function () {
    // Real names whose casing is not a capital and small letters: the irregular words and
    // the small particles, plus names ICU knows by an older one (Asia/Kolkata is Asia/Calcutta).
    const IRREGULAR = [
      'US/Pacific',
      'Australia/NSW',
      'Australia/LHI',
      'Antarctica/McMurdo',
      'Antarctica/DumontDUrville',
      'America/Knox_IN',
      'America/Argentina/ComodRivadavia',
      'Brazil/DeNoronha',
      'Chile/EasterIsland',
      'Mexico/BajaSur',
      'Etc/GMT0',
      'Etc/GMT+5',
      'GB-Eire',
      'NZ-CHAT',
      'W-SU',
      'EST5EDT',
      'America/Port-au-Prince',
      'Africa/Dar_es_Salaam',
      'Europe/Isle_of_Man',
      'Asia/Kolkata',
      'Asia/Ho_Chi_Minh',
      'Europe/Kyiv',
      'America/Argentina/Buenos_Aires',
    ];

    it('accepts every name the runtime lists, and the irregularly cased ones', function () {
      for (const zone of [...Intl.supportedValuesOf('timeZone'), ...IRREGULAR]) expect(zoneNameProblem(zone), zone).to.equal(undefined);
    });

    it('refuses each of them in small or capital letters, and names the spelling to write', function () {
      for (const zone of IRREGULAR) {
        for (const wrong of [zone.toLowerCase(), zone.toUpperCase()]) {
          if (wrong === zone) continue;
          const problem = zoneNameProblem(wrong);
          expect(problem?.why, wrong).to.contain('is not spelled as the tz database spells it');
          expect(problem?.fix, wrong).to.equal(`write "${zone}"`);
        }
      }
    });
  });

  describe('what admission warns about (calendarWarnings)', function () {
    const now = t('2026-11-25T04:00:00Z');
    const rows: [string, MaintenanceSpec | undefined, ScheduleSpec[] | undefined, RegExp[]][] = [
      [
        'EST says it is UTC−5 all year',
        { windows: [{ schedule: '0 9 * * *', duration: '1h', timeZone: 'EST' }] },
        undefined,
        [/"EST" means UTC−5 all year/],
      ],
      [
        'Etc/GMT-2 says it means UTC+2',
        undefined,
        [{ name: 'n', plan: 'backup', schedule: '0 3 * * *', timeZone: 'Etc/GMT-2' }],
        [/"Etc\/GMT-2" means UTC\+2 all year/],
      ],
      [
        'a pausedUntil already past says nothing is paused',
        { pausedUntil: '2026-11-24T00:00:00Z' },
        undefined,
        [/already past, so nothing is paused/],
      ],
      [
        'Europe/Berlin and a future pause warn of nothing',
        { pausedUntil: '2026-12-24T00:00:00Z', windows: [{ schedule: '0 9 * * *', duration: '1h', timeZone: 'Europe/Berlin' }] },
        undefined,
        [],
      ],
    ];
    for (const [sentence, m, schedules, messages] of rows) {
      it(sentence, function () {
        const warnings = calendarWarnings(m, schedules, now);
        expect(warnings).to.have.length(messages.length);
        messages.forEach((re, i) => expect(warnings[i]?.message).to.match(re));
      });
    }
  });

  describe('governs', function () {
    it('every plan but cleanup when plans is absent; only the listed ones otherwise; never cleanup', function () {
      expect(governs({}, 'backup')).to.equal(true);
      expect(governs({}, 'cleanup')).to.equal(false);
      expect(governs({ plans: ['upgrade'] }, 'backup')).to.equal(false);
      expect(governs({ plans: ['upgrade', 'cleanup'] }, 'cleanup')).to.equal(false);
      expect(governs(undefined, 'upgrade')).to.equal(false);
    });
  });

  describe('maintenanceHold', function () {
    const saturdayBerlin: MaintenanceSpec = { windows: [{ schedule: '0 2 * * 6', duration: '2h', timeZone: 'Europe/Berlin' }] };
    const rows: {
      sentence: string;
      m: MaintenanceSpec | undefined;
      plan?: string;
      now: string;
      held: false | 'Paused' | 'AwaitingWindow';
      startsAt?: string;
    }[] = [
      { sentence: 'no maintenance holds nothing', m: undefined, now: '2026-11-25T12:00:00Z', held: false },
      { sentence: 'a pause "true" holds until it is lifted', m: { pausedUntil: 'true' }, now: '2026-11-25T12:00:00Z', held: 'Paused' },
      { sentence: 'a pause "false" holds nothing', m: { pausedUntil: 'false' }, now: '2026-11-25T12:00:00Z', held: false },
      {
        sentence: 'a pause until a later time holds until then',
        m: { pausedUntil: '2026-11-25T12:00:20Z' },
        now: '2026-11-25T12:00:00Z',
        held: 'Paused',
        startsAt: '2026-11-25T12:00:20Z',
      },
      {
        sentence: 'a pause until a past time holds nothing',
        m: { pausedUntil: '2026-11-25T11:00:00Z' },
        now: '2026-11-25T12:00:00Z',
        held: false,
      },
      { sentence: 'a pause does not hold cleanup', m: { pausedUntil: 'true' }, plan: 'cleanup', now: '2026-11-25T12:00:00Z', held: false },
      {
        sentence: 'a pause does not hold a plan maintenance.plans leaves out',
        m: { pausedUntil: 'true', plans: ['upgrade'] },
        plan: 'backup',
        now: '2026-11-25T12:00:00Z',
        held: false,
      },
      {
        sentence: 'on a Wednesday a Saturday window in Berlin holds until Saturday 02:00 CET (01:00Z)',
        m: saturdayBerlin,
        now: '2026-11-25T12:00:00Z',
        held: 'AwaitingWindow',
        startsAt: '2026-11-28T01:00:00Z',
      },
      { sentence: 'inside the Saturday window nothing is held', m: saturdayBerlin, now: '2026-11-28T02:30:00Z', held: false },
      { sentence: "at the window's opening instant nothing is held", m: saturdayBerlin, now: '2026-11-28T01:00:00Z', held: false },
      {
        sentence: "at the window's closing instant the next Saturday is awaited",
        m: saturdayBerlin,
        now: '2026-11-28T03:00:00Z',
        held: 'AwaitingWindow',
        startsAt: '2026-12-05T01:00:00Z',
      },
      {
        sentence: 'a pause ending before a window opens holds until the window (reason Paused)',
        m: { ...saturdayBerlin, pausedUntil: '2026-11-26T00:00:00Z' },
        now: '2026-11-25T12:00:00Z',
        held: 'Paused',
        startsAt: '2026-11-28T01:00:00Z',
      },
      {
        sentence: 'a pause ending inside a window holds until the pause ends',
        m: { ...saturdayBerlin, pausedUntil: '2026-11-28T02:00:00Z' },
        now: '2026-11-28T01:30:00Z',
        held: 'Paused',
        startsAt: '2026-11-28T02:00:00Z',
      },
      {
        sentence: 'a window across midnight (23:00 for 3h UTC) is open at 01:00',
        m: { windows: [{ schedule: '0 23 * * *', duration: '3h' }] },
        now: '2026-11-26T01:00:00Z',
        held: false,
      },
      {
        sentence: 'a window across midnight is closed at 02:00 and opens again at 23:00',
        m: { windows: [{ schedule: '0 23 * * *', duration: '3h' }] },
        now: '2026-11-26T02:00:00Z',
        held: 'AwaitingWindow',
        startsAt: '2026-11-26T23:00:00Z',
      },
      {
        sentence: 'a window at 09:00 in Asia/Kolkata (UTC+5:30) opens at 03:30Z',
        m: { windows: [{ schedule: '0 9 * * *', duration: '1h', timeZone: 'Asia/Kolkata' }] },
        now: '2026-11-25T00:00:00Z',
        held: 'AwaitingWindow',
        startsAt: '2026-11-25T03:30:00Z',
      },
      {
        sentence: 'the Kolkata window (03:30Z–04:30Z) is closed at 04:30Z: the next one opens tomorrow',
        m: { windows: [{ schedule: '0 9 * * *', duration: '1h', timeZone: 'Asia/Kolkata' }] },
        now: '2026-11-25T04:30:00Z',
        held: 'AwaitingWindow',
        startsAt: '2026-11-26T03:30:00Z',
      },
      {
        sentence: 'a @weekly window (Sunday 00:00 UTC) awaited on a Wednesday',
        m: { windows: [{ schedule: '@weekly', duration: '1h' }] },
        now: '2026-11-25T12:00:00Z',
        held: 'AwaitingWindow',
        startsAt: '2026-11-29T00:00:00Z',
      },
      {
        sentence: 'of two windows the one opening first decides',
        m: {
          windows: [
            { schedule: '0 20 * * *', duration: '1h' },
            { schedule: '0 14 * * *', duration: '1h' },
          ],
        },
        now: '2026-11-25T12:00:00Z',
        held: 'AwaitingWindow',
        startsAt: '2026-11-25T14:00:00Z',
      },
      {
        sentence: 'spring forward: a 02:30 Berlin window opens at 03:00 CEST (01:00Z) on 2026-03-29',
        m: { windows: [{ schedule: '30 2 * * *', duration: '1h', timeZone: 'Europe/Berlin' }] },
        now: '2026-03-28T12:00:00Z',
        held: 'AwaitingWindow',
        startsAt: '2026-03-29T01:00:00Z',
      },
      {
        sentence: 'fall back: a 02:30 Berlin window opens once, at 02:30 CEST (00:30Z) on 2026-10-25',
        m: { windows: [{ schedule: '30 2 * * *', duration: '30m', timeZone: 'Europe/Berlin' }] },
        now: '2026-10-24T12:00:00Z',
        held: 'AwaitingWindow',
        startsAt: '2026-10-25T00:30:00Z',
      },
      {
        sentence: 'spring forward: a list (30 2,14) keeps its 02:30 run, at 03:00 CEST (01:00Z), as a single time does',
        m: { windows: [{ schedule: '30 2,14 * * *', duration: '30m', timeZone: 'Europe/Berlin' }] },
        now: '2026-03-28T14:00:00Z',
        held: 'AwaitingWindow',
        startsAt: '2026-03-29T01:00:00Z',
      },
      {
        sentence: 'fall back: a list (30 2,14) opens once in the repeated hour, not again at 02:30 CET',
        m: { windows: [{ schedule: '30 2,14 * * *', duration: '30m', timeZone: 'Europe/Berlin' }] },
        now: '2026-10-25T01:00:00Z',
        held: 'AwaitingWindow',
        startsAt: '2026-10-25T13:30:00Z',
      },
      {
        sentence: 'EST is UTC−5 all year: 09:00 in July is 14:00Z',
        m: { windows: [{ schedule: '0 9 * * *', duration: '1h', timeZone: 'EST' }] },
        now: '2026-07-15T12:00:00Z',
        held: 'AwaitingWindow',
        startsAt: '2026-07-15T14:00:00Z',
      },
      {
        sentence: 'fall back: 02:30 CET (01:30Z), the repeated hour, opens no second window',
        m: { windows: [{ schedule: '30 2 * * *', duration: '30m', timeZone: 'Europe/Berlin' }] },
        now: '2026-10-25T01:30:00Z',
        held: 'AwaitingWindow',
        startsAt: '2026-10-26T01:30:00Z',
      },
    ];
    for (const row of rows) {
      it(row.sentence, function () {
        const hold = maintenanceHold(row.m, row.plan ?? 'upgrade', t(row.now));
        if (row.held === false) {
          expect(hold).to.deep.equal({ held: false });
          return;
        }
        expect(hold.held).to.equal(true);
        if (!hold.held) return;
        expect(hold.reason).to.equal(row.held);
        expect(iso(hold.startsAt)).to.equal(row.startsAt);
        if (row.startsAt) expect(hold.message).to.contain(row.startsAt);
        else expect(hold.message).to.contain('until the pause is lifted');
      });
    }
  });

  describe('window spans, status and edges', function () {
    it('overlapping windows merge: 01:00+2h and 02:00+2h are one span 01:00–04:00', function () {
      const m: MaintenanceSpec = {
        windows: [
          { schedule: '0 1 * * *', duration: '2h' },
          { schedule: '0 2 * * *', duration: '2h' },
        ],
      };
      const span = nextWindowSpan(m, t('2026-11-25T00:00:00Z'));
      expect([iso(span?.start), iso(span?.end)]).to.deep.equal(['2026-11-25T01:00:00Z', '2026-11-25T04:00:00Z']);
    });
    it('a window open at now reports when it opened and when it closes', function () {
      const m: MaintenanceSpec = { windows: [{ schedule: '0 23 * * *', duration: '3h' }] };
      expect(maintenanceState(m, t('2026-11-26T01:00:00Z'))).to.deep.equal({
        paused: false,
        nextWindow: { start: '2026-11-25T23:00:00Z', end: '2026-11-26T02:00:00Z' },
      });
    });
    it('a 2h window opened at 01:30 CET on the fall-back day closes two real hours later', function () {
      const m: MaintenanceSpec = { windows: [{ schedule: '30 1 * * *', duration: '2h', timeZone: 'Europe/Berlin' }] };
      const span = nextWindowSpan(m, t('2026-10-24T12:00:00Z'));
      expect([iso(span?.start), iso(span?.end)]).to.deep.equal(['2026-10-24T23:30:00Z', '2026-10-25T01:30:00Z']);
    });
    it('status says paused for a pause "true" and for one in the future, not for one past', function () {
      expect(maintenanceState({ pausedUntil: 'true' }, t('2026-11-25T00:00:00Z'))).to.deep.equal({ paused: true });
      expect(maintenanceState({ pausedUntil: '2026-11-25T00:00:20Z' }, t('2026-11-25T00:00:00Z')).paused).to.equal(true);
      expect(maintenanceState({ pausedUntil: '2026-11-24T00:00:00Z' }, t('2026-11-25T00:00:00Z')).paused).to.equal(false);
    });
    const edges: [string, MaintenanceSpec, string, string | undefined][] = [
      [
        'the next edge of a pause until a time is that time',
        { pausedUntil: '2026-11-25T00:00:20Z' },
        '2026-11-25T00:00:00Z',
        '2026-11-25T00:00:20Z',
      ],
      ['a pause "true" has no edge (only a write lifts it)', { pausedUntil: 'true' }, '2026-11-25T00:00:00Z', undefined],
      [
        'outside a window the next edge is its opening',
        { windows: [{ schedule: '0 2 * * *', duration: '1h' }] },
        '2026-11-25T00:00:00Z',
        '2026-11-25T02:00:00Z',
      ],
      [
        'inside a window the next edge is its closing',
        { windows: [{ schedule: '0 2 * * *', duration: '1h' }] },
        '2026-11-25T02:10:00Z',
        '2026-11-25T03:00:00Z',
      ],
      [
        'a pause ending before the window opens is the earlier edge',
        { pausedUntil: '2026-11-25T01:00:00Z', windows: [{ schedule: '0 2 * * *', duration: '1h' }] },
        '2026-11-25T00:00:00Z',
        '2026-11-25T01:00:00Z',
      ],
    ];
    for (const [sentence, m, now, edge] of edges) {
      it(sentence, function () {
        expect(iso(nextMaintenanceEdge(m, t(now)))).to.equal(edge);
      });
    }
  });

  describe('dueTick', function () {
    const nightly: ScheduleSpec = { name: 'nightly', plan: 'backup', schedule: '0 3 * * *' };
    const rows: {
      sentence: string;
      s?: Partial<ScheduleSpec>;
      memory?: { lastScheduleTime?: string; nextScheduleTime?: string };
      now: string;
      tick?: string;
      late?: boolean;
      passedOver?: number;
      next: string;
    }[] = [
      {
        sentence: 'a schedule seen for the first time has nothing due; its next tick is tomorrow 03:00',
        now: '2026-11-25T04:00:00Z',
        next: '2026-11-26T03:00:00Z',
      },
      {
        sentence: 'before the expected tick nothing is due',
        memory: { nextScheduleTime: '2026-11-26T03:00:00Z' },
        now: '2026-11-26T02:59:59Z',
        next: '2026-11-26T03:00:00Z',
      },
      {
        sentence: 'at the expected tick it is due',
        memory: { nextScheduleTime: '2026-11-26T03:00:00Z' },
        now: '2026-11-26T03:00:00Z',
        tick: '2026-11-26T03:00:00Z',
        late: false,
        passedOver: 0,
        next: '2026-11-27T03:00:00Z',
      },
      {
        sentence: 'a tick already handled is not due again',
        memory: { lastScheduleTime: '2026-11-26T03:00:00Z' },
        now: '2026-11-26T03:01:00Z',
        next: '2026-11-27T03:00:00Z',
      },
      {
        sentence: 'a tick 4 minutes late is still within the 300 s deadline',
        memory: { lastScheduleTime: '2026-11-25T03:00:00Z' },
        now: '2026-11-26T03:04:00Z',
        tick: '2026-11-26T03:00:00Z',
        late: false,
        passedOver: 0,
        next: '2026-11-27T03:00:00Z',
      },
      {
        sentence: 'a tick 6 minutes late is missed',
        memory: { lastScheduleTime: '2026-11-25T03:00:00Z' },
        now: '2026-11-26T03:06:00Z',
        tick: '2026-11-26T03:00:00Z',
        late: true,
        passedOver: 0,
        next: '2026-11-27T03:00:00Z',
      },
      {
        sentence: 'a tick 6 minutes late runs with a deadline of 600 s',
        s: { startingDeadlineSeconds: 600 },
        memory: { lastScheduleTime: '2026-11-25T03:00:00Z' },
        now: '2026-11-26T03:06:00Z',
        tick: '2026-11-26T03:00:00Z',
        late: false,
        passedOver: 0,
        next: '2026-11-27T03:00:00Z',
      },
      {
        sentence: 'after two days down only the latest tick counts; the one before was passed over',
        memory: { lastScheduleTime: '2026-11-24T03:00:00Z' },
        now: '2026-11-26T03:01:00Z',
        tick: '2026-11-26T03:00:00Z',
        late: false,
        passedOver: 1,
        next: '2026-11-27T03:00:00Z',
      },
      {
        sentence: 'every minute: the tick of this minute is due',
        s: { schedule: '* * * * *' },
        memory: { lastScheduleTime: '2026-11-26T03:00:00Z' },
        now: '2026-11-26T03:01:30Z',
        tick: '2026-11-26T03:01:00Z',
        late: false,
        passedOver: 0,
        next: '2026-11-26T03:02:00Z',
      },
      {
        sentence: 'in Asia/Kolkata 03:00 is 21:30Z the day before',
        s: { timeZone: 'Asia/Kolkata' },
        memory: { nextScheduleTime: '2026-11-25T21:30:00Z' },
        now: '2026-11-25T21:30:05Z',
        tick: '2026-11-25T21:30:00Z',
        late: false,
        passedOver: 0,
        next: '2026-11-26T21:30:00Z',
      },
    ];
    for (const row of rows) {
      it(row.sentence, function () {
        const v = dueTick({ ...nightly, ...row.s }, row.memory, t(row.now));
        expect({ tick: iso(v.tick), next: iso(v.next) }).to.deep.equal({ tick: row.tick, next: row.next });
        if (row.tick) expect({ late: v.late, passedOver: v.passedOver }).to.deep.equal({ late: row.late, passedOver: row.passedOver });
      });
    }
    it("a tick's run id is the schedule name and the tick time", function () {
      expect(tickRunId('nightly', t('2026-11-26T03:00:00Z'))).to.equal('nightly-2026-11-26T03:00:00Z');
    });
  });
});
