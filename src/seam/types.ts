/**
 * The vocabulary of the seam (CONTRACT §2). Pure types: nothing here knows about workers.
 */
import type { PtcImage } from './image.js'

/** A value that survives a JSON round trip unchanged. */
export type PtcJsonValue = null | boolean | number | string | PtcJsonValue[] | { [key: string]: PtcJsonValue }

/** Which evaluation form `program` follows. */
export type PtcProgramFormat = 'function-body' | 'repl' | 'script' | 'scoped-repl'

/** What a binding may resolve: lossless JSON, in which host-issued images may appear anywhere. */
export type PtcBindingValue =
  | PtcJsonValue
  | PtcImage
  | PtcBindingValue[]
  | { [key: string]: PtcBindingValue }

/**
 * A host function exposed to programs as `<global>.<member>(args)`. `call.signal` aborts when
 * the run settles (any outcome), so the host can stop in-flight work.
 */
export type PtcBindingFunction = (args: unknown, call: { signal: AbortSignal }) => Promise<PtcBindingValue>

/** The class a rejected binding call is turned into inside the program. */
export interface PtcBindingErrorClass {
  /** Program-visible global name of the class. */
  name: string
  /** Own property of each instance that holds the member name that failed. */
  memberNameProperty: string
}

/** One program-visible global object of async host functions. */
export interface PtcBindingNamespace {
  global: string
  functions: Record<string, PtcBindingFunction>
  errorClass?: PtcBindingErrorClass
}

export type SandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access'
export type SandboxEnforcement = 'full' | 'partial'

/** The file policy one run executes under. */
export interface SandboxExecutionPolicy {
  mode: SandboxMode
  workspaceRoot: string
  writableRoots?: string[]
}

/** Sandbox facts reported with a result. */
export interface PtcRunSandbox {
  mode: SandboxMode
  /** The program's failure text carried the backend's denial signature. A diagnostic, not proof. */
  denied: boolean
  enforcement?: SandboxEnforcement
}

/** What a caller asks for. */
export interface PtcRunRequest {
  program: string
  bindings: PtcBindingNamespace[]
  /** Drop the completion without validating it. */
  discardCompletion?: boolean
  /** Identity key of a retained environment. */
  stateOwner?: object
  /** Working directory of the program's fs and subprocess world. */
  cwd?: string
  /** Omitted: provider default; number: capped budget; `null`: no deadline. */
  timeoutMs?: number | null
  sandboxPolicy?: SandboxExecutionPolicy
  /** Hard stop, even inside a synchronous loop. */
  signal?: AbortSignal
}

/** A request after `resolve`: every choice made explicit. */
export interface PtcRunSpec extends PtcRunRequest {
  cwd: string
  timeoutMs: number | null
}

export interface ImageAttachmentRef {
  attachmentId: string
  mediaType: 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif'
  bytes: number
  width: number
  height: number
  name?: string
}

/** One output entry, in emission order. Adjacent text entries concatenate without separators. */
export type PtcOutput = { type: 'text'; text: string } | { type: 'image'; attachment: ImageAttachmentRef }

export type PtcFailureKind =
  | 'exception'
  | 'timeout'
  | 'abort'
  | 'worker-exit'
  | 'invalid-output'
  | 'output-limit'
  | 'protocol'
  | 'sandbox-unavailable'

/** Why a run failed, written for a model to read and correct its program. */
export interface PtcRunFailure {
  kind: PtcFailureKind
  message: string
}

/** Everything a run produced. `error` is present exactly when the run failed. */
export interface PtcRunResult {
  output: PtcOutput[]
  value?: PtcJsonValue
  error?: PtcRunFailure
  sandbox?: PtcRunSandbox
}
