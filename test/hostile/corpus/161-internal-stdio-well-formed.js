// attack: posts a well-formed stdio payload on Node's internal worker port, which Node's host side writes to the process's own stdout (the worker's ports: a process tier's helper runs the program on its main thread, with neither a worker nor its ports)
// hosts: thread, stream
// expect: ok
// value: "posted"
// output: written past the capture
// known-limit[thread]: Node's host side of a worker writes its stdio messages to the process's own stdout, which a worker thread shares with the host (like descriptor 1, corpus 75)
/* On a helper the payload lands on the helper's stdout, which the host reads as the run's output
   and counts against maxOutputBytes: it is the program's output, reported as such. */
const { MessagePort } = await import('node:worker_threads')
const key = Object.getOwnPropertySymbols(process.stdout).find((symbol) => process.stdout[symbol] instanceof MessagePort)
const internal = key && process.stdout[key]
if (internal) {
  MessagePort.prototype.postMessage.call(internal, { type: 'stdioPayload', stream: 'stdout', chunks: [{ chunk: Buffer.from('written past the capture\n'), encoding: 'buffer' }] })
}
await new Promise((resolve) => setTimeout(resolve, 500))
/* completion */ internal ? 'posted' : 'no internal port'
