/**
 * `ptc-runtime/cordis`: the runtime as a Cordis service, for Cordis apps. `WorkerPtcRuntime` is
 * the plugin (`ctx.plugin(WorkerPtcRuntime, config)`), and importing this entry types
 * `ctx.ptcRuntime`. Kept apart from the main entry so that Cordis's declarations, which only
 * `moduleResolution: bundler` resolves, never reach a project that does not use Cordis.
 */
export { PtcRuntime } from './seam/runtime.js'
export { WorkerPtcRuntime } from './host/provider.js'
export type { WorkerPtcRuntimeOptions } from './host/options.js'
