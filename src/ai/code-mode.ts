/**
 * Code mode in one call: an AI SDK tool set becomes one ready `run_code` tool whose programs
 * call those tools, with what an approval round trip needs beside it.
 */
import type { Tool, ToolSet } from 'ai'
import type { PtcRuntime } from '../seam/api.js'
import type { PtcBindingErrorClass, PtcHoldDecision, PtcPause } from '../seam/types.js'
import { type RunCodeAnswer, type RunCodeTool, type RunCodeToolOptions, createRunCodeTool } from '../tools/run-code-tool.js'
import { aiTool } from './ai-tool.js'
import { fromAiSdkTools } from './tool-set.js'

/** How `codeModeTools` presents the tools, and the ready tool's own options. */
export interface CodeModeOptions extends Omit<RunCodeToolOptions, 'runtime' | 'groups'> {
  /** The global programs call the tools by; default `tools` (`await tools.weather({ city })`). */
  global?: string
  /** What the tools are, for the model. */
  description?: string
  /** When given, a failed call rejects with an instance of this class inside the program. */
  errorClass?: PtcBindingErrorClass
  /** JSON bytes one call's argument may hold (see `AiSdkToolGroupOptions.maxArgumentBytes`). */
  maxArgumentBytes?: number
  /** The host's time one run may spend checking the tools' arguments (see `AiSdkToolGroupOptions.maxSchemaCheckMsPerRun`). */
  maxSchemaCheckMsPerRun?: number
  /** The conversation: its programs share one environment when the runtime retains state. */
  stateOwner?: object
}

/** A code-mode tool set and its approval round trip. */
export interface CodeMode {
  /** `{ [runCode.name]: tool }`, for `generateText({ tools })`; its output is the `RunCodeAnswer`. */
  tools: Record<string, Tool<{ program: string }, RunCodeAnswer>>
  /** The ready tool behind it. */
  runCode: RunCodeTool
  /** Calls held for a decision (a tool's `needsApproval`), oldest first; the model was told each one waits. */
  readonly pending: readonly PtcPause[]
  /**
   * Answers a pending hold and resolves with how the program went on: give the model
   * `answer.text` in the conversation's next message. The hold leaves `pending` (a new pause of
   * the same program joins it). Rejects as `runCode.resumeRun` does.
   */
  resume(id: string, decision: PtcHoldDecision): Promise<RunCodeAnswer>
}

/**
 * Turns an AI SDK tool set into one code-mode tool: the tools become the group `global` (see
 * `fromAiSdkTools`), the ready tool is built over it (see `createRunCodeTool`), and wrapped
 * for the AI SDK (see `aiTool`), so three lines lead from existing tools to `generateText`:
 * `const { tools } = await codeModeTools(runtime, myTools)`.
 */
export async function codeModeTools(runtime: PtcRuntime, tools: ToolSet, options: CodeModeOptions = {}): Promise<CodeMode> {
  const { global = 'tools', description, errorClass, maxArgumentBytes, maxSchemaCheckMsPerRun, stateOwner, ...toolOptions } = options
  const group = await fromAiSdkTools(tools, {
    global,
    ...(description !== undefined ? { description } : {}),
    ...(errorClass ? { errorClass } : {}),
    ...(maxArgumentBytes !== undefined ? { maxArgumentBytes } : {}),
    ...(maxSchemaCheckMsPerRun !== undefined ? { maxSchemaCheckMsPerRun } : {}),
  })
  const runCode = createRunCodeTool({ ...toolOptions, runtime, groups: [group] })
  const pending: PtcPause[] = []
  const onPause = (paused: PtcPause) => void pending.push(paused)
  return {
    tools: { [runCode.name]: aiTool(runCode, { ...(stateOwner ? { stateOwner } : {}), onPause }) },
    runCode,
    pending,
    async resume(id, decision) {
      // Answered (or unanswerable, when resume rejects): no longer pending either way.
      const index = pending.findIndex((paused) => paused.id === id)
      if (index !== -1) pending.splice(index, 1)
      return runCode.resumeRun(id, decision, { onPause })
    },
  }
}
