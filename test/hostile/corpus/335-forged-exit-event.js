// attack: emits the process's 'exit' event itself, without exiting, then keeps running: a helper that reports its exit from that event must not leave a live process the host believes dead; on a helper's main thread the process then ends (its exit frame is always true), where a worker's own thread reports its exit and the program runs on
// expect: ok
// expect[process]: worker-exit
// expect[confined]: worker-exit
// expect[stream]: ok
// message[process]: ended its process \(exit code 0\)
// message[confined]: ended its process \(exit code 0\)
// value: "alive"
// hosts: process,confined,stream
process.emit('exit', 0)
await new Promise((resolve) => setTimeout(resolve, 300))
/* completion */ 'alive'
