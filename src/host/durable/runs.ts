/**
 * Durable pauses as the provider meets them: which runs record a journal (a durable pause, the
 * request's own or, for a one-shot run, the deployment's), and a resume from a token: opened,
 * checked against this runtime, spent (a token resumes at most once) only once nothing about it
 * was refused as misuse, and replayed in a fresh environment with the decision for its held call.
 */
import type { PtcHoldDecision, PtcResumeOptions, PtcRunRequest, PtcRunResult, PtcRunSpec } from '../../seam/types.js'
import { NAME } from '../admission.js'
import type { WorkerPtcRuntimeConfig } from '../config.js'
import type { AdmittedPolicy, Sandbox } from '../sandbox/confinement.js'
import type { CallJournal } from './journal.js'
import { DurableTokens } from './tokens.js'
import { DurableTokenError } from './record.js'

/** What a resumed run goes through, as any other: the provider's admission and its dispatch. */
export interface DurableAdmission {
  resolve(request: PtcRunRequest): PtcRunSpec
  /** Checks a spec and returns its policy; throws on misuse (or after disposal began). */
  check(spec: PtcRunSpec): AdmittedPolicy | undefined
  admit(spec: PtcRunSpec, policy: AdmittedPolicy | undefined, journal: CallJournal): Promise<PtcRunResult>
}

export class DurableRuns {
  /** The tokens this runtime signs and resumes; absent without `durableKey`. */
  private readonly _tokens: DurableTokens | undefined

  constructor(
    private readonly _config: WorkerPtcRuntimeConfig & { cwd: string },
    private readonly _sandbox: Sandbox | undefined,
  ) {
    this._tokens = _config.durableKey === undefined ? undefined : new DurableTokens({ ..._config, durableKey: _config.durableKey })
  }

  /**
   * The journal of a run that pauses durably (the request's `pause`, else the deployment's for a
   * one-shot run), or undefined. Throws on a durable pause the deployment cannot sign or a run
   * with a state owner cannot take. `spec.pause` was checked at admission.
   */
  journalFor(spec: PtcRunSpec): CallJournal | undefined {
    const retained = spec.stateOwner !== undefined && this._config.retainState
    if (spec.pause === 'durable' && retained) {
      throw new TypeError(`${NAME}: pause 'durable' cannot take a run with a stateOwner: a replay starts in a fresh environment, without what earlier runs left in the owner's`)
    }
    if ((spec.pause ?? (retained ? 'live' : this._config.pause)) !== 'durable') return undefined
    if (this._tokens === undefined) {
      throw new TypeError(`${NAME}: pause 'durable' needs config.durableKey (a string or Buffer of at least 32 bytes) to sign its tokens`)
    }
    // The runtime's default cwd (a sandbox's scratch mount point is per runtime) is not recorded.
    const start = this._sandbox ? (spec.sandboxPolicy?.workspaceRoot ?? this._sandbox.defaultCwd) : this._config.cwd
    return this._tokens.record({
      program: spec.program,
      language: spec.language ?? this._config.language,
      format: this._config.programFormat,
      cwd: spec.cwd === start ? null : spec.cwd,
      timeoutMs: spec.timeoutMs,
      maxCalls: spec.maxCalls ?? this._config.maxCalls,
      discardCompletion: spec.discardCompletion === true,
    })
  }

  /** Replays the run `token` recorded, in a fresh environment, with `decision` for its held call (`PtcRuntime.resume`). */
  async resume(token: string, decision: PtcHoldDecision, options: PtcResumeOptions, runtime: DurableAdmission): Promise<PtcRunResult> {
    const tokens = this._tokens
    if (!tokens) {
      throw new Error(`${NAME}: resume() got a durable token, but config.durableKey is not set: configure the key the token was signed with`)
    }
    const refused = (error: unknown) => new Error(`${NAME}: resume() refused the token: ${(error as Error).message}`)
    let record
    try {
      record = await tokens.open(token)
    } catch (error) {
      if (error instanceof DurableTokenError) throw refused(error)
      // The thread failed (its memory, say), not the token: the caller must not throw it away.
      throw new Error(`${NAME}: resume() could not open the token, which is not spent and can be resumed again: ${(error as Error).message}`)
    }
    if (record.format !== this._config.programFormat) {
      throw new Error(`${NAME}: resume() refused the token: its program is in the ${record.format} format, and this runtime runs ${this._config.programFormat} programs`)
    }
    if (!Array.isArray(options.bindings)) {
      throw new TypeError(`${NAME}: resume(token) needs options.bindings: a durable token does not carry the run's bindings, so pass the namespaces the run had`)
    }
    const { program, language, cwd, timeoutMs, maxCalls, discardCompletion } = record
    const { bindings, sandboxPolicy, onBindingError, signal } = options
    const spec = runtime.resolve({
      program, language, timeoutMs, maxCalls, discardCompletion, bindings, pause: 'durable',
      ...(cwd === null ? {} : { cwd }),
      ...(sandboxPolicy === undefined ? {} : { sandboxPolicy }),
      ...(onBindingError === undefined ? {} : { onBindingError }),
      ...(signal === undefined ? {} : { signal }),
    })
    runtime.check(spec)
    let journal
    try {
      journal = tokens.replay(record, decision)
      // Last: a resume refused as misuse above leaves the token unspent.
      await tokens.claim(record)
    } catch (error) {
      throw refused(error)
    }
    const policy = runtime.check(spec) // the runtime may have begun disposal while the store answered
    return runtime.admit(spec, policy, journal)
  }

  /** Ends the tokens' codec thread (runtime disposal). */
  close(): void {
    this._tokens?.close()
  }
}
