export { PtcRuntime } from './seam/runtime.js'
export { PtcImage } from './seam/image.js'
export {
  BOOTSTRAP_NAME,
  DUNDER_MEMBER,
  PORTABLE_RESERVED_WORDS,
  RESERVED_BINDING_GLOBALS,
  RESERVED_ERROR_MEMBERS,
  validateBindings,
} from './seam/names.js'
export { PROGRAM_FORMATS, SANDBOX_MODES } from './seam/types.js'
export type {
  ImageAttachmentRef,
  PtcBindingCall,
  PtcBindingErrorClass,
  PtcBindingFunction,
  PtcBindingNamespace,
  PtcBindingValue,
  PtcFailureKind,
  PtcHoldDecision,
  PtcJsonValue,
  PtcOutput,
  PtcPause,
  PtcProgramFormat,
  PtcRunFailure,
  PtcRunRequest,
  PtcRunResult,
  PtcRunSandbox,
  PtcRunSpec,
  SandboxEnforcement,
  SandboxExecutionPolicy,
  SandboxMode,
  SandboxNetwork,
} from './seam/types.js'
export { WorkerPtcRuntime } from './host/provider.js'
export type { WorkerPtcRuntimeOptions } from './host/config.js'
export { defineToolGroup } from './tools/group.js'
export type { JsonSchemaTool, ToolCall, ToolGroup, ToolGroupDefinition } from './tools/group.js'
export type { JsonSchema } from './tools/schema-types.js'
export { RUNTIME_DECLARATIONS, createRunCodeTool } from './tools/run-code-tool.js'
export type { RunCodeCallOptions, RunCodeTool, RunCodeToolOptions } from './tools/run-code-tool.js'
export { resultText } from './tools/result-text.js'
export type { ResultTextBudget } from './tools/result-text.js'
