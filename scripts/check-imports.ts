/**
 * `tsx scripts/check-imports.ts` (part of `npm run lint`): fails on an import cycle anywhere in
 * the tree (type-only imports included: a cycle of types still ties two files into one unit), on
 * an import from a lower layer of lib/ to a higher one, on lib/ importing anything outside lib/,
 * on an import of lib/engine that bypasses its face (lib/engine/index.ts), and on an AWS SDK
 * import in the pure core. The layers are described in docs/design.md.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { cycles, faceViolation, layerOf, layerViolation, PURE } from './imports/rules.js';

/**
 * Cycles known and not yet untied, each as its files; a listed cycle is tolerated, a new one fails.
 * A listed cycle that no longer exists is reported so the entry can go.
 */
const KNOWN_CYCLES: readonly (readonly string[])[] = [];

const ROOTS = ['lib', 'functions', 'infra', 'scripts', 'bench', 'test', 'tools'];
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

function main(): number {
  const files = ROOTS.flatMap((root) => sourceFiles(join(repo, root)));
  const { edges, packages } = importGraph(files);
  const problems: string[] = [];
  for (const folder of readdirSync(join(repo, 'lib')))
    if (statSync(join(repo, 'lib', folder)).isDirectory() && layerOf(folder) < 0)
      problems.push(`lib/${folder}/ is in no layer: add it to LAYERS in scripts/imports/rules.ts`);
  for (const [from, targets] of edges)
    for (const to of targets) {
      const violation = layerViolation(from, to) ?? faceViolation(from, to);
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
