// attack: keeps 16 Buffer.alloc(256 MB), outside the V8 heap its limit caps
// expect: worker-exit
// message: memory budget of \d+ MiB \(maxMemoryMb\)|ran out of memory
// timeout: 20000
// alone[thread]: where a sample cannot see this memory (Node 20; WebAssembly on Node 26) the RSS backstop stops every running program of the process
const kept = []
for (let i = 0; i < 16; i++) kept.push(Buffer.alloc(256 * 2 ** 20, 1))
/* completion */ kept.length
