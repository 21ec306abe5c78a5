// attack: stores files in every private tmpfs it can write (/tmp, /dev/shm, its scratch directory), each up to 400 MB, far past the memory budget (256 MB here), and keeps them
// expect: worker-exit
// message: maxMemoryMb
// hosts: confined
// timeout: 20000
/* Each tmpfs is bounded by the kernel (bubblewrap's --size, the budget each), and their sum is
   sampled by the host with the rest of the environment's memory: either way the files cannot
   hold several budgets at once. The program holds what it stored until it is stopped. */
const fs = await import('node:fs')
const chunk = Buffer.alloc(16 * 2 ** 20, 1)
const stored = {}
for (const place of ['/tmp', '/dev/shm', process.cwd()]) {
  stored[place] = 0
  try {
    for (let i = 0; i < 25; i++) {
      fs.writeFileSync(`${place}/fill-${i}`, chunk)
      stored[place] += 16
    }
  } catch (error) {
    stored[place] = `${stored[place]} MB, then ${error.code}`
  }
}
console.log(JSON.stringify(stored))
await tools.delay(1000)
/* completion */ stored
