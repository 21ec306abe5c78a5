// attack: posts a message of unknown type on Node's internal worker port (kept by the stdio streams), which Node's host side answers with an uncaught internal assertion (the worker's ports: a process tier's helper runs the program on its main thread, with neither a worker nor its ports)
// hosts: thread, stream
// expect: protocol
const { MessagePort } = await import('node:worker_threads')
const internal = []
for (const stream of [process.stdin, process.stdout, process.stderr]) {
  for (const key of Object.getOwnPropertySymbols(stream)) if (stream[key] instanceof MessagePort) internal.push(stream[key])
}
for (const port of new Set(internal)) MessagePort.prototype.postMessage.call(port, { type: 'output', run: 0, items: ['into the internals'] })
await new Promise((resolve) => setTimeout(resolve, 1000))
/* completion */ `posted to ${internal.length} internal port reference(s)`
