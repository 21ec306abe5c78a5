// attack: blocks the worker thread in Atomics.wait with no waker
// expect: timeout
// timeout: 500
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)
