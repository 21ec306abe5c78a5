// attack: floods the worker's private port with messages faster than the other side can take them (the worker's ports: a process tier's helper runs the program on its main thread, with neither a worker nor its ports)
// hosts: thread, stream
// expect: protocol
// known-limit[thread]: a MessagePort has no backpressure: what a worker thread posts queues in the host's own memory faster than the host handles it, growing the host and delaying its deadlines (use isolation: 'process', where anything posted on that port is forgery)
// prelude: hijack
for (let round = 0; round < 100; round++) {
  for (let i = 0; i < 1000; i++) HijackedPort.prototype.postMessage.call(port, { type: 'output', run: runId, items: [] })
  await null
}
await hang()
