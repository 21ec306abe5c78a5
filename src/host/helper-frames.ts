/**
 * Parsing of helper traffic. The program shares the helper's descriptors and can write frames
 * of its own, so each frame is checked field by field and rebuilt; anything else is
 * `undefined` and the run fails with `protocol`. The relayed worker message itself is parsed
 * later, by `parseWorkerMessage`, exactly as for an in-process worker.
 */
import type { HelperFrame } from '../helper/protocol.js'
import { isRecord } from '../json/index.js'

/** The frame `raw` (a JSON.parse result) stands for, or `undefined` when it is not one. */
export function parseHelperFrame(raw: unknown): HelperFrame | undefined {
  if (!isRecord(raw)) return undefined
  switch (raw.type) {
    case 'ready':
    case 'forged':
      return { type: raw.type }
    case 'message':
      return 'message' in raw ? { type: 'message', message: raw.message } : undefined
    case 'killed':
      if (!Number.isSafeInteger(raw.id) || (raw.alone !== undefined && typeof raw.alone !== 'boolean')) return undefined
      return raw.alone === undefined ? { type: 'killed', id: raw.id as number } : { type: 'killed', id: raw.id as number, alone: raw.alone }
    case 'raw':
      return typeof raw.text === 'string' ? { type: 'raw', text: raw.text } : undefined
    case 'exit': {
      const { code, errorCode, errorMessage } = raw
      if (!Number.isSafeInteger(code)) return undefined
      if (errorCode !== undefined && typeof errorCode !== 'string') return undefined
      if (errorMessage !== undefined && typeof errorMessage !== 'string') return undefined
      return {
        type: 'exit',
        code: code as number,
        ...(errorCode === undefined ? {} : { errorCode }),
        ...(errorMessage === undefined ? {} : { errorMessage }),
      }
    }
    default:
      return undefined
  }
}
