/**
 * The one walk over a program: every statement outside functions and classes, visited once.
 * Expressions are never entered (they cannot contain statements except inside functions), so
 * the walk costs time per statement, not per token. It records what the lowerings edit:
 * declarations, completion sites, and the syntax a format forbids.
 *
 * `using` and `await using` declarations are left as they are (see `using.ts` for Node versions
 * without them): at the top level they are bindings of the run alone, disposed when it ends.
 */
import type {
  ClassDeclaration, FunctionDeclaration, Node, Statement, VariableDeclaration,
} from 'acorn'
import { firstCompletionIndex, resetsCompletion, type CompletionSite } from './completion.js'
import { addPatternNames } from './declarations.js'
import type { ParsedProgram } from './parse.js'
import { ProgramSyntaxError } from './syntax-error.js'

/** A `var` declaration outside functions, and the syntactic slot it fills. */
export interface VarSite {
  declaration: VariableDeclaration
  /** `statement`: on its own; `for-init`: `for (var …;;)`; `for-left`: `for (var … of/in …)`. */
  role: 'statement' | 'for-init' | 'for-left'
  guard: boolean
}

/** A top-level `let`, `const` or `class` declaration. */
export interface LexicalSite {
  declaration: VariableDeclaration | ClassDeclaration
  names: string[]
  guard: boolean
}

/** A sloppy-mode function declaration inside a block (web-legacy var semantics). */
interface BlockFunctionSite {
  declaration: FunctionDeclaration
  /** Whether it sits in a statement list (not as the bare branch of an `if`). */
  inList: boolean
}

/** Everything the lowerings need to know about a program, from one walk. */
export interface ProgramScan {
  /** Every top-level name, in source order. */
  declared: string[]
  /** Names with var semantics: `var` at any depth, and sloppy block-level functions. */
  varNames: Set<string>
  /** Names of top-level function declarations. */
  functionNames: Set<string>
  /** Names of top-level `using` and `await using` declarations (not in `declared`). */
  usingNames: Set<string>
  vars: VarSite[]
  lexical: LexicalSite[]
  /** Top-level function declarations (also behind labels), in source order. */
  functions: FunctionDeclaration[]
  blockFunctions: BlockFunctionSite[]
  completion: CompletionSite[]
}

/** What the walk is for. */
export interface ScanOptions {
  /** Record completion sites (script-like formats). */
  completion: boolean
  /** Reject top-level `return` (script-like formats). */
  script: boolean
  /** The original program text, for error messages. */
  source: string
}

/** Where a statement sits, as far as insertions before it are concerned. */
interface Slot {
  top: boolean
  capture: boolean
  guard: boolean
  inList: boolean
  /** An enclosing statement already reset the completion and nothing ran since. */
  resetDone: boolean
}

/** Walk the program's top-level statements once. */
export function scanProgram(parsed: ParsedProgram, options: ScanOptions): ProgramScan {
  const scanner = new Scanner(parsed, options)
  const captureFrom = options.completion ? firstCompletionIndex(parsed.body) : parsed.body.length
  scanner.list(parsed.body, true, captureFrom)
  return scanner.result()
}

class Scanner {
  private readonly declared = new Set<string>()
  private readonly varNames = new Set<string>()
  private readonly functionNames = new Set<string>()
  private readonly usingNames = new Set<string>()
  private readonly vars: VarSite[] = []
  private readonly lexical: LexicalSite[] = []
  private readonly functions: FunctionDeclaration[] = []
  private readonly blockFunctions: BlockFunctionSite[] = []
  private readonly completion: CompletionSite[] = []

  constructor(
    private readonly parsed: ParsedProgram,
    private readonly options: ScanOptions,
  ) {}

  result(): ProgramScan {
    return {
      declared: [...this.declared],
      varNames: this.varNames,
      functionNames: this.functionNames,
      usingNames: this.usingNames,
      vars: this.vars,
      lexical: this.lexical,
      functions: this.functions,
      blockFunctions: this.blockFunctions,
      completion: this.completion,
    }
  }

  /** A statement list; statements from index `captureFrom` on are completion positions. */
  list(statements: readonly Statement[], top: boolean, captureFrom: number): void {
    let previous: Node | undefined
    for (let index = 0; index < statements.length; index++) {
      const statement = statements[index]!
      this.statement(statement, {
        top,
        capture: index >= captureFrom,
        guard: previous !== undefined && !endsExplicitly(this.parsed.text, previous),
        inList: true,
        resetDone: false,
      })
      previous = statement
    }
  }

