/**
 * The environment initializer: one program a deployment registers before its first run, which
 * every fresh environment runs before its first program. Unregistering it aborts every run and
 * ends every retained environment (they ran it), and refuses runs until that is done.
 */
import type { PtcProgramLanguage } from '../seam/types.js'
import type { LoweredProgram } from '../transform/index.js'
import type { ProgramCode } from '../protocol/messages.js'
import { NAME } from './admission.js'
import type { ProgramCache } from './run/programs.js'

export class EnvironmentInitializer {
  /** Why runs are refused now, if they are (a field: every run asks). Set only here. */
  blocked: string | undefined
  /** The registered initializer, lowered once as it is registered (a field: every run asks). Set only here. */
  lowered: (LoweredProgram & ProgramCode) | undefined

  constructor(
    private readonly _programs: ProgramCache,
    private readonly _language: PtcProgramLanguage,
    /** Aborts every run and ends every retained environment, with `reason`. */
    private readonly _drain: (reason: string) => Promise<void>,
  ) {}

  /** `admitted`: a run was already taken, so it is too late to register. */
  register(program: unknown, admitted: boolean): () => Promise<void> {
    if (typeof program !== 'string') throw new TypeError(`${NAME}: the initializer program must be a string`)
    if (this.lowered !== undefined) throw new Error(`${NAME}: an environment initializer is already registered`)
    if (admitted) throw new Error(`${NAME}: an environment initializer must be registered before the first run`)
    const text = this._language === 'typescript' ? this._programs.eraseTypesNow(program) : { source: program, language: this._language }
    this.lowered = this._programs.lower(text) // throws ProgramSyntaxError when it does not parse
    let cleanup: Promise<void> | undefined
    return () => {
      cleanup ??= this._unregister().catch((error: unknown) => {
        cleanup = undefined // a failed cleanup may be retried; execution stays blocked until then
        throw error
      })
      return cleanup
    }
  }

  private async _unregister(): Promise<void> {
    this.blocked = 'the environment initializer is being unregistered'
    await this._drain('the environment initializer was unregistered')
    this.lowered = undefined
    this.blocked = undefined
  }
}
