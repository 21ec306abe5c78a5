// Reaches the worker's private channel through Node internals: every message a MessagePort
// receives passes through EventTarget's hybrid dispatch, so patching it captures the port and
// the run id of the first binding reply. `forge(message)` then sends on the channel the worker's
// messages really take, and `inject(message)` delivers a message to the worker side as if the
// host had sent it. In a helper process the worker writes its messages to the host itself, as
// frames on descriptor 3 (the port carries only the host's messages to it): forge writes there.
const { MessagePort: HijackedPort } = await import('node:worker_threads')
const { writeSync: writeToChannel } = await import('node:fs')
const hybridProto = Object.getPrototypeOf(Object.getPrototypeOf(HijackedPort.prototype))
const hybridKey = Object.getOwnPropertySymbols(hybridProto).find((s) => String(s) === 'Symbol(nodejs.internal.kHybridDispatch)')
const hybridDispatch = hybridProto[hybridKey]
let port, runId
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
const forge = '__HOST__' === 'thread'
  ? (message) => HijackedPort.prototype.postMessage.call(port, message)
  : (message) => writeWhole(Buffer.from(`${JSON.stringify({ type: 'message', message })}\n`))
const inject = (message) => hybridDispatch.call(port, message, 'message', undefined)
const hang = () => new Promise(() => {})