  private statement(node: Statement, slot: Slot): void {
    // A labelled loop is reset before its labels: `continue label` needs the label on the loop.
    const resets = node.type === 'LabeledStatement' ? labelsResettable(node) : resetsCompletion(node)
    if (slot.capture && !slot.resetDone && resets) {
      this.completion.push({ kind: 'reset', node, guard: slot.guard, braces: !slot.inList })
    }
    const inner: Slot = { top: false, capture: slot.capture, guard: false, inList: false, resetDone: false }
    const everything = slot.capture ? 0 : Infinity
    switch (node.type) {
      case 'ExpressionStatement':
        if (slot.capture) this.completion.push({ kind: 'set', node, guard: slot.guard, braces: false })
        return
      case 'VariableDeclaration':
        return this.variables(node, slot, 'statement')
      case 'FunctionDeclaration':
        return this.functionDeclaration(node, slot)
      case 'ClassDeclaration':
        if (slot.top) this.addLexical(node, [node.id.name], slot.guard)
        return
      case 'BlockStatement':
        return this.list(node.body, false, everything)
      case 'IfStatement':
        this.statement(node.consequent, { ...inner, resetDone: true })
        if (node.alternate) this.statement(node.alternate, { ...inner, resetDone: true })
        return
      case 'ForStatement':
        if (node.init?.type === 'VariableDeclaration') this.variables(node.init, inner, 'for-init')
        return this.statement(node.body, inner)
      case 'ForInStatement':
      case 'ForOfStatement':
        if (node.left.type === 'VariableDeclaration') this.variables(node.left, inner, 'for-left')
        return this.statement(node.body, inner)
      case 'WhileStatement':
      case 'DoWhileStatement':
      case 'WithStatement':
        return this.statement(node.body, inner)
      case 'LabeledStatement':
        return this.statement(node.body, { ...inner, top: slot.top, resetDone: slot.resetDone || resets })
      case 'SwitchStatement':
        for (const clause of node.cases) this.list(clause.consequent, false, everything)
        return
      case 'TryStatement':
        this.list(node.block.body, false, everything)
        if (node.handler) {
          if (slot.capture) this.completion.push({ kind: 'catch', node: node.handler.body, guard: false, braces: false })
          this.list(node.handler.body.body, false, everything)
        }
        // A finally block that completes normally keeps the try/catch value: never capture.
        if (node.finalizer) this.list(node.finalizer.body, false, Infinity)
        return
      case 'ReturnStatement':
        if (this.options.script) {
          throw ProgramSyntaxError.at(
            this.options.source,
            node.start - this.parsed.programStart,
            'return is not allowed at the top level of a script; the value of the last expression is the result',
          )
        }
        return
    }
  }

  private variables(node: VariableDeclaration, slot: Slot, role: VarSite['role']): void {
    if (node.kind === 'using' || node.kind === 'await using') {
      if (slot.top) for (const declarator of node.declarations) addPatternNames(declarator.id, this.usingNames)
    } else if (node.kind === 'var') {
      this.vars.push({ declaration: node, role, guard: slot.guard })
      const names = new Set<string>()
      for (const declarator of node.declarations) addPatternNames(declarator.id, names)
      for (const name of names) {
        this.varNames.add(name)
        this.declared.add(name)
      }
    } else if (slot.top) {
      const names = new Set<string>()
      for (const declarator of node.declarations) addPatternNames(declarator.id, names)
      this.addLexical(node, [...names], slot.guard)
    }
  }

  private functionDeclaration(node: FunctionDeclaration, slot: Slot): void {
    const name = node.id.name
    if (slot.top) {
      this.functions.push(node)
      this.functionNames.add(name)
      this.declared.add(name)
    } else if (!this.parsed.strict) {
      this.blockFunctions.push({ declaration: node, inList: slot.inList })
      this.varNames.add(name)
      this.declared.add(name)
    }
  }

  private addLexical(declaration: VariableDeclaration | ClassDeclaration, names: string[], guard: boolean): void {
    this.lexical.push({ declaration, names, guard })
    for (const name of names) this.declared.add(name)
  }
}

/** Whether the statement under a label chain resets the completion (the reset precedes the labels). */
function labelsResettable(node: Statement): boolean {
  let inner = node
  while (inner.type === 'LabeledStatement') inner = inner.body
  return resetsCompletion(inner)
}

/** Whether a statement's text ends with `;` or `}` (otherwise it relied on ASI). */
function endsExplicitly(text: string, node: Node): boolean {
  const last = text.charCodeAt(node.end - 1)
  return last === 59 || last === 125
}
