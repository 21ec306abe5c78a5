/**
 * Lowering with a small cache: agent loops resend the same programs (retries, initializers),
 * and acorn costs about a millisecond per few kilobytes. Only results that do not depend on
 * environment state are cached (scoped-repl lowering depends on the carried names). A
 * TypeScript program's erasure is kept the same way, so a program sent again does not wait for
 * the eraser's thread, which serves every conversation in turn.
 */
import { type ProgramCode, REHEARSAL_SOURCE } from '../../protocol/messages.js'
import type { PtcProgramFormat, PtcProgramLanguage } from '../../seam/types.js'
import { eraseTypesAwaiting, type LoweredProgram, lowerProgram } from '../../transform/index.js'
import type { EnvironmentHistory } from '../environments/environment.js'
import { eraseInitializerTypes } from './initializer-eraser.js'
import { releaseTypeEraser, typeEraser } from './typescript-eraser.js'
import { PYTHON_REHEARSAL_SOURCE, lowerPython } from '../../python/lower.js'

const CACHE_SIZE = 64
/**
 * Longer programs are lowered each time, never kept: the cache serves the short programs that
 * repeat, and entries of any size would let one program's distinct megabyte texts pin
 * `CACHE_SIZE` times their size (source, key and lowering) in the host for every conversation.
 */
const MAX_CACHED_CHARS = 64 * 1024

export class ProgramCache {
  private readonly _entries = new Map<string, LoweredProgram>()
  /** Erased TypeScript by its source; only what erased is kept (a deadline's failure may not recur). */
  private readonly _erased = new Map<string, string>()

  constructor(private readonly _format: PtcProgramFormat) {}

  /** Loads the TypeScript eraser's thread now, so the first TypeScript program does not wait for it. Rejects when SWC cannot be loaded. */
  async warmTypeEraser(): Promise<void> {
    await typeEraser(this)
  }

  /** The runtime is disposed: its hold on the TypeScript eraser's thread ends. */
  close(): void {
    this._entries.clear()
    this._erased.clear()
    releaseTypeEraser(this)
  }

  /**
   * A TypeScript program with its types erased, awaiting the eraser's thread while the host's
   * loop goes on. Rejects with ProgramSyntaxError when its types cannot be erased, with an Error
   * when SWC cannot be loaded.
   */
  async eraseTypes(source: string, signal?: AbortSignal): Promise<ProgramText> {
    let erased = this._erased.get(source)
    if (erased === undefined) {
      const eraser = await typeEraser(this)
      erased = await eraseTypesAwaiting(source, (text) => eraser(text, signal))
    }
    if (source.length <= MAX_CACHED_CHARS) remember(this._erased, source, erased)
    return { source, language: 'typescript', erased }
  }

  /** {@link eraseTypes} waiting blocked, for the environment initializer alone (initializer-eraser.ts says why). */
  eraseTypesNow(source: string): ProgramText {
    return { source, language: 'typescript', erased: eraseInitializerTypes(source) }
  }

  /** Lowers `program`; throws ProgramSyntaxError when it does not parse. */
  lower({ source, language, erased }: ProgramText, carried: Iterable<string> = []): LoweredProgram & ProgramCode {
    const names = this._format === 'scoped-repl' ? [...carried].sort() : []
    const key = `${language}\u0000${names.join(',')}\u0000${source}`
    const lowered = this._entries.get(key) ?? (language === 'python' ? lowerPython(source, this._format) : lowerProgram(source, this._format, { carried: names, erased }))
    if (source.length <= MAX_CACHED_CHARS) remember(this._entries, key, lowered)
    return lowered
  }

  /**
   * `program` lowered for its run in `environment`: a scoped-repl program sees copies of what
   * earlier runs there declared, and in a fresh environment what `initializer` (which runs first)
   * declared.
   */
  lowerFor(program: ProgramText, environment: Carrying, initializer: LoweredProgram | undefined): LoweredProgram & ProgramCode {
    if (this._format !== 'scoped-repl') return this.lower(program)
    return this.lower(program, environment.runs === 0 ? (initializer?.declared ?? []) : environment.carried)
  }
}

/** Keeps `value` as the most recent of `entries`, dropping the least recent past CACHE_SIZE. */
function remember<T>(entries: Map<string, T>, key: string, value: T): void {
  entries.delete(key)
  if (entries.size >= CACHE_SIZE) entries.delete(entries.keys().next().value!)
  entries.set(key, value)
}

/** A program as `ProgramCache.lower` takes it: a TypeScript one with its types erased (`ProgramCache.eraseTypes`). */
export interface ProgramText {
  source: string
  language: PtcProgramLanguage
  erased?: string
}

type Carrying = Pick<EnvironmentHistory, 'runs' | 'carried'>

/** The names a kept run leaves `environment` carrying: its own, and the initializer's when it ran first. */
export function declaredBy(environment: Carrying, program: LoweredProgram, initializer: LoweredProgram | undefined): string[] {
  return [...(environment.runs === 0 ? (initializer?.declared ?? []) : []), ...program.declared]
}

/** A private script of the runtime's own, lowered on first use and kept. */
export function privateScript(source: string): () => ProgramCode {
  let lowered: ProgramCode | undefined
  return () => {
    if (!lowered) {
      const { code, positions } = lowerProgram(source, 'script')
      lowered = { code, positions }
    }
    return lowered
  }
}

const javascriptRehearsal = privateScript(REHEARSAL_SOURCE)

/**
 * The program every fresh worker rehearses before it reports ready (src/worker/rehearsal.ts).
 * For a Python deployment it is Python: the worker then restores its interpreter before `ready`.
 */
export function rehearsalProgram(language: PtcProgramLanguage = 'javascript'): ProgramCode {
  return language === 'python' ? lowerPython(PYTHON_REHEARSAL_SOURCE, 'function-body') : javascriptRehearsal()
}
