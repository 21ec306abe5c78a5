/**
 * `ptc-runtime/ai`: the ready "run code" tool as a Vercel AI SDK tool, for `generateText`,
 * `streamText` and agents.
 */
import { type Tool, jsonSchema, tool } from 'ai'
import type { RunCodeCallOptions, RunCodeTool } from '../tools/run-code-tool.js'

/** Per tool instance: which conversation's retained state the programs share. */
export interface AiToolOptions {
  /** The conversation; every program this tool runs uses it as its `stateOwner`. */
  stateOwner?: object
  /**
   * Called when a program pauses on a held call (a tool's `needsApproval` or `interrupt`); the
   * model reads that the call awaits approval. The SDK's own `needsApproval` decides before a
   * tool runs, from its input, so it cannot approve a call made inside a program: answer the
   * hold with `runCode.resume(paused.id, decision)` and give the model the text it returns.
   */
  onPause?: RunCodeCallOptions['onPause']
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
      runCode.execute(
        { program },
        {
          ...(options.stateOwner ? { stateOwner: options.stateOwner } : {}),
          ...(abortSignal ? { signal: abortSignal } : {}),
          ...(options.onPause ? { onPause: options.onPause } : {}),
        },
      ),
  })
}

export { fromAiSdkTools } from './tool-set.js'
export type { AiSdkToolGroupOptions } from './tool-set.js'
