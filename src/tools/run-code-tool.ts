/**
 * The one tool an agent loop offers the model: "run this program". Its description tells the
 * model how to write a program for this runtime and which tools it may call; `execute` runs
 * the program and answers with the text the model reads next.
 */
import type { PtcRuntime } from '../seam/runtime.js'
import { validateBindings } from '../seam/names.js'
import type { PtcBindingNamespace, PtcHoldDecision, PtcPause, PtcRunResult } from '../seam/types.js'
import type { ToolGroup } from './group.js'
import { type ResultTextBudget, resultText } from './result-text.js'

/** What `createRunCodeTool` needs. */
export interface RunCodeToolOptions {
  /** The runtime that runs the programs (`ctx.ptcRuntime`). */
  runtime: PtcRuntime
  /** The tools programs may call, from `defineToolGroup` or `mcpToolGroup`. */
  groups: readonly ToolGroup[]
  /** The tool's name; default `run_code`. */
  name?: string
  /** Printed output the model reads, in characters; default 10 000. */
  maxOutputChars?: number
  /** Value or failure message the model reads, in characters; default 10 000. */
  maxValueChars?: number
  /** Each run's time budget; omitted: the runtime's default (see `PtcRunRequest.timeoutMs`). */
  timeoutMs?: number | null
}

/** Per call: whose retained state the program sees, and a way to stop it. */
export interface RunCodeCallOptions {
  /** The conversation; runs with the same owner share one environment when the runtime retains state. */
  stateOwner?: object
  /** Stops the run; it then reports an `abort` failure. */
  signal?: AbortSignal
  /**
   * Called when the run pauses on a held call (a tool's `needsApproval` or `interrupt`), before
   * the text saying so resolves: answer it later with `tool.resume(paused.id, decision)`.
   */
  onPause?: (paused: PtcPause) => void
}

/** A tool in the shape model APIs and agent frameworks take. */
export interface RunCodeTool {
  /** The name to register the tool under; the model calls it by this name. */
  name: string
  /** The runtime's `executionInstructions`, the result format and the tools' declarations. */
  description: string
  /** JSON Schema of the tool's input: `{ program: string }`. */
  inputSchema: {
    type: 'object'
    properties: { program: { type: 'string'; description: string } }
    required: ['program']
    additionalProperties: false
  }
  /** The namespaces every run installs. */
  bindings: PtcBindingNamespace[]
  /**
   * Runs `program` and resolves with the text the model reads: the output first, then the value
   * or the failure, each cut to the budget. Rejects only when `program` is not a string or the
   * runtime refuses the request (disposed, bad options).
   */
  execute(input: { program: string }, options?: RunCodeCallOptions): Promise<string>
  /**
   * Answers a held call (see `RunCodeCallOptions.onPause`) and resolves with the text of how the
   * program went on, for the model to read next. Rejects as `runtime.resume` does.
   */
  resume(id: string, decision: PtcHoldDecision, options?: Omit<RunCodeCallOptions, 'stateOwner'>): Promise<string>
}

/** The declarations of what the runtime itself puts in every environment. */
export const RUNTIME_DECLARATIONS = `/** An image a tool returned; \`inspect(image)\` shows it to you. */
declare class Image { readonly path: string; readonly width: number; readonly height: number; readonly mediaType: string }
/** Shows an Image; prints a readable rendering of any other value. */
declare function inspect(value: unknown): void`

/**
 * Builds the ready tool from a runtime and tool groups. Throws when two groups claim the same
 * global or error class, or a budget is not a positive integer.
 */
export function createRunCodeTool(options: RunCodeToolOptions): RunCodeTool {
  const { runtime, groups, name = 'run_code', timeoutMs } = options
  const budget: ResultTextBudget = {
    maxOutputChars: positive(options.maxOutputChars ?? 10_000, 'maxOutputChars'),
    maxValueChars: positive(options.maxValueChars ?? 10_000, 'maxValueChars'),
  }
  const bindings = groups.map((group) => group.namespace)
  validateBindings(bindings)
  const declarations = [RUNTIME_DECLARATIONS, ...groups.map((group) => group.declarations)].join('\n\n')
  const description = [
    'Run a JavaScript program that calls the tools declared below, and read what it printed and what it returned.',
    runtime.executionInstructions,
    `You get back the printed output first (beyond ${budget.maxOutputChars} characters its middle is cut), ` +
      `then the result as JSON or the error (cut after ${budget.maxValueChars} characters).`,
    `Tools available as globals:\n\`\`\`ts\n${declarations}\n\`\`\``,
  ]
    .filter((part) => part !== '')
    .join('\n\n')

  return {
    name,
    description,
    inputSchema: {
      type: 'object',
      properties: { program: { type: 'string', description: `The program (${runtime.programFormat} format).` } },
      required: ['program'],
      additionalProperties: false,
    },
    bindings,
    async execute(input, call = {}) {
      const program = input?.program
      if (typeof program !== 'string') throw new TypeError(`${name}: input.program must be a string, got ${typeof program}`)
      const spec = runtime.resolve({
        program,
        bindings,
        ...(call.stateOwner !== undefined ? { stateOwner: call.stateOwner } : {}),
        ...(call.signal !== undefined ? { signal: call.signal } : {}),
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      })
      return answer(await runtime.run(spec), call.onPause)
    },
    async resume(id, decision, call = {}) {
      return answer(await runtime.resume(id, decision, call.signal ? { signal: call.signal } : {}), call.onPause)
    },
  }

  function answer(result: PtcRunResult, onPause: RunCodeCallOptions['onPause']): string {
    if (result.paused) onPause?.(result.paused)
    return resultText(result, budget)
  }
}

function positive(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`createRunCodeTool: ${field} must be a positive integer, got ${value}`)
  return value
}
