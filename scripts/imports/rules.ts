/**
 * The rules `scripts/check-imports.ts` enforces, as functions of an import graph (file → the
 * repository files it imports, paths relative to the repository root). See docs/design.md.
 */

/** lib/ folders from the bottom layer up: a folder imports only from its own layer or lower ones. */
export const LAYERS: readonly (readonly string[])[] = [
  ['json', 'config', 'observability', 'aws', 'resources'],
  ['run', 'retry', 'budget'],
  ['connectors'],
  ['store'],
  ['events', 'queue'],
  ['engine'],
  ['api'],
  ['console'],
  ['local'],
  ['cli'],
];

/** The pure core: no SDK, no I/O adapters; only the bottom layer's parsing and configuration. */
export const PURE = new Set(['run', 'retry', 'budget']);
const PURE_MAY_IMPORT = new Set(['json', 'config', ...PURE]);

/** Strongly connected components with more than one file (Tarjan). */
export function cycles(edges: Map<string, string[]>): string[][] {
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

/** Folders of lib/ that other code reaches only through their `index.ts`. */
export const FACED = ['engine'];

/**
 * What is wrong with one import across a face, or null: code outside a faced folder imports its
 * `index.ts` only, and code inside never imports its own face (that would tie every file of the
 * folder into one cycle). Tests may reach inside, to check a part on its own.
 */
export function faceViolation(from: string, to: string): string | null {
  for (const folder of FACED) {
    const inside = `lib/${folder}/`;
    const face = `${inside}index.ts`;
    if (!to.startsWith(inside)) continue;
    if (from.startsWith(inside)) return to === face ? `${from} imports its own folder's face` : null;
    if (to === face || from.startsWith('test/')) return null;
    return `lib/${folder}/ is imported only through ${face}`;
  }
  return null;
}

export function layerOf(folder: string): number {
  return LAYERS.findIndex((layer) => layer.includes(folder));
}

/** What is wrong with one import of a lib/ file, or null. */
export function layerViolation(from: string, to: string): string | null {
  const [fromRoot, fromFolder = ''] = from.split('/');
  const [toRoot, toFolder = ''] = to.split('/');
  if (fromRoot !== 'lib') return null;
  // The CLI is the one face of the tools (fake source, demo) kept outside lib/.
  if (toRoot === 'tools' && fromFolder === 'cli') return null;
  if (toRoot !== 'lib') return `lib/ imports ${toRoot}/, which is outside the product`;
  if (!toFolder.includes('.') && layerOf(toFolder) < 0) return `lib/${toFolder}/ is in no layer`;
  if (fromFolder.includes('.') || toFolder.includes('.') || fromFolder === toFolder) return null;
  if (PURE.has(fromFolder) && !PURE_MAY_IMPORT.has(toFolder))
    return `the pure core (${fromFolder}/) imports ${toFolder}/`;
  if (layerOf(toFolder) > layerOf(fromFolder))
    return `${fromFolder}/ (layer ${layerOf(fromFolder)}) imports ${toFolder}/ (layer ${layerOf(toFolder)}), a higher layer`;
  return null;
}
