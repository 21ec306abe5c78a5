/**
 * Admission: what the provider checks before it takes a run, a resume or a release. A request
 * is completed into a spec (`resolve`), and a spec is checked again when it comes back (it may
 * have been built by hand, or its cwd removed since). Every throw names the field and the rule.
 */
import { statSync } from 'node:fs'
import path from 'node:path'
import { snapshotJson } from '../json/index.js'
import { validateBindings } from '../seam/names.js'
import { PROGRAM_LANGUAGES } from '../seam/types.js'
import type { PtcHoldDecision, PtcRunRequest, PtcRunSpec } from '../seam/types.js'
import type { WorkerPtcRuntimeConfig } from './config.js'
import type { AdmittedPolicy, Sandbox } from './sandbox/confinement.js'
import { checkTypeEraser } from './run/typescript-eraser.js'
import { pythonRuntime } from '../python/runtime.js'

export const NAME = 'WorkerPtcRuntime'

export class Admission {
  constructor(
    private readonly _config: WorkerPtcRuntimeConfig & { cwd: string },
    private readonly _sandbox: Sandbox | undefined,
    /** The tier's name and where its programs run, when that is not a host path (`Tier.fixedCwd`). */
    private readonly _fixedCwd?: { tier: string; where: string },
  ) {
    if (_config.language === 'python') this._checkPythonHere()
  }

  get timeout(): { defaultMs: number; maxMs: number } {
    return { defaultMs: Math.min(this._config.timeoutMs, this._config.maxTimeoutMs), maxMs: this._config.maxTimeoutMs }
  }

  /** The spec of `request`: its cwd, timeout and (in a sandboxed deployment) policy filled in. */
  resolve(request: PtcRunRequest): PtcRunSpec {
    if (typeof request !== 'object' || request === null) throw new TypeError(`${NAME}: request must be an object`)
    checkStateOwner(request.stateOwner, 'stateOwner')
    if (request.language !== undefined) this._checkLanguage(request.language, 'language')
    if (request.onBindingError !== undefined && typeof request.onBindingError !== 'function') {
      throw new TypeError(`${NAME}: onBindingError must be a function, got ${typeof request.onBindingError}`)
    }
    checkMaxCalls(request.maxCalls, 'maxCalls')
    checkPause(request.pause, 'pause')
    if (request.cwd !== undefined && this._fixedCwd) {
      const { tier, where } = this._fixedCwd
      throw new TypeError(`${NAME}: cwd is refused on isolation '${tier}': its programs run in ${where}, where a host path means nothing; leave cwd out`)
    }
    const timeoutMs = this._resolveTimeout(request.timeoutMs)
    if (this._sandbox) {
      // Every run of a sandboxed deployment carries its policy; cwd defaults to its workspace
      // root (or, for the deployment's policy, to the deployment's cwd when it names one).
      const sandboxPolicy = request.sandboxPolicy === undefined ? this._sandbox.policy : this._sandbox.resolvePolicy(request.sandboxPolicy, `${NAME}: sandboxPolicy`)
      const start = request.sandboxPolicy === undefined ? this._sandbox.defaultCwd : sandboxPolicy.workspaceRoot
      const cwd = existingDirectory(request.cwd ?? start, 'cwd')
      // One rule for a cwd the host names, whether in the configuration or in a request: under
      // the deployment's policy it is shown to the program read-only. (An explicit sandboxPolicy
      // says itself what the program sees.)
      if (request.sandboxPolicy === undefined && request.cwd !== undefined) {
        const shown = this._sandbox.showingCwd(sandboxPolicy, cwd)
        return { ...request, cwd: shown.cwd, timeoutMs, sandboxPolicy: shown.policy }
      }
      return { ...request, cwd, timeoutMs, sandboxPolicy }
    }
    if (request.sandboxPolicy !== undefined) {
      throw new Error(`${NAME}: sandboxPolicy is unsupported because no sandbox is configured`)
    }
    return { ...request, cwd: existingDirectory(request.cwd ?? this._config.cwd, 'cwd'), timeoutMs }
  }

  /** A known language this tier can run. */
  private _checkLanguage(language: unknown, field: string): void {
    checkLanguage(language, field)
    if (language === 'python') this._checkPythonHere()
  }

  /**
   * Python cannot run on a tier whose programs run elsewhere: the worker loads Pyodide from the
   * host's own directory of it, a host path that means nothing there.
   */
  private _checkPythonHere(): void {
    if (!this._fixedCwd) return
    const { tier, where } = this._fixedCwd
    throw new TypeError(`${NAME}: language 'python' is unavailable on isolation '${tier}': its programs run in ${where}, which has no Pyodide of the host's; use isolation 'process' (the default) or 'thread'`)
  }

