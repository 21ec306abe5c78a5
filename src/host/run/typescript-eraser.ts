/**
 * The TypeScript eraser: SWC's `strip-only` transform (`@swc/wasm-typescript`), loaded the first
 * time a TypeScript program is lowered (7 MB of WebAssembly a JavaScript deployment never loads).
 *
 * It is the eraser Node itself runs behind `module.stripTypeScriptTypes` (through amaro, which
 * bundles this same WebAssembly but declares Node 22 and up, so every install on Node 20 warned).
 * We call it directly on every Node version rather than the built-in where present: the built-in
 * is missing on Node 20 and 22.12, which we support, it emits an ExperimentalWarning in the host
 * process, it folds the failure's line and column into its message text, while this hands them
 * over as fields (how a model reads a TypeScript syntax error at its own position), and a trap
 * inside it would break Node's own instance, which nothing can replace.
 *
 * One instance serves every conversation on the host, so no program may break it for the next:
 * - a program is bounded in size and bracket nesting before the eraser sees it (erasing costs
 *   about 0.1 ms per KiB once warm, so the size bound keeps it near 25 ms on the host's thread);
 * - any failure that is not the eraser's own syntax error (a trap: its stack overflowing, memory
 *   out of bounds) discards the instance, whose memory can no longer be trusted, and the next
 *   program gets a fresh one (about 45 ms to load).
 */
import { createRequire } from 'node:module'
import type { TypeEraser } from '../../transform/index.js'

/** Characters of a TypeScript program (with its wrapper) the host erases. */
export const MAX_TYPESCRIPT_CHARS = 256 * 1024

/**
 * Brackets (`(`, `[`, `{`) nested deeper than this are refused before erasing. The eraser is a
 * recursive descent whose stack overflows a few thousand levels down; a program a model writes
 * nests a few dozen. Other nesting (generics, unary chains) is left to the trap path.
 */
export const MAX_TYPESCRIPT_NESTING = 256

interface SwcEraser {
  transformSync(source: string, options: { mode: 'strip-only'; deprecatedTsModuleAsError: boolean }): { code: string }
}

const PACKAGE = '@swc/wasm-typescript'
/**
 * Replaced with the instance: a `require` records every module it loads in its parent's
 * `children`, so one kept for good would keep every discarded instance (megabytes of
 * WebAssembly memory each) alive, and a program that traps the eraser over and over would grow
 * the host without bound.
 */
let requireEraser = createRequire(import.meta.url)
let instance: SwcEraser | undefined

/** The eraser, loading its WebAssembly on first use. Throws when the package cannot be loaded. */
export function typeEraser(): TypeEraser {
  load()
  return erase
}

function load(): SwcEraser {
  if (instance) return instance
  try {
    instance = requireEraser(PACKAGE) as SwcEraser
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    throw new Error(`TypeScript programs need the dependency ${PACKAGE}, which could not be loaded: ${reason}`)
  }
  return instance
}

/** Forgets the instance: the package is one CommonJS file, so requiring it again (from a new `require`) builds a new one. */
function discard(): void {
  instance = undefined
  delete requireEraser.cache[requireEraser.resolve(PACKAGE)]
  requireEraser = createRequire(import.meta.url)
}

function erase(source: string): string {
  if (source.length > MAX_TYPESCRIPT_CHARS) {
    throw new Error(`a TypeScript program may have at most ${MAX_TYPESCRIPT_CHARS} characters; this one has ${source.length}`)
  }
  const depth = bracketDepth(source)
  if (depth > MAX_TYPESCRIPT_NESTING) {
    throw new Error(`brackets in a TypeScript program may nest at most ${MAX_TYPESCRIPT_NESTING} deep; this one nests ${depth} deep`)
  }
  try {
    // `module N {}` is refused as Node refuses it (amaro's default): it means `namespace`, which strip-only cannot erase.
    return load().transformSync(source, { mode: 'strip-only', deprecatedTsModuleAsError: true }).code
  } catch (error) {
    if (isSyntaxFailure(error)) throw error
    discard()
    const reason = error instanceof Error ? `${error.name}: ${error.message.split('\n')[0]}` : String(error)
    throw new Error(`the eraser gave up on this program (${reason}); it nests too deeply`)
  }
}

/** The eraser's own refusal of a program: an object with a `code` and the failure's position. */
function isSyntaxFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || error instanceof Error) return false
  const { code, startLine } = error as { code?: unknown; startLine?: unknown }
  return typeof code === 'string' && typeof startLine === 'number'
}

/** The deepest nesting of `(`, `[` and `{` in `source`, counting brackets in strings and comments too. */
function bracketDepth(source: string): number {
  let depth = 0
  let deepest = 0
  for (let index = 0; index < source.length; index++) {
    const code = source.charCodeAt(index)
    if (code === 0x28 || code === 0x5b || code === 0x7b) {
      if (++depth > deepest) deepest = depth
    } else if ((code === 0x29 || code === 0x5d || code === 0x7d) && depth > 0) {
      depth--
    }
  }
  return deepest
}
