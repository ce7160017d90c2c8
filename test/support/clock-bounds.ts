import ts from 'typescript';

/**
 * Finds the assertions of a test source that put a wall-clock upper bound on a measured duration
 * (`expect(took).to.be.below(1000)`, `expect(Date.now() - t0).to.be.within(400, 2000)`) and checks
 * that each bound is at least ten times the duration the test takes on a quiet machine, as a marker
 * comment states it: `// quiet: 40 ms` (in the unit of the bound). A loaded 2-core CI host runs four
 * stacks at once; a bound closer to the quiet time than that fails there though nothing is wrong.
 *
 * A syntactic check, by design: it sees what most duration assertions look like, not all of them.
 * - the subject: `Date.now() - …` or `performance.now() - …`, a subtraction from a time named like
 *   `t0`, `started` or `sentAt`, or a name (variable, property, call) ending in ms, elapsed, took,
 *   duration, latency, lag, time or (camel-cased) After, as `takenAfter`; or an assertion message
 *   that names one (`ms`, `time`, `latency`, `median`, `p99`, `stall`);
 * - the bound: `below`, `lessThan`, `lt`, `lte`, `most`, `within` (its upper end) or `closeTo`
 *   (expected + delta), when it is a number the file spells out: a literal, arithmetic of literals,
 *   or a constant of the file declared so. A bound the scan cannot evaluate (another measurement, a
 *   function's result) is not checked.
 * - the marker: a `quiet: <number> ms|s` comment on a line of the assertion, in the comments just
 *   above it, or (for a bound that is a file constant) on that constant's declaration. Its number
 *   is read in the bound's unit (a bound in seconds, `quiet: 0.2 s`), but converted when the
 *   subject is in ms for sure (a `Date.now()` difference, a name ending in ms).
 */

/**
 * A bound of ten minutes or more (a TTL, an age) needs no marker: no test here takes a minute when
 * quiet. In ms; a bound in seconds is held to the same number (the scan cannot tell its unit).
 */
export const UNMARKED_FLOOR_MS = 600_000;
export const FACTOR = 10;

export interface ClockBound {
  /** 1-based line of the assertion's bound. */
  line: number;
  /** The assertion as written, on one line. */
  text: string;
  /** The upper bound, in the assertion's unit. */
  bound: number;
  /** The quiet time a marker states, in the same unit, if any. */
  quiet?: number;
  /** Why it fails, or undefined when it passes. */
  problem?: string;
}

const UPPER = new Set(['below', 'lessThan', 'lt', 'lte', 'most', 'within', 'closeTo', 'approximately']);
/** Whether a source has any such call (most test files have none: they are not parsed). */
const ASSERTS_UPPER = /\.(below|lessThan|lt|lte|most|within|closeTo|approximately)\(/;
/** A name that holds a duration. */
const DURATION_NAME =
  /(ms|Ms|MS|millis|Millis|elapsed|Elapsed|took|Took|duration|Duration|latency|Latency|lag|Lag|[a-z]After|time|Time)$/;
/** A name that holds the instant a measurement started. */
const START_NAME = /^(t\d*|start|started|startedAt|since|began|asked|.+At)$/;
/** An assertion message that says its subject is a time. */
const DURATION_MESSAGE = /\b(ms|time|latency|median|p\d\d|stall)\b/i;
const NOW = /^(Date|performance)\.now\(\)$/;
const MARKER = /\bquiet:\s*([\d_.]+)\s*(ms|s)\b/;

/** The last name of `x.y.z`, `f()`, `a[i]!` … */
function nameOf(e: ts.Expression): string | undefined {
  for (;;) {
    if (ts.isNonNullExpression(e) || ts.isParenthesizedExpression(e) || ts.isAsExpression(e))
      e = e.expression;
    else if (ts.isElementAccessExpression(e) || ts.isCallExpression(e)) e = e.expression;
    else if (ts.isAwaitExpression(e)) e = e.expression;
    else break;
  }
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  return undefined;
}

/** Whether `subject` (the argument of `expect`) is a measured duration. */
function isDuration(subject: ts.Expression, message: ts.Expression | undefined, sf: ts.SourceFile): boolean {
  if (message && (ts.isStringLiteralLike(message) || ts.isTemplateExpression(message))) {
    if (DURATION_MESSAGE.test(message.getText(sf))) return true;
  }
  let e = subject;
  while (ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e)) e = e.expression;
  if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.MinusToken) {
    // now - start grows with load; start - now (time left) shrinks with it: only the first is an elapsed time.
    if (NOW.test(e.left.getText(sf))) return true;
    if (NOW.test(e.right.getText(sf))) return false;
    // An elapsed time less what was expected (Date.now() - t0 - GAP) is how late it came: load moves it too.
    if (isDuration(e.left, undefined, sf)) return true;
    const start = nameOf(e.right);
    return start !== undefined && START_NAME.test(start);
  }
  const name = nameOf(e);
  return name !== undefined && DURATION_NAME.test(name);
}

