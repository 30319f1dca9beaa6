import ts from 'typescript';

/**
 * Finds the condition expressions of a set of TypeScript files: every string literal, or literal
 * part of a template, whose text ends up in a `ConditionExpression`. A condition is often built
 * rather than written in place — a shared clause (`RUN_CONDITIONS.runningAtEpoch`), a local
 * (`const equal = …`), an argument of a helper's `condition` parameter, a helper's return value,
 * an interpolated `${epochCondition}`, a constant imported from another store file
 * (`CHAIN_LIVE`), a clause pushed into an array that is joined — so a literal counts when it
 * flows there: through template literals, `+`, `?:`, a method called on it, into a property,
 * variable or parameter whose name says "condition", out of a function whose name does
 * (`filedByCondition`), or into a variable, array or function whose uses do.
 */

/** One literal piece of a condition, located in its file. */
export interface ConditionFragment {
  readonly file: string;
  readonly line: number;
  /** Offsets of the fragment's text in the file (inside the quotes / between `}` and `${`). */
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** Property names whose value is some other DynamoDB expression, never a condition. */
const OTHER_EXPRESSIONS =
  /^(UpdateExpression|KeyConditionExpression|FilterExpression|ProjectionExpression|ExpressionAttribute\w+|Key|Item|TableName)$/;
const CONDITION_NAME = /condition/i;
/** Text only a condition (or a key/filter expression, excluded by name) contains. */
const CONDITION_TEXT = /attribute_(not_)?exists\(|[<>=]\s*:|\sIN\s*\(|begins_with\(/;

/** The condition fragments of `files` (absolute paths). */
export function findConditions(files: readonly string[]): ConditionFragment[] {
  const program = ts.createProgram([...files], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    skipLibCheck: true,
    // Conditions are found by syntax and local names: no ambient type packages are needed.
    types: [],
    lib: ['lib.es2023.d.ts'],
  });
  const checker = program.getTypeChecker();
  const sources = files.map((file) => program.getSourceFile(file)).filter((s) => s !== undefined);
  const references = referencesBySymbol(sources, checker);
  const flows = new FlowJudge(checker, references);
  const found: ConditionFragment[] = [];
  for (const source of sources) {
    const visit = (node: ts.Node): void => {
      const range = literalRange(node);
      if (range) {
        const text = source.text.slice(range.start, range.end);
        const carrier =
          ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node : template(node);
        if (CONDITION_TEXT.test(text) && flows.reachesCondition(carrier)) {
          const line = source.getLineAndCharacterOfPosition(range.start).line + 1;
          found.push({ file: source.fileName, line, ...range, text });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** The template expression a head, middle or tail belongs to. */
function template(node: ts.Node): ts.Node {
  return ts.findAncestor(node, ts.isTemplateExpression) ?? node;
}

/** Where a literal's own text lies in the file, without quotes, backticks or `${`/`}`. */
function literalRange(node: ts.Node): { start: number; end: number } | null {
  const start = node.getStart();
  const end = node.getEnd();
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))
    return { start: start + 1, end: end - 1 };
  if (ts.isTemplateHead(node) || ts.isTemplateMiddle(node)) return { start: start + 1, end: end - 2 };
  if (ts.isTemplateTail(node)) return { start: start + 1, end: end - 1 };
  return null;
}

/** A function's declared or assigned name (`function f`, `const f = () => …`). */
function nameOf(fn: ts.SignatureDeclaration): ts.Node | undefined {
  const holder = ts.isArrowFunction(fn) || ts.isFunctionExpression(fn) ? fn.parent : fn;
  return (holder as { name?: ts.Node }).name;
}

/** Every identifier that refers to a symbol, across the files. */
function referencesBySymbol(
  sources: readonly ts.SourceFile[],
  checker: ts.TypeChecker,
): Map<ts.Symbol, ts.Node[]> {
  const references = new Map<ts.Symbol, ts.Node[]>();
  for (const source of sources) {
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node)) {
        const symbol = declared(checker, checker.getSymbolAtLocation(node));
        if (symbol) references.set(symbol, [...(references.get(symbol) ?? []), node]);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return references;
}

/**
 * The symbol a name was declared as: an imported name (`import { CHAIN_LIVE } from …`) is an alias
 * of its own, so a constant used in another file than its own is followed through the alias.
 */
function declared(checker: ts.TypeChecker, symbol: ts.Symbol | undefined): ts.Symbol | undefined {
  return symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

/** Follows an expression's value up the syntax tree and through names to where it is used. */
class FlowJudge {
  private readonly judging = new Set<ts.Node>();

  constructor(
    private readonly checker: ts.TypeChecker,
    private readonly references: Map<ts.Symbol, ts.Node[]>,
  ) {}

  reachesCondition(node: ts.Node): boolean {
    if (this.judging.has(node)) return false;
    this.judging.add(node);
    try {
      return this.judge(node);
    } finally {
      this.judging.delete(node);
    }
  }

  private judge(node: ts.Node): boolean {
    const parent = node.parent;
    if (!parent) return false;
    if (
      ts.isTemplateSpan(parent) ||
      ts.isTemplateExpression(parent) ||
      ts.isParenthesizedExpression(parent) ||
      ts.isAsExpression(parent) ||
      (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.PlusToken) ||
      (ts.isConditionalExpression(parent) && parent.condition !== node)
    )
      return this.reachesCondition(parent);
    if (ts.isPropertyAssignment(parent) && parent.initializer === node) {
      const name = parent.name.getText();
      if (OTHER_EXPRESSIONS.test(name)) return false;
      return CONDITION_NAME.test(name) || this.usesReach(parent.name) || this.reachesCondition(parent.parent);
    }
    if (ts.isVariableDeclaration(parent) && parent.initializer === node)
      return CONDITION_NAME.test(parent.name.getText()) || this.usesReach(parent.name);
    // A method called on the value carries it on: `neighbours.join(' OR ')`.
    if (ts.isCallExpression(parent) && parent.expression === node && ts.isPropertyAccessExpression(node))
      return this.reachesCondition(parent);
    if (
      (ts.isCallExpression(parent) || ts.isNewExpression(parent)) &&
      parent.arguments?.includes(node as ts.Expression)
    ) {
      // Pushed into an array: the literal goes where the array goes.
      const callee = parent.expression;
      if (ts.isPropertyAccessExpression(callee) && callee.name.text === 'push')
        return this.usesReach(callee.expression);
      const index = parent.arguments.indexOf(node as ts.Expression);
      const declaration = this.checker.getResolvedSignature(parent)?.getDeclaration();
      const parameter = declaration?.parameters?.[index];
      return parameter !== undefined && CONDITION_NAME.test(parameter.name.getText());
    }
    if (ts.isReturnStatement(parent) || (ts.isArrowFunction(parent) && parent.body === node)) {
      const fn = ts.isArrowFunction(parent) ? parent : ts.findAncestor(parent, ts.isFunctionLike);
      return fn !== undefined && (CONDITION_NAME.test(nameOf(fn)?.getText() ?? '') || this.callsReach(fn));
    }
    return false;
  }

  /** Some use of the name declared at `name` reaches a condition. */
  private usesReach(name: ts.Node): boolean {
    const symbol = declared(this.checker, this.checker.getSymbolAtLocation(name));
    if (!symbol) return false;
    return (this.references.get(symbol) ?? [])
      .filter((use) => use !== name)
      .some((use) => this.reachesCondition(ts.isPropertyAccessExpression(use.parent) ? use.parent : use));
  }

  /** Some call of the function `fn` (by its declared or assigned name) reaches a condition. */
  private callsReach(fn: ts.SignatureDeclaration): boolean {
    const name = nameOf(fn);
    if (!name) return false;
    const symbol = declared(this.checker, this.checker.getSymbolAtLocation(name));
    return (this.references.get(symbol as ts.Symbol) ?? [])
      .filter((use) => use !== name)
      .map((use) => (ts.isPropertyAccessExpression(use.parent) ? use.parent : use))
      .some((callee) => ts.isCallExpression(callee.parent) && this.reachesCondition(callee.parent));
  }
}
