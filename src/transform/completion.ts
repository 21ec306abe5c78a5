/**
 * Completion values: making a lowered program produce what `vm.Script` would have produced.
 *
 * A script's completion value is the value of the last statement that completed with a value,
 * per ECMAScript's rules:
 * - an expression statement completes with its value;
 * - declarations, empty statements, `debugger`, `break`/`continue` complete *empty* (they leave
 *   the previous value in place), and so does a block or label whose statements are all empty;
 * - `if`, loops, `switch`, `try` and `with` are never empty: when nothing inside them produced a
 *   value they complete with `undefined` (UpdateEmpty), so `1; if (false) {}` gives undefined;
 * - a `catch` block's value replaces the value of the `try` block that threw;
 * - a `finally` block that completes normally does not change the value.
 *
 * Lowering keeps one slot (`__ptc__.completion`) and mirrors those rules dynamically: each
 * expression statement in a completion position assigns the slot; each never-empty statement
 * (and each catch block) first resets it to undefined, so whatever runs inside overwrites the
 * reset or leaves undefined; nothing inside a `finally` block touches it. The wrapper returns
 * the slot. Nothing inside functions or classes is a completion position.
 */
import type { Node, Statement } from 'acorn'
import { BOOTSTRAP_NAME } from '../seam/names.js'
import type { ProgramEdits } from './edits.js'

/** Where lowered code keeps the completion value of the current run. */
export const COMPLETION_SLOT = `${BOOTSTRAP_NAME}.completion`

/** One statement the completion rules touch. */
export interface CompletionSite {
  /** `set`: an expression statement; `reset`: a never-empty statement; `catch`: a catch block. */
  kind: 'set' | 'reset' | 'catch'
  node: Node
  /** Code inserted before `node` needs a leading `;` (the previous statement relied on ASI). */
  guard: boolean
  /** `node` is the sole body of a loop or `with`: inserting a statement needs braces. */
  braces: boolean
}

const NEVER_EMPTY = new Set([
  'ExpressionStatement', 'IfStatement', 'ForStatement', 'ForInStatement', 'ForOfStatement',
  'WhileStatement', 'DoWhileStatement', 'SwitchStatement', 'TryStatement', 'WithStatement',
])

/** Whether a statement always completes with a value (possibly undefined), never empty. */
function isNeverEmpty(statement: Statement): boolean {
  let inner = statement
  while (inner.type === 'LabeledStatement') inner = inner.body
  return NEVER_EMPTY.has(inner.type)
}

/** Whether a statement completes with undefined when nothing inside it produced a value. */
export function resetsCompletion(statement: Statement): boolean {
  return statement.type !== 'ExpressionStatement' && NEVER_EMPTY.has(statement.type)
}

/**
 * Index of the first top-level statement that can decide the completion value. Top-level
 * statements all run in order unless one throws (then there is no completion at all), so
 * once a never-empty statement runs, nothing before it matters: only the last never-empty
 * statement and the maybe-empty ones after it need instrumenting. This keeps a long program's
 * lowering, and its run, free of per-statement bookkeeping.
 */
export function firstCompletionIndex(body: readonly Statement[]): number {
  for (let index = body.length - 1; index >= 0; index--) {
    if (isNeverEmpty(body[index]!)) return index
  }
  return 0
}

/** Apply the completion sites: assignments to the slot, resets, catch-block resets. */
export function instrumentCompletion(edits: ProgramEdits, sites: readonly CompletionSite[]): void {
  const text = edits.text
  for (const site of sites) {
    const { node } = site
    const guard = site.guard ? ';' : ''
    if (site.kind === 'set') {
      // Parenthesize the whole expression: the slot assignment must not bind tighter than a
      // comma expression, and a statement that ended by ASI gets an explicit `;`.
      const hasSemicolon = text.charCodeAt(node.end - 1) === 59
      edits.open(node.start, `${guard}${COMPLETION_SLOT} = (`)
      edits.close(hasSemicolon ? node.end - 1 : node.end, hasSemicolon ? ')' : ');')
    } else if (site.kind === 'reset') {
      edits.open(node.start, `${guard}${site.braces ? '{ ' : ''}${COMPLETION_SLOT} = void 0; `)
      if (site.braces) edits.close(node.end, ' }')
    } else {
      edits.open(node.start + 1, ` ${COMPLETION_SLOT} = void 0;`)
    }
  }
}
