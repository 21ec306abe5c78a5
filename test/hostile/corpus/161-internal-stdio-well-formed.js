// attack: posts a well-formed stdio payload on Node's internal worker port, which Node's host side writes to the process's own stdout
// expect: protocol
// known-bug[thread]: the host passes a well-formed stdioPayload on to its own stdout; Node's writable machinery in the worker sends genuine ones too, so they cannot simply all be refused
// known-bug[process]: the helper passes a well-formed stdioPayload on to its stdout, which the host then reports as the run's output
// known-bug[confined]: the helper passes a well-formed stdioPayload on to its stdout, which the host then reports as the run's output
const { MessagePort } = await import('node:worker_threads')
const key = Object.getOwnPropertySymbols(process.stdout).find((symbol) => process.stdout[symbol] instanceof MessagePort)
const internal = key && process.stdout[key]
if (internal) {
  MessagePort.prototype.postMessage.call(internal, { type: 'stdioPayload', stream: 'stdout', chunks: [{ chunk: Buffer.from('written past the capture\n'), encoding: 'buffer' }] })
}
await new Promise((resolve) => setTimeout(resolve, 500))
/* completion */ internal ? 'posted' : 'no internal port'
