/**
 * Hints for the model where it slips on a name: a `ReferenceError` for an undeclared name lists
 * the tool globals that exist, closest first, and calling a tool its namespace does not have
 * names the closest one (`tools.forcast is not a function; did you mean tools.forecast?`). The
 * stack formatter appends them to the error's first line, so the failure message and
 * `error.stack` carry them at the program's own line and column; `error.message` is untouched.
 */
import type { NamespaceShape } from '../protocol/messages.js'
import { hasOwn } from '../intrinsics.js'
import { blankList, charCodeAt, regExpExec, stringSlice } from '../json/intrinsics.js'
import { create } from './intrinsics.js'

/** Longer names get no distance: the computation stays small whatever a program names. */
const MAX_NAME_CHARS = 64
/** Members compared per hint, and names listed in one. */
const MAX_CANDIDATES = 2000
const MAX_LISTED = 8

const NOT_DEFINED = / is not defined$/
const NOT_A_FUNCTION = /^([A-Za-z_$][\w$]*)\.([^]+) is not a function$/

/** The current run's namespaces: global → member names. */
let namespaces: Record<string, readonly string[]> = create(null)
let globals: string[] = blankList() as string[]

/** Remembers the namespaces a run installed (the egress namespace is `fetch`, not a global of tools). */
export function rememberNamespaces(shapes: readonly NamespaceShape[]): void {
  const byGlobal: Record<string, readonly string[]> = create(null)
  // Lists without a prototype: a setter a program planted on Array.prototype never sees them.
  const names = blankList() as string[]
  for (let index = 0; index < shapes.length; index++) {
    const shape = shapes[index]!
    if (shape.egress === true) continue
    byGlobal[shape.global] = shape.members
    names[names.length] = shape.global
  }
  namespaces = byGlobal
  globals = names
}

/** What to append to an error's `name: message` line; '' when there is no hint. */
export function slipHint(name: string, message: string): string {
  if (globals.length === 0) return ''
  if (name === 'ReferenceError' && regExpExec(NOT_DEFINED, message) !== null) {
    const missing = stringSlice(message, 0, message.length - 15)
    // A tool called without its namespace (`forecast(...)` for `weather.forecast(...)`).
    const owner = namespaceWith(missing, '')
    const list = `tool globals are ${listed(closestFirst(missing, globals), '')}`
    return owner === undefined ? `; the ${list}` : `; did you mean ${owner}.${missing}? The ${list}`
  }
  if (name !== 'TypeError') return ''
  const call = regExpExec(NOT_A_FUNCTION, message)
  if (call === null) return ''
  const global = call[1]!
  const member = call[2]!
  if (!hasOwn(namespaces, global)) return ''
  const members = namespaces[global]!
  if (members.length === 0) return `; ${global} has no tools`
  const ranked = closestFirst(member, members)
  const best = ranked[0]!
  const near = (member.length / 3) | 0
  if (distance(member, best) <= (near > 1 ? near : 1)) return `; did you mean ${global}.${best}?`
  // The right tool in the wrong namespace.
  const owner = namespaceWith(member, global)
  if (owner !== undefined) return `; did you mean ${owner}.${member}?`
  return `; ${global} has ${listed(ranked, `${global}.`)}`
}

/** The first namespace other than `except` with a tool named `member`, looking at a bounded number of tools. */
function namespaceWith(member: string, except: string): string | undefined {
  let budget = MAX_CANDIDATES
  for (let index = 0; index < globals.length && budget > 0; index++) {
    const global = globals[index]!
    if (global === except) continue
    const members = namespaces[global]!
    for (let at = 0; at < members.length && budget > 0; at++, budget--) if (members[at] === member) return global
  }
  return undefined
}

function listed(names: readonly string[], prefix: string): string {
  let text = ''
  const count = names.length < MAX_LISTED ? names.length : MAX_LISTED
  for (let index = 0; index < count; index++) text += (index === 0 ? '' : ', ') + prefix + names[index]!
  return names.length > count ? `${text}, … (${names.length} in all)` : text
}

/** `candidates` (at most MAX_CANDIDATES of them) sorted by distance to `name`, stable. */
function closestFirst(name: string, candidates: readonly string[]): string[] {
  const count = candidates.length < MAX_CANDIDATES ? candidates.length : MAX_CANDIDATES
  const ranked = blankList() as string[]
  const scores = blankList() as number[]
  for (let index = 0; index < count; index++) {
    const candidate = candidates[index]!
    const score = distance(name, candidate)
    // Insertion keeps equal scores in declaration order; lists are short enough.
    let at = ranked.length
    while (at > 0 && scores[at - 1]! > score) {
      ranked[at] = ranked[at - 1]!
      scores[at] = scores[at - 1]!
      at--
    }
    ranked[at] = candidate
    scores[at] = score
  }
  return ranked
}

/**
 * Edit distance with adjacent transpositions, ASCII case ignored; names longer than
 * MAX_NAME_CHARS are as far as can be.
 */
function distance(a: string, b: string): number {
  if (a.length > MAX_NAME_CHARS || b.length > MAX_NAME_CHARS) return MAX_NAME_CHARS * 2
  const width = b.length + 1
  let before = blankList() as number[]
  let previous = blankList() as number[]
  let current = blankList() as number[]
  for (let j = 0; j < width; j++) previous[j] = j
  for (let i = 1; i <= a.length; i++) {
    current[0] = i
    const ai = folded(a, i - 1)
    for (let j = 1; j < width; j++) {
      const bj = folded(b, j - 1)
      const cost = ai === bj ? 0 : 1
      let best = previous[j - 1]! + cost
      if (previous[j]! + 1 < best) best = previous[j]! + 1
      if (current[j - 1]! + 1 < best) best = current[j - 1]! + 1
      if (i > 1 && j > 1 && ai === folded(b, j - 2) && folded(a, i - 2) === bj && before[j - 2]! + 1 < best) best = before[j - 2]! + 1
      current[j] = best
    }
    const spare = before
    before = previous
    previous = current
    current = spare
  }
  return previous[b.length]!
}

function folded(text: string, index: number): number {
  const code = charCodeAt(text, index)
  return code >= 65 && code <= 90 ? code + 32 : code
}
