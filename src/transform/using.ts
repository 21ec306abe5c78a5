/**
 * `using` and `await using` declarations (explicit resource management). V8 compiles them from
 * Node 24 on; on older Node the worker could not compile a program that has one, so lowering
 * refuses it up front with a message that says what it needs.
 *
 * Support is detected by compiling a small script, not by reading the version: the lowered code
 * runs on this same Node binary (in a worker thread or a helper process started from
 * `process.execPath`), so what compiles here compiles there.
 */
import type { Node, VariableDeclaration } from 'acorn'
import vm from 'node:vm'
import type { ParsedProgram } from './parse.js'
import { ProgramSyntaxError } from './syntax-error.js'

let supported: boolean | undefined

/** Whether this Node compiles `using` and `await using` declarations. */
export function supportsUsing(): boolean {
  if (supported === undefined) {
    try {
      new vm.Script('{ using a = null } (async () => { await using b = null })')
      supported = true
    } catch {
      supported = false
    }
  }
  return supported
}

/**
 * Throw a {@link ProgramSyntaxError} at the program's first `using` or `await using`
 * declaration, at any depth (inside functions too). Call only where they are unsupported;
 * programs that never spell `using` are not walked.
 */
export function refuseUsing(parsed: ParsedProgram, source: string): void {
  if (!source.includes('using')) return
  const found = firstUsing(parsed.body)
  if (found) {
    throw ProgramSyntaxError.at(
      source,
      found.start - parsed.programStart,
      `'${found.kind}' declarations need Node.js 24 or later (this runtime runs on Node.js ${process.versions.node})`,
    )
  }
}

/** The `using` declaration that starts first, at any depth (an explicit stack: programs nest deeply). */
function firstUsing(body: readonly Node[]): VariableDeclaration | undefined {
  let first: VariableDeclaration | undefined
  const pending: Node[] = [...body]
  while (pending.length > 0) {
    const node = pending.pop()!
    if (node.type === 'VariableDeclaration') {
      const declaration = node as VariableDeclaration
      const using = declaration.kind === 'using' || declaration.kind === 'await using'
      if (using && (!first || declaration.start < first.start)) first = declaration
    }
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) {
        for (const child of value) if (isNode(child)) pending.push(child)
      } else if (isNode(value)) pending.push(value)
    }
  }
  return first
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string'
}
