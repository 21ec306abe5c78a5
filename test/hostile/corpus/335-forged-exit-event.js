// attack: emits the process's 'exit' event itself, without exiting, then keeps running: a helper that reports its exit from that event fails the run as an exit and marks a live process dead (the stream host's helper keeps a worker, whose exit its own thread reports: there the case runs)
// expect: ok
// value: "alive"
// hosts: process,confined,stream
// known-bug[process]: the helper reports an exit from process.on('exit'), which the program can emit itself: the run fails "the program ended its process (exit code 0) before completing" while the process runs on
// known-bug[confined]: the helper reports an exit from process.on('exit'), which the program can emit itself: the run fails "the program ended its process (exit code 0) before completing" while the process runs on
// known-bug[stream]
process.emit('exit', 0)
await new Promise((resolve) => setTimeout(resolve, 300))
/* completion */ 'alive'
