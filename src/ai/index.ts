/**
 * `ptc-runtime/ai`: the ready "run code" tool as a Vercel AI SDK tool, for `generateText`,
 * `streamText` and agents (AI SDK 6 and 7).
 */
export { aiTool } from './ai-tool.js'
export type { AiToolOptions } from './ai-tool.js'
export { codeModeTools } from './code-mode.js'
export type { CodeMode, CodeModeOptions } from './code-mode.js'
export { MAX_MODEL_IMAGE_BYTES } from './model-output.js'
export type { RunCodeModelImage, RunCodeModelOutput } from './model-output.js'
export { AI_SDK_MAX_ARGUMENT_BYTES, fromAiSdkTools } from './tool-set.js'
export type { AiSdkToolGroupOptions } from './tool-set.js'
