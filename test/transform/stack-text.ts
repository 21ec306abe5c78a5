/**
 * Stack text mapped the way the worker maps it, for tests that read stacks of lowered code
 * evaluated outside a worker (the worker itself maps frames in src/worker/stack.ts).
 */
import type { PositionMap } from '../../src/transform/position-map.js'
import { PROGRAM_FILENAME } from '../../src/transform/positions.js'

const POSITION = /(?<![\w$./\\-])program\.js(\?[0-9a-z]+)?:(\d+)(?::(\d+))?/g
const FRAME = /^\s*at /

/**
 * Rewrite every `program.js?<hash>:LINE:COLUMN` in a stack or message to `program.js:LINE:COLUMN`
 * of the original program. `map` is the current run's; pass the maps of the environment's
 * `earlier` runs too, so frames of functions those runs declared map with their own run's map
 * (frames name their run through the `//# sourceURL` of its code). A frame of a run with no map
 * keeps its function name and loses its meaningless position; an untagged `program.js:L:C`
 * (a stack formatted without source URLs) maps with `map`. Stack frames (`    at …`) that point
 * into wrapper code are dropped: they describe our plumbing, not the program. A bare
 * `program.js:LINE` (V8's compile-error header) maps its line.
 */
export function mapStackPositions(text: string, map: PositionMap, earlier: Iterable<PositionMap> = []): string {
  if (!text.includes(PROGRAM_FILENAME)) return text
  const byFile = new Map<string, PositionMap>()
  for (const candidate of earlier) byFile.set(candidate.file, candidate)
  byFile.set(map.file, map)
  const kept: string[] = []
  for (const line of text.split('\n')) {
    let wrapper = false
    const rewritten = line.replace(POSITION, (whole, tag: string | undefined, lineText: string, columnText?: string) => {
      const owner = tag === undefined ? map : byFile.get(PROGRAM_FILENAME + tag)
      if (!owner) return PROGRAM_FILENAME
      const position = owner.original(Number(lineText), columnText === undefined ? 1 : Number(columnText))
      if (!position) {
        wrapper = true
        return whole
      }
      return columnText === undefined
        ? `${PROGRAM_FILENAME}:${position.line}`
        : `${PROGRAM_FILENAME}:${position.line}:${position.column}`
    })
    if (wrapper && FRAME.test(line)) continue
    kept.push(rewritten)
  }
  return kept.join('\n')
}
