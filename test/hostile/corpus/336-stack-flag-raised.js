// attack: raises V8's stack limit through its process-wide flags (a process tier's helper takes its stack from `--stack-size` on its command line, which its own code set back), then recurses without end: a stack limit past the real stack would crash the process instead of throwing
// expect: ok
// value: "RangeError"
// hosts: process,confined,stream
const v8 = await import('node:v8')
v8.setFlagsFromString('--stack-size=65500')
const vm = await import('node:vm')
const recurse = () => recurse()
let caught
try { recurse() } catch (error) { caught = error.constructor.name }
try { vm.runInNewContext('const r = () => r(); r()') } catch (error) { caught += error.name === caught ? '' : ` ${error.name}` }
/* completion */ caught
