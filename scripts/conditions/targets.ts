/**
 * Which tests judge the mutants of each store file: the integration tests that drive that
 * store's writes directly against the emulator and run in seconds. A condition is defended when
 * one of these fails without it; a test that only catches a mutant through a whole pipeline run
 * (minutes each) belongs in the full suite, not here. A store file with conditions and no entry
 * stops the run, so a new store cannot go unjudged.
 */
/** The chain store's direct tests: every file that writes a chain, or the clause all chain writes share. */
const CHAIN_STORE_TESTS = [
  'test/integration/sync-run-store.test.ts',
  'test/integration/chain-endings.test.ts',
  'test/integration/chain-store.test.ts',
  'test/integration/partitions.test.ts',
] as const;

export const TESTS_BY_STORE_FILE: Readonly<Record<string, readonly string[]>> = {
  'chain-commit.ts': CHAIN_STORE_TESTS,
  // CHAIN_LIVE: the clause every chain write starts with.
  'chain-item.ts': CHAIN_STORE_TESTS,
  'chains.ts': CHAIN_STORE_TESTS,
  // filedByCondition: the guard of a window's filing against its neighbours'.
  'dead-letter-model.ts': ['test/integration/dead-letter-store.test.ts'],
  'dead-letters.ts': ['test/integration/dead-letter-store.test.ts'],
  'items.ts': [
    'test/integration/item-store.test.ts',
    'test/integration/item-fencing.test.ts',
    'test/integration/item-reread.test.ts',
  ],
  'lifecycle.ts': ['test/integration/source-store.test.ts', 'test/integration/sync-run-store.test.ts'],
  'rate-budgets.ts': ['test/integration/rate-budget-record.test.ts'],
  'run-chains.ts': CHAIN_STORE_TESTS,
  'seen-pages.ts': ['test/integration/seen-pages.test.ts'],
  'sources.ts': [
    'test/integration/source-store.test.ts',
    'test/integration/sync-run-store.test.ts',
    'test/integration/source-writes.test.ts',
  ],
  'sync-runs.ts': [
    'test/integration/sync-run-store.test.ts',
    'test/integration/chain-store.test.ts',
    'test/integration/run-transitions.test.ts',
    'test/integration/partitions.test.ts',
  ],
};
