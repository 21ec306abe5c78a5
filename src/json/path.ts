/**
 * JSONPath-like locations for failure reasons (`$.items[2]["a b"]`). Walkers keep only parent
 * links while they run; the text is built here, on failure only.
 */
import { isProxy, ownDataValue, regExpExec, stringify, stringSlice } from './intrinsics.js'

/** A key inside a container: an array index or an object key. */
export type Slot = number | string

/** One open container on a walker's stack: where it sits in its parent. */
export interface PathNode {
  readonly parent: PathNode | null
  /** Its key in the parent; null for the root. */
  readonly slot: Slot | null
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/
/** Deep paths keep this many segments at each end around an ellipsis. */
const KEPT_SEGMENTS = 8
const MAX_KEY_CHARS = 40

/** Location of `slot` inside `node` (or of `node` itself when slot is null). */
export function renderPath(node: PathNode | null, slot: Slot | null): string {
  let depth = slot === null ? 0 : 1
  for (let at = node; at !== null; at = at.parent) if (at.slot !== null) depth++
  let path = ''
  let index = depth
  const keep = (): boolean => index < KEPT_SEGMENTS || index >= depth - KEPT_SEGMENTS
  if (slot !== null) {
    index--
    path = segment(slot)
  }
  for (let at = node; at !== null; at = at.parent) {
    if (at.slot === null) continue
    index--
    if (keep()) path = segment(at.slot) + path
    else if (index === depth - KEPT_SEGMENTS - 1) path = '…' + path
  }
  return '$' + path
}

function segment(slot: Slot): string {
  if (typeof slot === 'number') return `[${slot}]`
  if (regExpExec(IDENTIFIER, slot) !== null && slot.length <= MAX_KEY_CHARS) return '.' + slot
  return `[${quoteKey(slot)}]`
}

/** A key as a JSON string, shortened so a huge key cannot bloat a reason. */
export function quoteKey(key: string): string {
  return key.length <= MAX_KEY_CHARS ? stringify(key) : stringify(stringSlice(key, 0, MAX_KEY_CHARS)) + '…'
}

/** A short description of something a getter threw, without running any of its code. */
export function describeThrown(thrown: unknown): string {
  let text: string
  if (typeof thrown === 'object' && thrown !== null) {
    const message = isProxy(thrown) ? undefined : ownDataValue(thrown, 'message')
    text = typeof message === 'string' ? message : 'a non-error object'
  } else if (typeof thrown === 'function') {
    text = 'a function'
  } else {
    text = typeof thrown === 'symbol' ? 'a symbol' : `${thrown as string}`
  }
  return text.length <= 200 ? text : stringSlice(text, 0, 200) + '…'
}
