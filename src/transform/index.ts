/**
 * The program transformer: lowering of the four program formats, the runtime hooks lowered
 * code calls, and mapping of positions back to the program as written.
 */
export { lowerProgram } from './lower.js'
export { createProgramHooks, createProgramState } from './hooks.js'
export { PositionMap } from './position-map.js'
export { ProgramSyntaxError } from './syntax-error.js'
export { eraseTypes, eraseTypesAwaiting } from './typescript.js'
export { overlongProgram } from './program-size.js'

export type { LoweredProgram } from './lower.js'
export type { AsyncTypeEraser, TypeEraser } from './typescript.js'
export type { ProgramHooks, ProgramState } from './hooks.js'
export type { SerializedPositions } from './positions.js'
