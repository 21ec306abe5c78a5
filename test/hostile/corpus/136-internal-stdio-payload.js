// attack: posts well-typed but malformed stdio payloads on Node's internal worker port, which would make the host's stdio stream emit an unhandled error (the worker's ports: a process tier's helper runs the program on its main thread, with neither a worker nor its ports)
// hosts: thread, stream
// expect: protocol
const { MessagePort } = await import('node:worker_threads')
const key = Object.getOwnPropertySymbols(process.stderr).find((symbol) => process.stderr[symbol] instanceof MessagePort)
const internal = key && process.stderr[key]
if (internal) {
  MessagePort.prototype.postMessage.call(internal, { type: 'stdioPayload', stream: 'stdout', chunks: [{ chunk: { not: 'bytes' }, encoding: 'utf8' }] })
  MessagePort.prototype.postMessage.call(internal, { type: 'stdioPayload', stream: 'stdin', chunks: [{ chunk: 'x', encoding: 'no-such-encoding' }] })
}
await new Promise((resolve) => setTimeout(resolve, 1000))
/* completion */ internal ? 'posted' : 'no internal port'
