/**
 * `ptc-runtime/ai`: the ready "run code" tool as a Vercel AI SDK tool, for `generateText`,
 * `streamText` and agents.
 */
import { type Tool, jsonSchema, tool } from 'ai'
import type { RunCodeTool } from '../tools/run-code-tool.js'

/** Per tool instance: which conversation's retained state the programs share. */
export interface AiToolOptions {
  /** The conversation; every program this tool runs uses it as its `stateOwner`. */
  stateOwner?: object
}

/**
 * Wraps a tool from `createRunCodeTool` for the AI SDK: same description and input schema;
 * `execute` runs the program with `options.stateOwner` and the SDK's abort signal, and returns
 * the text the model reads. Register it under `runCode.name`:
 * `tools: { [runCode.name]: aiTool(runCode, { stateOwner }) }`.
 */
export function aiTool(runCode: RunCodeTool, options: AiToolOptions = {}): Tool<{ program: string }, string> {
  return tool({
    description: runCode.description,
    inputSchema: jsonSchema<{ program: string }>(runCode.inputSchema),
    execute: ({ program }, { abortSignal }) =>
      runCode.execute({ program }, { ...(options.stateOwner ? { stateOwner: options.stateOwner } : {}), ...(abortSignal ? { signal: abortSignal } : {}) }),
  })
}
