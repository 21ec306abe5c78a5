// attack: posts thousands of fresh MessagePorts to the other side of the worker's private port, as a transfer list (the worker's ports: a process tier's helper runs the program on its main thread, with neither a worker nor its ports)
// hosts: thread, stream
// expect: protocol
// known-limit[thread]: ports transferred to the host stay entangled in the host's memory after the run and the runtime are gone (use isolation: 'process', where anything posted on that port is forgery)
// prelude: hijack
const { MessageChannel } = await import('node:worker_threads')
const ports = []
for (let i = 0; i < 2000; i++) {
  const { port1, port2 } = new MessageChannel()
  ports.push(port1, port2)
}
HijackedPort.prototype.postMessage.call(port, { type: 'output', run: runId, items: [], ports }, ports)
await hang()
