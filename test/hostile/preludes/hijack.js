// Reaches the worker's private channel through Node internals: every message a MessagePort
// receives passes through EventTarget's hybrid dispatch, so patching it captures the port and
// the run id of the first binding reply. `forge(message)` then posts on the real channel, and
// `inject(message)` delivers a message to the worker side as if the host had sent it.
const { MessagePort: HijackedPort } = await import('node:worker_threads')
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
const forge = (message) => HijackedPort.prototype.postMessage.call(port, message)
const inject = (message) => hybridDispatch.call(port, message, 'message', undefined)
const hang = () => new Promise(() => {})
