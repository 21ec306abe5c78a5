// attack: replaces console, the stream writers, queueMicrotask, setImmediate and TextDecoder
// expect: ok
// value: "quiet"
globalThis.console = { log() { throw new Error('console refused') } }
process.stdout.write = process.stderr.write = () => { throw new Error('write refused') }
globalThis.queueMicrotask = globalThis.setImmediate = () => { throw new Error('scheduling refused') }
TextDecoder.prototype.decode = () => { throw new Error('decode refused') }
/* completion */ await tools.echo('quiet')
