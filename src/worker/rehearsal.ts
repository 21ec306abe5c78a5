/**
 * The rehearsal: before a fresh worker reports ready, it runs one private program down the same
 * path a real run takes (binding calls and replies, alone and batched, console, the JSON codec,
 * completion), over a channel of its own. V8 compiles each function on its first call, so
 * without it the first real run, the latency-critical one of a pooled one-shot environment,
 * would pay for compiling the worker's own code. Nothing of it stays behind: every global it
 * defined (its binding namespace, the program's own declarations) is removed, its program
 * state and its stack-trace registration are its own.
 */
/* eslint-disable hostile-realm/captured-builtins -- the rehearsal runs before any program */
import { MessageChannel } from 'node:worker_threads'
import {
  type CallMessage, type ProgramCode, REHEARSAL_GLOBAL, type RepliesMessage, type ReplyMessage, type WorkerMessage,
} from '../protocol/messages.js'
import { createProgramState } from '../transform/hooks.js'
import { encodeWire } from '../json/index.js'
import { portOutbox } from './outbox.js'
import { WorkerRun } from './run.js'
import { forgetPrograms } from './stack.js'

/** Runs `program` privately; `begin` makes the run current so console output reaches it. */
export async function rehearse(program: ProgramCode, begin: (run: WorkerRun | undefined) => void): Promise<void> {
  const { port1: runSide, port2: hostSide } = new MessageChannel()
  const run = new WorkerRun(portOutbox(runSide), {
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
  const settled = new Promise<void>((resolve) => {
    const echo = (call: CallMessage): ReplyMessage => ({ type: 'reply', run: 0, id: call.id, ok: true, value: encodeWire(call.args ?? null) })
    // The run posts JSON text, as to the thread host (outbox.ts).
    hostSide.on('message', (text: string) => {
      const message = JSON.parse(text) as WorkerMessage
      if (message.type === 'call') hostSide.postMessage(echo(message))
      else if (message.type === 'calls') hostSide.postMessage({ type: 'replies', run: 0, replies: message.calls.map(echo) } satisfies RepliesMessage)
      else if (message.type === 'done' || message.type === 'failed') resolve()
    })
  })
  runSide.on('message', (message: ReplyMessage | RepliesMessage) => run.receive(message))
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
    // Closing is announced by a 'close' event on each end; awaited here so that no dispatch of
    // the rehearsal's ports is left to happen while a real program runs.
    const closed = Promise.all([runSide, hostSide].map((side) => new Promise((resolve) => side.once('close', resolve))))
    runSide.close()
    await closed
  }
}
