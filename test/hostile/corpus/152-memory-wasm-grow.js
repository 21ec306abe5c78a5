// attack: grows a WebAssembly.Memory to 4 GB, touching every page
// expect: worker-exit
// message: memory budget of \d+ MiB \(maxMemoryMb\)|ran out of memory
// timeout: 20000
// alone[thread]: where a sample cannot see this memory (Node 20; WebAssembly on Node 26) the RSS backstop stops every running program of the process
const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536 })
while (memory.buffer.byteLength < 2 ** 32) {
  memory.grow(1024)
  new Uint8Array(memory.buffer).fill(1, memory.buffer.byteLength - 64 * 2 ** 20)
}
/* completion */ memory.buffer.byteLength
