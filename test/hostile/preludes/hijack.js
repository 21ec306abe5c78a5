// Reaches the worker's private channel through Node internals. `forge(message)` sends on the
// channel the worker's messages really take, `inject(message)` delivers a message to the worker
// side as if the host had sent it, and `runId` is the run in progress.
// - On the thread host every message a MessagePort receives passes through EventTarget's hybrid
//   dispatch: patching it captures the port and the run id of the first binding reply.
// - In a helper process the worker writes its messages to the host itself, as frames on
//   descriptor 3, and reads the host's from descriptor 5 (its port then carries only runs that
//   change the helper's cwd). The port is one of the worker's active handles; the run id comes
//   from a binding reply taken from descriptor 5 before the worker reads it (`stealFrame`).
// - A process tier's helper runs the program on its main thread, with no worker and no port: it
//   reads descriptor 5 through a socket whose read callback is within reach, so `inject` writes a
//   frame into that socket's buffer and calls it, as a read from the host would.
const { MessagePort: HijackedPort, isMainThread } = await import('node:worker_threads')
const { readSync: readFromInbox, writeSync: writeToChannel } = await import('node:fs')
const hybridProto = Object.getPrototypeOf(Object.getPrototypeOf(HijackedPort.prototype))
const hybridKey = Object.getOwnPropertySymbols(hybridProto).find((s) => String(s) === 'Symbol(nodejs.internal.kHybridDispatch)')
const hybridDispatch = hybridProto[hybridKey]
let port, runId
// The worker's event loop cannot read descriptor 5 while this loop runs on its thread.
const stealFrame = () => {
  const byte = Buffer.alloc(1)
  const bytes = []
  for (const until = Date.now() + 5000; Date.now() < until;) {
    try {
      if (readFromInbox(5, byte, 0, 1) !== 1) continue
      if (byte[0] === 10) return JSON.parse(Buffer.from(bytes).toString('utf8')).message
      bytes.push(byte[0])
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error
    }
  }
  throw new Error('no frame reached the inbox')
}
if ('__HOST__' === 'thread') {
  hybridProto[hybridKey] = function (...args) {
    // Only the runtime's channel carries replies; Node's own worker port carries other traffic.
    if (args[0]?.type === 'reply') {
      port ??= this
      runId ??= args[0].run
    }
    return hybridDispatch.apply(this, args)
  }
  await tools.echo(1)
  hybridProto[hybridKey] = hybridDispatch
} else {
  port = isMainThread ? undefined : process._getActiveHandles().find((handle) => handle instanceof HijackedPort)
  void tools.echo(1) // its reply is taken below, so this call never settles
  await Promise.resolve() // the call leaves in a microtask
  runId = stealFrame().run
}
// The descriptor is non-blocking: a large frame goes out in pieces, as the host reads.
const writeWhole = (bytes) => {
  for (let at = 0; at < bytes.length;) {
    try {
      at += writeToChannel(3, bytes, at)
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error
    }
  }
}
// The worker's messages cross as JSON text: posted as a string on the thread host, as the
// `message` of a frame line in a helper. `forgeText` sends a message's text as it is.
const forgeText = '__HOST__' === 'thread'
  ? (text) => HijackedPort.prototype.postMessage.call(port, text)
  : (text) => writeWhole(Buffer.from(`{"type":"message","message":${text}}\n`))
const forge = (message) => forgeText(JSON.stringify(message))
const inboxSocket = isMainThread ? process._getActiveHandles().find((handle) => handle?._handle?.fd === 5) : undefined
const symbolOf = (target, name) => Object.getOwnPropertySymbols(target).find((s) => String(s) === `Symbol(${name})`)
const inject = inboxSocket
  ? (message) => {
      const bytes = Buffer.from(`${JSON.stringify({ type: 'relay', message })}\n`)
      bytes.copy(inboxSocket[symbolOf(inboxSocket, 'kBuffer')])
      inboxSocket[symbolOf(inboxSocket, 'kBufferCb')](bytes.length)
    }
  : (message) => hybridDispatch.call(port, message, 'message', undefined)
const hang = () => new Promise(() => {})
