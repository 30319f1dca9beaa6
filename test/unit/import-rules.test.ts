import { describe, expect, it } from 'vitest';
import { cycles, faceViolation, layerViolation } from '../../scripts/imports/rules.js';

/* The import rules `npm run lint` enforces (scripts/check-imports.ts, docs/design.md). */

describe('layerViolation', () => {
  it.each([
    ['lib/engine/start-run.ts', 'lib/store/sources.ts'],
    ['lib/store/items.ts', 'lib/run/hash.ts'],
    ['lib/engine/a.ts', 'lib/engine/b.ts'],
    ['lib/events/a.ts', 'lib/queue/b.ts'],
    ['functions/start-run.ts', 'lib/engine/start-run.ts'],
    ['test/unit/x.test.ts', 'scripts/check-imports.ts'],
    ['lib/cli/commands/demo.ts', 'tools/demo/run.ts'],
  ])('lets %s import %s', (from, to) => {
    expect(layerViolation(from, to)).toBeNull();
  });

  it.each([
    ['lib/queue/source-schedules.ts', 'lib/engine/start-run.ts', 'a higher layer'],
    ['lib/store/items.ts', 'lib/engine/deps.ts', 'a higher layer'],
    ['lib/engine/x.ts', 'test/support/aws.ts', 'outside the product'],
    ['lib/local/x.ts', 'tools/fake-source/index.ts', 'outside the product'],
    ['lib/run/model.ts', 'lib/aws/clients.ts', 'the pure core'],
    ['lib/engine/x.ts', 'lib/newthing/y.ts', 'in no layer'],
  ])('refuses %s importing %s (%s)', (from, to, why) => {
    expect(layerViolation(from, to)).toContain(why);
  });
});

describe('faceViolation', () => {
  it.each([
    ['functions/reaper.ts', 'lib/engine/index.ts'],
    ['lib/api/deps.ts', 'lib/engine/index.ts'],
    ['lib/engine/step/page-step.ts', 'lib/engine/work/page-work.ts'],
    ['test/unit/positions.test.ts', 'lib/engine/chain/positions.ts'],
    ['lib/api/deps.ts', 'lib/store/items.ts'],
  ])('lets %s import %s', (from, to) => {
    expect(faceViolation(from, to)).toBeNull();
  });

  it.each([
    ['functions/reaper.ts', 'lib/engine/reaper/reaper.ts', 'only through lib/engine/index.ts'],
    ['lib/local/runtime.ts', 'lib/engine/deps.ts', 'only through lib/engine/index.ts'],
    ['bench/setup.ts', 'lib/engine/create-deps.ts', 'only through lib/engine/index.ts'],
    ['lib/engine/run/finish.ts', 'lib/engine/index.ts', 'its own folder'],
  ])('refuses %s importing %s (%s)', (from, to, why) => {
    expect(faceViolation(from, to)).toContain(why);
  });
});

describe('cycles', () => {
  it('finds each cycle once, type-only or not, and no acyclic chain', () => {
    const edges = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['d.ts']],
    ]);

    expect(cycles(edges)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(
      cycles(
        new Map([
          ['x.ts', ['y.ts']],
          ['y.ts', []],
        ]),
      ),
    ).toEqual([]);
  });
});
