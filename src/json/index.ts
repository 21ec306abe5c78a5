/** Lossless JSON: validation and detachment, byte metering, and the flat MessagePort encoding. */
export { snapshotJson } from './lossless.js'
export { fitJsonString, jsonByteLength, jsonStringByteLength } from './meter.js'
export { decodeWire, encodeWire } from './wire.js'
export { isRecord } from './record.js'
export type { LeafFields, WireTokens } from './wire.js'