/** The file's constants that are plain numbers (`const GAP_MS = 2_000;`), and their declarations. */
function numericConstants(sf: ts.SourceFile): Map<string, { value: number; decl: ts.Node }> {
  const out = new Map<string, { value: number; decl: ts.Node }>();
  const visit = (node: ts.Node) => {
    if (ts.isVariableStatement(node) && node.declarationList.flags & ts.NodeFlags.Const) {
      for (const d of node.declarationList.declarations) {
        if (!ts.isIdentifier(d.name) || !d.initializer) continue;
        const value = evaluate(d.initializer, out);
        if (value !== undefined) out.set(d.name.text, { value, decl: node });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The value of a literal, or of arithmetic of literals and known constants. */
function evaluate(e: ts.Expression, consts: Map<string, { value: number }>): number | undefined {
  if (ts.isNumericLiteral(e)) return Number(e.text);
  if (ts.isParenthesizedExpression(e)) return evaluate(e.expression, consts);
  if (ts.isIdentifier(e)) return consts.get(e.text)?.value;
  if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.MinusToken) {
    const v = evaluate(e.operand, consts);
    return v === undefined ? undefined : -v;
  }
  if (ts.isBinaryExpression(e)) {
    const a = evaluate(e.left, consts);
    const b = evaluate(e.right, consts);
    if (a === undefined || b === undefined) return undefined;
    switch (e.operatorToken.kind) {
      case ts.SyntaxKind.PlusToken:
        return a + b;
      case ts.SyntaxKind.MinusToken:
        return a - b;
      case ts.SyntaxKind.AsteriskToken:
        return a * b;
      case ts.SyntaxKind.SlashToken:
        return a / b;
    }
  }
  return undefined;
}

/** The quiet time a comment in `text` states, and its unit. */
function markerIn(text: string): { value: number; unit: string } | undefined {
  const m = MARKER.exec(text);
  return m ? { value: Number(m[1]!.replaceAll('_', '')), unit: m[2]! } : undefined;
}

/** Whether the subject is in milliseconds for sure: a clock's difference, or a name ending in ms. */
function inMs(subject: ts.Expression, sf: ts.SourceFile): boolean {
  if (/\b(Date|performance)\.now\(\)/.test(subject.getText(sf))) return true;
  const name = nameOf(subject);
  return name !== undefined && /(ms|Ms|MS)$/.test(name);
}

/** The statement that holds `node`. */
function statementOf(node: ts.Node): ts.Node {
  let n = node;
  while (n.parent && !ts.isBlock(n.parent) && !ts.isSourceFile(n.parent) && !ts.isCaseClause(n.parent))
    n = n.parent;
  return n;
}

/** Comments on the lines of `node` and in the comment block right above it. */
function commentsAround(node: ts.Node, sf: ts.SourceFile): string {
  const text = sf.getFullText();
  const leading = (ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []).map((r) =>
    text.slice(r.pos, r.end),
  );
  // Comments inside the statement, and one trailing its last line.
  const own = text.slice(node.getStart(sf), node.getEnd());
  const lineEnd = text.indexOf('\n', node.getEnd());
  const trailing = text.slice(node.getEnd(), lineEnd === -1 ? undefined : lineEnd);
  return [...leading, own, trailing].join('\n');
}

/** Every duration upper bound of a test source, each with its marker and whether it holds. */
export function clockBounds(source: string, fileName = 'test.ts'): ClockBound[] {
  if (!ASSERTS_UPPER.test(source)) return [];
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const consts = numericConstants(sf);
  const found: ClockBound[] = [];
  const visit = (node: ts.Node) => {
    ts.forEachChild(node, visit);
    if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return;
    const method = node.expression.name.text;
    if (!UPPER.has(method)) return;
    // Walk down the chain (.to.be.a('number').and.within) to its expect(...).
    let e: ts.Expression = node.expression.expression;
    let negated = false;
    while (!(ts.isCallExpression(e) && ts.isIdentifier(e.expression) && e.expression.text === 'expect')) {
      if (ts.isPropertyAccessExpression(e)) {
        if (e.name.text === 'not') negated = true;
        e = e.expression;
      } else if (ts.isCallExpression(e)) e = e.expression;
      else return;
    }
    const [subject, message] = e.arguments;
    if (negated || !subject || !isDuration(subject, message, sf)) return;
    const args = node.arguments;
    let boundExpr: ts.Expression | undefined;
    let bound: number | undefined;
    if (method === 'within') {
      boundExpr = args[1];
      bound = boundExpr && evaluate(boundExpr, consts);
    } else if (method === 'closeTo' || method === 'approximately') {
      const [at, delta] = args.map((a) => evaluate(a, consts));
      boundExpr = args[0];
      bound = at === undefined || delta === undefined ? undefined : at + delta;
    } else {
      boundExpr = args[0];
      bound = boundExpr && evaluate(boundExpr, consts);
    }
    if (!boundExpr || bound === undefined) return;
    const statement = statementOf(node);
    let marker = markerIn(commentsAround(statement, sf));
    if (marker === undefined && ts.isIdentifier(boundExpr)) {
      const decl = consts.get(boundExpr.text)?.decl;
      if (decl) marker = markerIn(commentsAround(decl, sf));
    }
    // The marker is read in the bound's unit; a time in ms marked in seconds is converted.
    const quiet = marker && (marker.unit === 's' && inMs(subject, sf) ? marker.value * 1000 : marker.value);
    const line = sf.getLineAndCharacterOfPosition(boundExpr.getStart(sf)).line + 1;
    const text = statement.getText(sf).replace(/\s+/g, ' ');
    let problem: string | undefined;
    if (quiet === undefined) {
      // A bound past ten minutes (a TTL, a day) is not a test's quiet time times ten.
      if (bound < UNMARKED_FLOOR_MS) problem = 'no quiet-time marker';
    } else if (bound < FACTOR * quiet) problem = `bound ${bound} is under ${FACTOR} x the quiet ${quiet}`;
    found.push({ line, text, bound, quiet, problem });
  };
  visit(sf);
  return found;
}
