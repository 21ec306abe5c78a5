/**
 * Where a value nests past a depth bound, found without recursion: a reader on the far side
 * (Pyodide's) overflows its stack on nesting that the runtime's own writers carry at any depth.
 */
import { blankList, isArray, objectKeys } from './intrinsics.js'
import { renderPath, type PathNode } from './path.js'

/**
 * The path of the first container (in document order) of `value`, records and lists of a
 * runtime-built copy, nested more than `maxDepth` levels deep (the outermost is level 1), or
 * null when none is. Keeps one entry per open container, as `jsonText` does, and allocates
 * nothing per container until it fails.
 */
export function pathPastDepth(value: unknown, maxDepth: number): string | null {
  const containers = blankList() as object[]
  const keyLists = blankList() as Array<string[] | null>
  const positions = blankList() as number[]
  let depth = 0
  let next: unknown = value
  for (;;) {
    if (typeof next === 'object' && next !== null) {
      if (depth === maxDepth) return renderPath(pathOf(keyLists, positions, depth), null)
      containers[depth] = next
      keyLists[depth] = isArray(next) ? null : objectKeys(next)
      positions[depth++] = 0
    }
    if (depth === 0) return null
    const top = depth - 1
    const keys = keyLists[top]!
    const position = positions[top]!
    if (position === (keys === null ? (containers[top] as unknown[]).length : keys.length)) {
      next = undefined
      depth--
      continue
    }
    positions[top] = position + 1
    next = (containers[top] as Record<string | number, unknown>)[keys === null ? position : keys[position]!]
  }
}

/** The open containers' path, the last one's child being read included: built only on failure. */
function pathOf(keyLists: Array<string[] | null>, positions: number[], depth: number): PathNode {
  let node: PathNode = { parent: null, slot: null }
  for (let level = 0; level < depth; level++) {
    const keys = keyLists[level]!
    const position = positions[level]! - 1
    node = { parent: node, slot: keys === null ? position : keys[position]! }
  }
  return node
}
