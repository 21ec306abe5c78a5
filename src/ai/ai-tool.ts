/** The ready tool as an AI SDK tool: the host gets the whole answer, the model its text and images. */
import { type Tool, jsonSchema, tool } from 'ai'
import type { RunCodeAnswer, RunCodeCallOptions, RunCodeTool } from '../tools/run-code-tool.js'
import { modelOutput } from './model-output.js'

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
 * `execute` runs the program with `options.stateOwner` and the SDK's abort signal. The tool's
 * output, what the host reads in `toolResults`, is the whole `RunCodeAnswer` (`text`, `result`
 * with its `calls` and `paused`, `images`); the model reads the text and each image the program
 * showed, as an image. Register it under `runCode.name`:
 * `tools: { [runCode.name]: aiTool(runCode, { stateOwner }) }`. A run the deployment failed
 * (`sandbox-unavailable`) throws a `PtcDeploymentError`, which the SDK reports as the call's error.
 */
export function aiTool(runCode: RunCodeTool, options: AiToolOptions = {}): Tool<{ program: string }, RunCodeAnswer> {
  return tool({
    description: runCode.description,
    inputSchema: jsonSchema<{ program: string }>(runCode.inputSchema),
    execute: ({ program }, { abortSignal }) =>
      runCode.run(
        { program },
        {
          ...(options.stateOwner ? { stateOwner: options.stateOwner } : {}),
          ...(abortSignal ? { signal: abortSignal } : {}),
          ...(options.onPause ? { onPause: options.onPause } : {}),
        },
      ),
    // The output has the shape of the SDK in use (see model-output.ts); the compiler knows one SDK's types.
    toModelOutput: ({ output }) => modelOutput(output) as ReturnType<NonNullable<Tool<{ program: string }, RunCodeAnswer>['toModelOutput']>>,
  })
}
