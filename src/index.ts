export type { PtcRuntime } from './seam/api.js'
export { PtcImage } from './seam/image.js'
export { PtcCallRefusal } from './seam/refusal.js'
export {
  BOOTSTRAP_NAME,
  DUNDER_MEMBER,
  PORTABLE_RESERVED_WORDS,
  REALM_BUILTIN_GLOBALS,
  RESERVED_BINDING_GLOBALS,
  RESERVED_ERROR_MEMBERS,
  validateBindings,
} from './seam/names.js'
export { PROGRAM_FORMATS, PROGRAM_LANGUAGES, SANDBOX_MODES } from './seam/types.js'
export type {
  ImageAttachmentRef,
  PtcBindingCall,
  PtcBindingErrorClass,
  PtcBindingErrorReport,
  PtcBindingFunction,
  PtcBindingNamespace,
  PtcBindingValue,
  PtcCallLimits,
  PtcCallOutcome,
  PtcCallRecord,
  PtcFailureKind,
  PtcHoldDecision,
  PtcJsonValue,
  PtcOutput,
  PtcPause,
  PtcPauseMode,
  PtcProgramFormat,
  PtcProgramLanguage,
  PtcResumeOptions,
  PtcRunFailure,
  PtcRunRequest,
  PtcRunLedger,
  PtcRunResult,
  PtcRunSandbox,
  PtcRunSpec,
  SandboxEgress,
  SandboxEnforcement,
  SandboxExecutionPolicy,
  SandboxMode,
  SandboxNetwork,
} from './seam/types.js'
export type { WorkerPtcRuntimeOptions } from './host/options.js'
export type { PtcDurableStore } from './host/durable/store.js'
export { DEFAULT_IMAGE, buildImage } from './host/environments/container/image.js'
export type { BuildImageOptions } from './host/environments/container/image.js'
export type { PtcByteStream, PtcSandbox, PtcSandboxBudgets, PtcSandboxProvider, PtcSandboxRequest, PtcStreamFactory, PtcStreamRequest } from './host/environments/tiers.js'
export { PtcSandboxLost } from './host/environments/tiers.js'
export { createPtcRuntime } from './host/standalone.js'
export type { StandalonePtcRuntime } from './host/standalone.js'
export { defineToolGroup } from './tools/group.js'
export type { JsonSchemaTool, ToolCall, ToolGroup, ToolGroupDefinition, ToolGroupMember } from './tools/group.js'
export type { JsonSchema } from './tools/schema-types.js'
export { RUNTIME_DECLARATIONS, createRunCodeTool } from './tools/run-code-tool.js'
export type { RunCodeAnswer, RunCodeCallOptions, RunCodeTool, RunCodeToolOptions } from './tools/run-code-tool.js'
export type { RunCodeImage } from './tools/shown-images.js'
export { PtcDeploymentError } from './tools/deployment-error.js'
export { resultText } from './tools/result-text.js'
export type { ResultTextBudget } from './tools/result-text.js'
