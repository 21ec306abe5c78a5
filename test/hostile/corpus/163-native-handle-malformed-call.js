// attack: calls a native handle's method with arguments its C++ side only asserts on, which aborts the whole process
// expect: worker-exit
// message: exited with code 134|was killed by SIGABRT
// known-limit[thread]: a native assertion aborts the process the worker thread shares with the host; every native handle reachable from JavaScript has such methods (use isolation: 'process')
const { spawn } = await import('node:child_process')
const child = spawn('true')
child._handle?.spawn({ file: 1 })
/* completion */ 'survived'
