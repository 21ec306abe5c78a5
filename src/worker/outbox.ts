/**
 * Where a run's messages to the host go: the worker's port in the thread host and in the
 * rehearsal; in a helper process, the helper's channel, written by the worker itself.
 */
import type { MessagePort } from 'node:worker_threads'
import type { WorkerMessage } from '../protocol/messages.js'
import { messageFrame } from '../protocol/frames.js'
import { jsonText } from '../json/text.js'
import { writeFrame } from './channel.js'
import { post } from './intrinsics.js'

export type Outbox = (message: WorkerMessage) => void

/**
 * Messages posted as JSON text: the host reads them with the same bounds as a helper's frames
 * (src/host/connection/json-lines.ts), and text crosses a port as one copy, where structured clone would
 * rebuild (and recurse on) every object of a call's arguments on the host's thread.
 */
export function portOutbox(port: MessagePort): Outbox {
  return (message) => post(port, jsonText(message))
}

/** `message` frames (src/protocol/frames.ts) on descriptor `fd`, each written whole under `lock` (see channel.ts). */
export function channelOutbox(fd: number, lock: Int32Array): Outbox {
  return (message) => {
    try {
      writeFrame(fd, lock, messageFrame(message))
    } catch {
      // The host closed the channel: the helper's main thread hears it too and ends the helper.
    }
  }
}
