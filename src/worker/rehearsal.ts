/**
 * The rehearsal: before a fresh worker reports ready, it runs one private program down the same
 * path a real run takes (binding calls and replies, alone and batched, console, the JSON codec,
 * completion), over a channel of its own made like the real one: a port pair, or, where a run's
 * messages travel as frames on descriptors (a helper's), frames written to `/dev/null` and
 * replies read from bytes by the inbox's own reader. V8 compiles each function on its first
 * call, so without it the first real run, the latency-critical one of a pooled one-shot
 * environment, would pay for compiling the worker's own code (measured on a helper: 0.36 ms
 * from its inbox's bytes to the parsed run when its frame path had never run, 0.07 ms after).
 * Nothing of it stays behind: every global it defined (its binding namespace, the program's own
 * declarations) is removed, its program state and its stack-trace registration are its own.
 */
/* eslint-disable hostile-realm/captured-builtins -- the rehearsal runs before any program */
import { closeSync, openSync } from 'node:fs'
import {
  type CallMessage, type HostMessage, type ProgramCode, REHEARSAL_GLOBAL, type RepliesMessage, type ReplyMessage, type WorkerMessage,
} from '../protocol/messages.js'
import { encodeFrame } from '../protocol/frames.js'
import { createProgramState } from '../transform/hooks.js'
import { encodeWire } from '../json/index.js'
import { createFrameLock } from './channel.js'
import { frameReceiver } from './inbox.js'
import { type Outbox, channelOutbox, portOutbox } from './outbox.js'
import { WorkerRun } from './run.js'
import { forgetPrograms } from './stack.js'

/** The rehearsal's channel: where its run writes, and how the host's replies reach the run. */
interface RehearsalChannel {
  readonly outbox: Outbox
  close(): Promise<void>
}

/**
 * Runs `program` privately, over frames when `framed`; `begin` makes the run current so
 * console output reaches it.
 */
export async function rehearse(program: ProgramCode, framed: boolean, begin: (run: WorkerRun | undefined) => void): Promise<void> {
  let finished!: () => void
  const settled = new Promise<void>((resolve) => (finished = resolve))
  const echo = (call: CallMessage): ReplyMessage => ({ type: 'reply', run: 0, id: call.id, ok: true, value: encodeWire(call.args ?? null) })
  /** The host's side: what it answers to the run's message, as JSON text (as the real host reads it). */
  const answer = (text: string): HostMessage | undefined => {
    const message = JSON.parse(text) as WorkerMessage
    if (message.type === 'call') return echo(message)
    if (message.type === 'calls') return { type: 'replies', run: 0, replies: message.calls.map(echo) } satisfies RepliesMessage
    if (message.type === 'done' || message.type === 'failed') finished()
    return undefined
  }
  let run: WorkerRun | undefined
  const channel = (framed ? framedChannel : portChannel)(answer, (reply) => run!.receive(reply))
  run = new WorkerRun(channel.outbox, {
    type: 'run',
    run: 0,
    program,
    namespaces: [{ global: REHEARSAL_GLOBAL, members: ['echo'] }],
    cwd: process.cwd(),
    maxOutputBytes: 1 << 16,
    maxPendingCallBytes: 1 << 16,
    discardCompletion: false,
    oneShot: false,
  }, true)
  const globalsBefore = new Set(Reflect.ownKeys(globalThis))
  begin(run)
  try {
    await run.execute(createProgramState())
    await settled
  } finally {
    begin(undefined)
    // The runtime's own globals are among them too; each run installs those again.
    const globalsAfter = Reflect.ownKeys(globalThis)
    for (let index = 0; index < globalsAfter.length; index++) {
      const key = globalsAfter[index]!
      if (!globalsBefore.has(key)) Reflect.deleteProperty(globalThis, key)
    }
    forgetPrograms()
    await channel.close()
  }
}

/** A port pair, as the thread tier's worker talks to its host (outbox.ts `portOutbox`). */
function portChannel(answer: (text: string) => HostMessage | undefined, receive: (reply: ReplyMessage | RepliesMessage) => void): RehearsalChannel {
  // The global, not `node:worker_threads`' (the same class): a startup snapshot must not hold that module (snapshot.ts).
  const { port1: runSide, port2: hostSide } = new MessageChannel()
  hostSide.on('message', (text: string) => {
    const reply = answer(text)
    if (reply) hostSide.postMessage(reply)
  })
  runSide.on('message', receive)
  return {
    outbox: portOutbox(runSide),
    async close() {
      // Closing is announced by a 'close' event on each end; awaited here so that no dispatch of
      // the rehearsal's ports is left to happen while a real program runs.
      const closed = Promise.all([runSide, hostSide].map((side) => new Promise((resolve) => side.once('close', resolve))))
      runSide.close()
      await closed
    },
  }
}

/**
 * Frames, as a helper's run talks to its host: written whole to `/dev/null` by the channel's own
 * writer (outbox.ts `channelOutbox`), and each reply encoded as the host encodes it and read back
 * from bytes, a turn later as from a descriptor, by the inbox's reader (inbox.ts).
 */
function framedChannel(answer: (text: string) => HostMessage | undefined, receive: (reply: ReplyMessage | RepliesMessage) => void): RehearsalChannel {
  const sink = openSync('/dev/null', 'w')
  const write = channelOutbox(sink, createFrameLock())
  // Only replies are answered, so only replies come back.
  const read = frameReceiver((message) => receive(message as ReplyMessage | RepliesMessage), () => undefined)
  return {
    outbox(message) {
      write(message)
      const reply = answer(JSON.stringify(message))
      if (!reply) return
      const bytes = Buffer.from(encodeFrame({ type: 'relay', message: reply }))
      setImmediate(() => read(bytes, bytes.length))
    },
    async close() {
      closeSync(sink)
    },
  }
}
