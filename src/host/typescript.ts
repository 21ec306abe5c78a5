/**
 * The TypeScript eraser: amaro's `strip-only` transform, loaded the first time a TypeScript
 * program is lowered (7 MB of WebAssembly a JavaScript deployment never loads).
 *
 * amaro is the eraser Node itself ships behind `module.stripTypeScriptTypes`. We call it
 * directly on every Node version rather than the built-in where present: the built-in is
 * missing on Node 20 and 22.12, which we support, it emits an ExperimentalWarning in the host
 * process, and it folds the failure's line and column into its message text, while amaro hands
 * them over as fields, which is how a model reads a TypeScript syntax error at its own position.
 */
import { createRequire } from 'node:module'
import type { TypeEraser } from '../transform/index.js'

interface Amaro {
  transformSync(source: string, options: { mode: 'strip-only' }): { code: string }
}

let eraser: TypeEraser | undefined

/** The eraser, loading amaro on first use. Throws when amaro cannot be loaded. */
export function typeEraser(): TypeEraser {
  if (eraser) return eraser
  let amaro: Amaro
  try {
    amaro = createRequire(import.meta.url)('amaro') as Amaro
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    throw new Error(`TypeScript programs need the dependency amaro, which could not be loaded: ${reason}`)
  }
  eraser = (source) => amaro.transformSync(source, { mode: 'strip-only' }).code
  return eraser
}
