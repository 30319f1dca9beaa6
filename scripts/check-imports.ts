/**
 * `tsx scripts/check-imports.ts` (part of `npm run lint`): fails on an import cycle anywhere in
 * the tree (type-only imports included: a cycle of types still ties two files into one unit), on
 * an import from a lower layer of lib/ to a higher one, on lib/ importing anything outside lib/,
 * and on an AWS SDK import in the pure core. The layers are described in docs/design.md.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** lib/ folders from the bottom layer up: a folder imports only from its own layer or lower ones. */
export const LAYERS: readonly (readonly string[])[] = [
  ['json', 'config', 'observability', 'aws', 'resources'],
  ['run', 'retry', 'budget'],
  ['connectors'],
  ['store'],
  ['events', 'queue'],
  ['engine'],
  ['api'],
  ['local'],
  ['demo'],
  ['cli'],
];

/** The pure core: no SDK, no I/O adapters; only the bottom layer's parsing and configuration. */
const PURE = new Set(['run', 'retry', 'budget']);
const PURE_MAY_IMPORT = new Set(['json', 'config', ...PURE]);

/**
 * Cycles known and not yet untied, each as its files; a listed cycle is tolerated, a new one fails.
 * A listed cycle that no longer exists is reported so the entry can go.
 */
const KNOWN_CYCLES: readonly (readonly string[])[] = [
  ['lib/engine/partition-reaper.ts', 'lib/engine/reaper.ts'],
];

const ROOTS = ['lib', 'functions', 'infra', 'scripts', 'bench', 'test'];
const repo = resolve(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The repository file a relative specifier names (`./x.js` is `./x.ts`), or null for a package. */
function resolveImport(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = resolve(dirname(from), specifier);
  const candidates = [
    base.replace(/\.m?js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    `${base}.ts`,
    join(base, 'index.ts'),
  ];
  return candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile()) ?? base;
}

interface Graph {
  readonly edges: Map<string, string[]>;
  readonly packages: Map<string, string[]>;
}

function importGraph(files: readonly string[]): Graph {
  const edges = new Map<string, string[]>();
  const packages = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const name = relative(repo, file);
    const targets = importedFiles.map((imported) => resolveImport(file, imported.fileName));
    edges.set(name, [...new Set(targets.filter((t) => t !== null).map((t) => relative(repo, t)))]);
    packages.set(
      name,
      importedFiles.map((imported) => imported.fileName).filter((specifier) => !specifier.startsWith('.')),
    );
  }
  return { edges, packages };
}

/** Strongly connected components with more than one file (Tarjan). */
function cycles(edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of edges.get(node) ?? []) {
      if (!edges.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

function layerOf(folder: string): number {
  return LAYERS.findIndex((layer) => layer.includes(folder));
}

/** What is wrong with one import of a lib/ file, or null. */
function layerViolation(from: string, to: string): string | null {
  const [fromRoot, fromFolder = ''] = from.split('/');
  const [toRoot, toFolder = ''] = to.split('/');
  if (fromRoot !== 'lib') return null;
  if (toRoot !== 'lib') return `lib/ imports ${toRoot}/, which is outside the product`;
  if (!toFolder.includes('.') && layerOf(toFolder) < 0) return `lib/${toFolder}/ is in no layer`;
  if (fromFolder.includes('.') || toFolder.includes('.') || fromFolder === toFolder) return null;
  if (PURE.has(fromFolder) && !PURE_MAY_IMPORT.has(toFolder))
    return `the pure core (${fromFolder}/) imports ${toFolder}/`;
  if (layerOf(toFolder) > layerOf(fromFolder))
    return `${fromFolder}/ (layer ${layerOf(fromFolder)}) imports ${toFolder}/ (layer ${layerOf(toFolder)}), a higher layer`;
  return null;
}

function main(): number {
  const files = ROOTS.flatMap((root) => sourceFiles(join(repo, root)));
  const { edges, packages } = importGraph(files);
  const problems: string[] = [];
  for (const folder of readdirSync(join(repo, 'lib')))
    if (statSync(join(repo, 'lib', folder)).isDirectory() && layerOf(folder) < 0)
      problems.push(`lib/${folder}/ is in no layer: add it to LAYERS in scripts/check-imports.ts`);
  for (const [from, targets] of edges)
    for (const to of targets) {
      const violation = layerViolation(from, to);
      if (violation) problems.push(`${from} → ${to}: ${violation}`);
    }
  for (const [from, specifiers] of packages) {
    const folder = from.split('/')[1] ?? '';
    if (from.startsWith('lib/') && PURE.has(folder))
      for (const specifier of specifiers.filter((s) => /^@aws-sdk\/|^@smithy\//.test(s)))
        problems.push(`${from} → ${specifier}: the pure core (${folder}/) imports an AWS SDK package`);
  }
  const known = KNOWN_CYCLES.map((cycle) => [...cycle].sort().join(' ↔ '));
  const found = cycles(edges).map((cycle) => cycle.join(' ↔ '));
  for (const cycle of found) if (!known.includes(cycle)) problems.push(`import cycle: ${cycle}`);
  for (const cycle of known)
    if (!found.includes(cycle))
      console.log(`note: the known cycle ${cycle} is gone; remove it from KNOWN_CYCLES`);
  for (const problem of problems) console.error(problem);
  console.log(`imports: ${files.length} files, ${problems.length} problems`);
  return problems.length > 0 ? 1 : 0;
}

process.exit(main());