  /**
   * Checks a spec handed to `run`; resolves its sandbox policy (every run of a sandboxed
   * deployment has one) and whether it can be confined here, once for the run.
   */
  check(spec: PtcRunSpec): AdmittedPolicy | undefined {
    if (typeof spec !== 'object' || spec === null) throw new TypeError(`${NAME}: run() needs a spec from resolve()`)
    if (typeof spec.program !== 'string') throw new TypeError(`${NAME}: spec.program must be a string`)
    if (typeof spec.cwd !== 'string' || !path.isAbsolute(spec.cwd)) {
      throw new TypeError(`${NAME}: spec.cwd must be an absolute path; pass the request through resolve() first`)
    }
    existingDirectory(spec.cwd, 'spec.cwd') // it may have been removed since resolve()
    checkStateOwner(spec.stateOwner, 'spec.stateOwner')
    if (spec.language !== undefined) this._checkLanguage(spec.language, 'spec.language')
    checkMaxCalls(spec.maxCalls, 'spec.maxCalls')
    checkPause(spec.pause, 'spec.pause')
    const { timeoutMs } = spec
    if (timeoutMs !== null && (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0)) {
      throw new TypeError(`${NAME}: spec.timeoutMs must be a positive finite number or null; pass the request through resolve() first`)
    }
    if (timeoutMs !== null && timeoutMs > this._config.maxTimeoutMs) {
      throw new RangeError(`${NAME}: spec.timeoutMs ${timeoutMs} exceeds maxTimeoutMs ${this._config.maxTimeoutMs}`)
    }
    if (spec.sandboxPolicy !== undefined && !this._sandbox) {
      throw new Error(`${NAME}: sandboxPolicy is unsupported because no sandbox is configured`)
    }
    try {
      validateBindings(spec.bindings)
    } catch (error) {
      throw new TypeError(`${NAME}: ${(error as Error).message}`)
    }
    return this._sandbox?.admit(spec.sandboxPolicy, `${NAME}: spec.sandboxPolicy`)
  }

  private _resolveTimeout(timeoutMs: unknown): number | null {
    if (timeoutMs === undefined) return this.timeout.defaultMs
    if (timeoutMs === null) return null
    if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new TypeError(`${NAME}: timeoutMs must be a positive finite number or null, got ${String(timeoutMs)}`)
    }
    return Math.min(timeoutMs, this._config.maxTimeoutMs)
  }
}

/** A known language, whose eraser (for TypeScript) loads here: a missing one is the caller's to fix. */
export function checkLanguage(language: unknown, field: string): void {
  if (!(PROGRAM_LANGUAGES as readonly unknown[]).includes(language)) {
    throw new TypeError(`${NAME}: ${field} must be one of ${PROGRAM_LANGUAGES.join(', ')}, got ${JSON.stringify(language)}`)
  }
  if (language === 'typescript') checkTypeEraser()
  if (language === 'python') pythonRuntime()
}

/** A copy of a caller's decision, or a throw naming what is wrong with it. */
export function checkDecision(decision: unknown): PtcHoldDecision {
  if (typeof decision !== 'object' || decision === null) throw new TypeError(`${NAME}: a decision must be { approve: true } or { approve: false, reason }`)
  const { approve, value, reason } = decision as Record<string, unknown>
  if (approve === true) {
    if (value === undefined) return { approve }
    const snapshot = snapshotJson(value)
    if (!snapshot.ok) throw new TypeError(`${NAME}: decision.value must be lossless JSON (${snapshot.reason})`)
    return { approve, value: snapshot.value }
  }
  if (approve !== false) throw new TypeError(`${NAME}: decision.approve must be true or false, got ${typeof approve}`)
  if (reason !== undefined && typeof reason !== 'string') throw new TypeError(`${NAME}: decision.reason must be a string, got ${typeof reason}`)
  return reason === undefined ? { approve } : { approve, reason }
}

/** State owners are compared by identity: a string or number would be shared by every equal value. */
export function checkStateOwner(owner: unknown, field: string): void {
  if (owner === undefined || (typeof owner === 'object' && owner !== null) || typeof owner === 'function') return
  throw new TypeError(`${NAME}: ${field} must be an object or a function (owners are told apart by identity), got ${owner === null ? 'null' : typeof owner}`)
}

export function checkPause(value: unknown, field: string): void {
  if (value === undefined || value === 'live' || value === 'durable') return
  throw new TypeError(`${NAME}: ${field} must be 'live' or 'durable', got ${JSON.stringify(value) ?? typeof value}`)
}

function checkMaxCalls(value: unknown, field: string): void {
  if (value === undefined || (Number.isSafeInteger(value) && (value as number) > 0)) return
  throw new TypeError(`${NAME}: ${field} must be a positive integer, got ${String(value)}`)
}

function existingDirectory(value: unknown, field: string): string {
  if (typeof value !== 'string' || !path.isAbsolute(value)) {
    throw new TypeError(`${NAME}: ${field} must be an absolute path, got ${JSON.stringify(value)}`)
  }
  let directory = false
  try {
    directory = statSync(value).isDirectory()
  } catch {
    // reported below
  }
  if (!directory) throw new Error(`${NAME}: ${field} must be an existing directory, got ${JSON.stringify(value)}`)
  return value
}
