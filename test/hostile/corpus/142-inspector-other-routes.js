// attack: reaches the inspector by routes other than import: module.createRequire, process.getBuiltinModule, process.binding, inspector/promises
// expect: ok
// expect[thread]: exception
// message[thread]: isolation: 'process'
// value: ["function", "function", "function", "function"]
const { createRequire } = await import('node:module')
const reached = [
  typeof createRequire('/')('node:inspector').Session,
  typeof process.getBuiltinModule('inspector').Session,
  typeof process.binding('inspector').open,
  typeof (await import('node:inspector/promises')).Session,
]
/* completion */ reached
