import type { PtcBindingNamespace, PtcProgramFormat, PtcRunResult, PtcRuntime, WorkerPtcRuntimeOptions } from 'ptc-runtime'

export type Host = 'thread' | 'process' | 'confined' | 'stream'

/** One parsed corpus file (see corpus.mjs for the header keys). */
export interface HostileProgram {
  name: string
  /** `python` for a `.py` case, run as a `language: 'python'` request. */
  language: 'javascript' | 'python'
  attack: string
  expect: string
  qualified: Map<string, string>
  formats: PtcProgramFormat[]
  hosts: Host[]
  knownLimits: Map<string, string>
  alone: Map<string, string>
  requires: string | undefined
  prelude: string
  timeoutMs: number | undefined
  hasValue: boolean
  value: unknown
  values: Map<string, unknown>
  valueDepth: number | undefined
  output: RegExp | undefined
  message: RegExp | undefined
  messages: Map<string, RegExp>
  followUp: string
  pauseMs: number
  hold: 'approve' | 'refuse' | undefined
  holdWaitMs: number
  durable: boolean
  followUpTimeoutMs: number | undefined
  /** Merged into the runtime's configuration: the case runs on a runtime of its own. */
  config: Partial<WorkerPtcRuntimeOptions> | undefined
  /** Another conversation's time budget, run alongside the case. */
  bystanderMs: number | undefined
  /** How far the host's own heap may rise while the run is in progress, in MiB. */
  heapMb: number | undefined
  /** How long the host's event loop may be busy while the run is in progress, in ms. */
  busyMs: number | undefined
  knownBug: string | undefined
  knownBugs: Map<string, string>
  expects: Map<string, string>
  source: string
}

export const FORMATS: PtcProgramFormat[]
export const HOSTS: Host[]
export const DISCARDING: Set<string>
export const CORPUS_CONFIG: WorkerPtcRuntimeOptions & { timeoutMs: number; maxOutputBytes: number }
export const TIMEOUT_SLACK_MS: number
export const HOST_SECRET: { name: string; value: string }
export function plantHostSecret(): void
export const TOOLS: PtcBindingNamespace
export function loadCorpus(): HostileProgram[]
export function knownBug(program: HostileProgram, host: Host, format: PtcProgramFormat): string | undefined
export function runsAlone(program: HostileProgram, host: Host): boolean
export function knownLimit(program: HostileProgram, host: Host): string | undefined
export function expectedKind(program: HostileProgram, host: Host, format: PtcProgramFormat): string
export function programText(program: HostileProgram, host: Host, format: PtcProgramFormat, marker: string): string
export function healthProgram(format: PtcProgramFormat): string
export function retains(format: PtcProgramFormat): boolean
export function newMarker(): string
export function checkResult(
  program: HostileProgram,
  result: PtcRunResult,
  context: { host: Host; format: PtcProgramFormat; elapsedMs: number; timeoutMs: number },
): string[]
export function runCase(
  runtime: PtcRuntime,
  context: { host: Host; format: PtcProgramFormat; program: HostileProgram },
): Promise<{ result: PtcRunResult | 'hung'; problems: string[] }>
export function markedProcesses(marker: string): number[]
export function survivingProcesses(marker: string, graceMs: number): Promise<number[]>
