/**
 * Lowering of `repl` and `script` programs: top-level declarations become properties of the
 * global object, so every run in an environment shares them, as in a browser console.
 *
 * Semantics (one run = one lowered program; later runs see what earlier runs left):
 * - `var` (at any depth outside functions) and sloppy-mode block-level functions: hoisted. At
 *   the start of the run each name becomes a writable, enumerable, configurable global property
 *   if it does not exist yet; an existing value is kept (`var x;` never resets `x`), and a
 *   constant left by an earlier run becomes writable with its value. Initializers assign.
 * - `function` (top level): hoisted and callable from the first line of the run. At the start of
 *   the run each becomes a writable global property holding the function, replacing whatever
 *   was there. The function keeps its name, its source text and its positions; inside its own
 *   body its name refers to itself (as in a named function expression).
 * - `let` and `class` (top level): when the declaration statement runs, each name becomes a
 *   writable global property, still holding its previous value while the initializer runs (so
 *   `let n = n + 1` reads the earlier run's `n`; a name never declared before reads as
 *   undefined there rather than throwing); then the initializer assigns. `let x;` sets undefined.
 * - `const` (top level): like `let`, then the property becomes an accessor whose setter throws
 *   `TypeError: Assignment to constant variable "x".` in strict and sloppy code alike (a real
 *   const throws in both). A later run may declare the name again, with any kind.
 * - Destructuring declarations bind every name in the pattern (defaults, rest, holes, nesting).
 * - Code that reads or writes a top-level name always reaches the global property, so functions
 *   declared in an earlier run see the latest value of every top-level name.
 * - There is no temporal dead zone across runs, and a declaration cannot replace a
 *   non-configurable global (`let undefined`): the run throws a TypeError saying so.
 *
 * `script` shares this lowering: a script's top-level bindings are global in JavaScript too,
 * and an environment initializer's declarations must stay visible to the program after it.
 */
import type { Pattern, VariableDeclaration } from 'acorn'
import { BOOTSTRAP_NAME } from '../seam/names.js'
import { COMPLETION_SLOT } from './completion.js'
import { nameList } from './declarations.js'
import type { ProgramEdits, Wrapper } from './edits.js'
import type { ParsedProgram } from './parse.js'
import type { LexicalSite, ProgramScan, VarSite } from './scan.js'

/** Rewrite a scanned program's declarations onto the global object; returns its wrapper. */
export function lowerToGlobals(parsed: ParsedProgram, scan: ProgramScan, edits: ProgramEdits): Wrapper {
  if (scan.varNames.size > 0) edits.addPrelude(` ${BOOTSTRAP_NAME}.vars(${nameList(scan.varNames)});`)
  hoistFunctions(scan, edits)
  for (const site of scan.vars) lowerVar(site, edits)
  for (const site of scan.lexical) lowerLexical(site, edits)
  for (const { declaration, inList } of scan.blockFunctions) {
    // Web-legacy semantics: a block function assigns the var of the same name when its
    // declaration is evaluated. A bare `if (x) function f() {}` has nowhere to put that.
    const name = declaration.id.name
    if (inList) edits.close(declaration.end, ` ${BOOTSTRAP_NAME}.publish(${JSON.stringify(name)}, ${name});`)
  }
  return {
    open: `(async (${BOOTSTRAP_NAME}) => {${parsed.strict ? " 'use strict';" : ''}`,
    close: `\n;return ${COMPLETION_SLOT} })`,
  }
}

/**
 * Move top-level function declarations into one hook call at the start of the run. A function
 * declaration left in place would bind its name locally in our wrapper, so neither later runs
 * nor a later redefinition would reach it; moving the text keeps its source and positions.
 */
function hoistFunctions(scan: ProgramScan, edits: ProgramEdits): void {
  if (scan.functions.length === 0) return
  edits.addPrelude(` ${BOOTSTRAP_NAME}.functions(`)
  scan.functions.forEach((declaration, index) => {
    edits.addPrelude(`${index > 0 ? ', ' : ''}${JSON.stringify(declaration.id.name)}, `)
    edits.hoist(declaration.start, declaration.end)
    edits.replace(declaration.start, declaration.end, ';')
  })
  edits.addPrelude(');')
}

/** `var a = 1, {b} = o, c` → `a = 1, ({b} = o), void 0` (names were hoisted by the prelude). */
function lowerVar({ declaration, role, guard }: VarSite, edits: ProgramEdits): void {
  const keywordEnd = declaration.start + 3
  if (role === 'for-left') {
    edits.replace(declaration.start, keywordEnd, '')
    // `for (async of …)` and `for (let of …)` would parse differently without the var.
    const target = declaration.declarations[0]!.id
    if (target.type === 'Identifier' && (target.name === 'async' || target.name === 'let')) wrap(target, edits)
    return
  }
  // Recorded before the declarator edits so that, at a shared offset, `)` precedes `;`.
  if (role === 'statement') terminate(declaration, '', edits)
  edits.replace(declaration.start, keywordEnd, guard ? ';' : '')
  for (const declarator of declaration.declarations) {
    if (!declarator.init) edits.replace(declarator.start, declarator.end, 'void 0')
    else if (declarator.id.type !== 'Identifier') wrap(declarator, edits)
  }
}

/** `const {a} = o` → `__ptc__.lexical("a"); ({a} = o); __ptc__.constant("a");`. */
function lowerLexical({ declaration, names, guard }: LexicalSite, edits: ProgramEdits): void {
  const declare = `${guard ? ';' : ''}${BOOTSTRAP_NAME}.lexical(${nameList(names)});`
  if (declaration.type === 'ClassDeclaration') {
    edits.open(declaration.start, `${declare} ${declaration.id.name} = `)
    edits.close(declaration.end, ';')
    return
  }
  terminate(declaration, declaration.kind === 'const' ? ` ${BOOTSTRAP_NAME}.constant(${nameList(names)});` : '', edits)
  edits.replace(declaration.start, declaration.start + declaration.kind.length, declare)
  for (const declarator of declaration.declarations) {
    if (!declarator.init) edits.close(declarator.end, ' = void 0')
    else if (declarator.id.type !== 'Identifier') wrap(declarator, edits)
  }
}

/** End a rewritten declaration with an explicit `;` (it may have relied on ASI), then `after`. */
function terminate(declaration: VariableDeclaration, after: string, edits: ProgramEdits): void {
  const explicit = edits.text.charCodeAt(declaration.end - 1) === 59
  const text = (explicit ? '' : ';') + after
  if (text) edits.close(declaration.end, text)
}

/** Parenthesize a node: a pattern must not start a statement as a block. */
function wrap(node: Pattern | VariableDeclaration['declarations'][number], edits: ProgramEdits): void {
  edits.open(node.start, '(')
  edits.close(node.end, ')')
}
