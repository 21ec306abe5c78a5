// attack: well-formed output posted on the worker's private port, as JSON text as the worker posts it (in a helper process that port carries only the host's messages to the worker, so anything posted on it was posted by the program) (the worker's ports: a process tier's helper runs the program on its main thread, with neither a worker nor its ports)
// hosts: thread, stream
// expect: ok
// expect[process]: protocol
// expect[confined]: protocol
// prelude: hijack
// value: "after"
HijackedPort.prototype.postMessage.call(port, JSON.stringify({ type: 'output', run: runId, items: ['forged line\n'] }))
await tools.delay(100)
/* completion */ 'after'
