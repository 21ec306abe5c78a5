// attack: replaces MessagePort.prototype.postMessage and structuredClone before output and calls
// expect: ok
// value: "posted"
// output: ^through the real port\n$
const { MessagePort } = await import('node:worker_threads')
MessagePort.prototype.postMessage = function () { throw new Error('postMessage refused') }
globalThis.structuredClone = () => { throw new Error('structuredClone refused') }
console.log('through the real port')
/* completion */ await tools.echo('posted')
