/**
 * Lowering of `scoped-repl` programs: each run's top-level declarations are real bindings of
 * that run, and the next run starts with copies of them.
 *
 * Semantics:
 * - A run's top level is the top level of its own async function: `var`, `let`, `const`,
 *   `class` and `function` declarations behave exactly as at the top of a function body
 *   (hoisting, temporal dead zone, const immutability), and are invisible to other runs except
 *   through the carried scope.
 * - The environment keeps one carried scope: name → value. When a run ends, normally or by
 *   throwing (a `finally` in the wrapper), the value of each of its top-level bindings (the
 *   ones it declared and the copies it was given) is written there; a binding still in its
 *   temporal dead zone is skipped, leaving the value an earlier run carried.
 * - A run starts with a copy of every carried name it does not declare: `let name = <carried
 *   value>`. It may redeclare any name (even `const x` after `let x`, or the reverse). A carried
 *   name it declares with `var` (and not as a function) starts with the carried value, as a
 *   `var` redeclared in a script keeps its value.
 * - Copies are new bindings holding the same values (objects are shared, not cloned). A closure
 *   created in an earlier run keeps the binding of that run: a later run assigning or
 *   redeclaring the name changes only its own copy and what is carried forward.
 * - Which names are carried is the host's business (`options.carried`, usually every name
 *   earlier runs declared); a name that lowered code cannot spell as a binding of its own
 *   (`eval`, `yield`, reserved words) is not carried.
 */
import { BOOTSTRAP_NAME } from '../seam/names.js'
import { COMPLETION_SLOT } from './completion.js'
import { isBindableName } from './declarations.js'
import type { ProgramEdits, Wrapper } from './edits.js'
import type { ParsedProgram } from './parse.js'
import type { ProgramScan } from './scan.js'

/** Seed a scanned program with carried copies and track its bindings; returns its wrapper. */
export function lowerToScope(
  parsed: ParsedProgram,
  scan: ProgramScan,
  edits: ProgramEdits,
  carried: readonly string[],
): Wrapper {
  // A top-level `using` binds its name for this run only: no copy, and nothing carried forward.
  const declared = new Set([...scan.declared, ...scan.usingNames])
  const copies: string[] = []
  const seeded: string[] = []
  for (const name of new Set(carried)) {
    if (!isBindableName(name)) continue
    if (!declared.has(name)) copies.push(name)
    else if (scan.varNames.has(name) && !scan.functionNames.has(name)) seeded.push(name)
  }
  if (copies.length > 0) edits.addPrelude(` let ${copies.map(fromScope).join(', ')};`)
  if (seeded.length > 0) edits.addPrelude(` var ${seeded.map(fromScope).join(', ')};`)
  const tracked = [...scan.declared.filter(isBindableName), ...copies]
  if (tracked.length > 0) {
    const getters = tracked.map((name) => `${JSON.stringify(name)}, () => ${name}`)
    edits.addPrelude(` ${BOOTSTRAP_NAME}.track(${getters.join(', ')});`)
  }
  // The program runs at the top level of an inner function so its declarations keep their
  // top-level meaning; the outer function commits the scope however the inner one settles.
  return {
    open: `(async (${BOOTSTRAP_NAME}) => { try { return await (async () => {${parsed.strict ? " 'use strict';" : ''}`,
    close: `\n;return ${COMPLETION_SLOT} })() } finally { ${BOOTSTRAP_NAME}.commit() } })`,
  }
}

function fromScope(name: string): string {
  return `${name} = ${BOOTSTRAP_NAME}.carried(${JSON.stringify(name)})`
}
