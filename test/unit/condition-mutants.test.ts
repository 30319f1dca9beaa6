import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findConditions } from '../../scripts/conditions/find.js';
import { always, mutantsOf, never } from '../../scripts/conditions/mutate.js';

/* The condition-mutant generator behind `npm run test:conditions`. */

const texts = (fragment: string) => mutantsOf(fragment).map((mutant) => mutant.text);
const placeholders = (text: string) => [...new Set(text.match(/[:#]\w+/g) ?? [])].sort();

describe('mutantsOf', () => {
  it('weakens the item version guard every way the store must defend', () => {
    const guard = 'attribute_not_exists(entityId) OR #version < :version';

    expect(texts(guard)).toEqual(
      expect.arrayContaining([
        'attribute_not_exists(entityId) OR #version <> :version',
        'attribute_not_exists(entityId) OR #version <= :version',
        'attribute_exists(entityId) OR #version < :version',
        `attribute_not_exists(entityId) OR ${never('#version < :version', '#version')}`,
        `${never('attribute_not_exists(entityId)', 'entityId')} OR #version < :version`,
      ]),
    );
  });

  it('drops a clause of an AND as always true, inside groups and after a leading connector', () => {
    expect(texts('a = :a AND (b = :b OR attribute_not_exists(b))')).toEqual(
      expect.arrayContaining([
        `${always('a = :a', 'a')} AND (b = :b OR attribute_not_exists(b))`,
        `a = :a AND (${never('b = :b', 'b')} OR attribute_not_exists(b))`,
      ]),
    );
    expect(texts(' AND epoch = :epoch')).toContain(` AND ${always('epoch = :epoch', 'epoch')}`);
    expect(texts(' OR epoch = :epoch')).toContain(` OR ${never('epoch = :epoch', 'epoch')}`);
  });

  it('drops one value of an IN list, keeping it used', () => {
    expect(texts('#state IN (:queued, :running)')).toContain(
      `(#state IN (:queued) OR ${never('#state = :running', '#state')})`,
    );
  });

  it('changes every mutant and keeps every name and value used, as DynamoDB requires', () => {
    const condition =
      'attribute_exists(runId) AND #state IN (:queued, :running) AND epoch = :epoch AND (attribute_not_exists(h) OR h <> :h)';
    for (const mutant of mutantsOf(condition)) {
      expect(mutant.text).not.toBe(condition);
      expect(placeholders(mutant.text)).toEqual(placeholders(condition));
    }
  });

  it('marks only the missing-attribute clause of `attribute_not_exists(x) OR x <> :v` as equivalent', () => {
    const equivalent = mutantsOf('attribute_not_exists(k) OR k <> :k').filter((mutant) => mutant.equivalent);
    expect(equivalent.map((mutant) => mutant.description)).toEqual(['drop `attribute_not_exists(k)`']);
    expect(mutantsOf('attribute_not_exists(k) OR k < :k').filter((mutant) => mutant.equivalent)).toEqual([]);
  });

  it("marks dropping a key's `attribute_exists` beside a comparison in an AND as equivalent, and only that", () => {
    const equivalent = (fragment: string) =>
      mutantsOf(fragment)
        .filter((mutant) => mutant.equivalent)
        .map((mutant) => mutant.description);

    expect(equivalent('attribute_exists(runId) AND #state = :running AND epoch = :epoch')).toEqual([
      'drop `attribute_exists(runId)`',
    ]);
    expect(equivalent('attribute_exists(runId) AND #state IN (:queued, :running)')).toEqual([
      'drop `attribute_exists(runId)`',
    ]);
    // Alone, beside only `<>` (true on a missing attribute), in an OR, or not a key: it matters.
    expect(equivalent('attribute_exists(runId)')).toEqual([]);
    expect(equivalent('attribute_exists(runId) AND holder <> :run')).toEqual([]);
    expect(equivalent('attribute_exists(runId) OR epoch = :epoch')).toEqual([]);
    expect(equivalent('attribute_exists(outboxAt) AND epoch = :epoch')).toEqual([]);
  });
});

describe('findConditions', () => {
  it('finds conditions written in place, through a local, a helper parameter and a template; not other expressions', () => {
    const dir = mkdtempSync(join(tmpdir(), 'conditions-'));
    const file = join(dir, 'store.ts');
    writeFileSync(
      file,
      `declare function send(input: object): void;
function write(update: string, condition: string): void { send({ UpdateExpression: update, ConditionExpression: condition }); }
const equal = 'a = :a';
send({ ConditionExpression: \`\${equal} AND b = :b\`, UpdateExpression: 'SET c = :c', KeyConditionExpression: 'k = :k' });
write('SET d = :d', 'attribute_exists(e)');
const unrelated = 'f = :f';
`,
    );
    try {
      expect(findConditions([file]).map((fragment) => fragment.text)).toEqual([
        'a = :a',
        ' AND b = :b',
        'attribute_exists(e)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
