// attack: keeps 16 Buffer.alloc(256 MB), outside the V8 heap its limit caps
// expect: worker-exit
// message: memory budget of \d+ MiB \(maxMemoryMb\)|ran out of memory
// timeout: 20000
// known-bug[thread]: memory outside the V8 heap is not counted against a budget on the thread host (use isolation: 'process')
const kept = []
for (let i = 0; i < 16; i++) kept.push(Buffer.alloc(256 * 2 ** 20, 1))
/* completion */ kept.length
