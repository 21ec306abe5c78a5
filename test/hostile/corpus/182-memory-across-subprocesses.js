// attack: four subprocesses each allocate 120 MB, under the per-process cap, and keep it: together they hold about twice the memory budget (256 MB here)
// expect: worker-exit
// message: maxMemoryMb
// hosts: process, confined
// timeout: 20000
const { spawn } = await import('node:child_process')
const hold = 'const keep = Buffer.alloc(120 * 2 ** 20, 1); process.stdout.write("held"); setInterval(() => keep[0]++, 1000)'
const children = Array.from({ length: 4 }, () => spawn(process.execPath, ['-e', hold, '__SLEEP_SHORT__'], { stdio: ['ignore', 'pipe', 'ignore'] }))
await Promise.all(children.map((child) => new Promise((resolve) => child.stdout.once('data', resolve))))
await tools.delay(1000)
/* completion */ 'held'
