// attack: scans the memory of its own process and of its parent through /proc/<pid>/mem for the host's secret
// expect: ok
// known-limit[thread]: a worker thread shares the host's address space: /proc/self/mem reads and rewrites the host's and every other environment's memory
// timeout: 30000
/* Reports what follows every occurrence of the secret's prefix; the runner checks that the
   secret itself appears nowhere in the result. The prefix is assembled at run time, so this
   program's own text is not what it finds. */
const fs = await import('node:fs')
const prefix = Buffer.from(['ptc', 'corpus', 'secret', ''].join('-'))
const found = new Set()
let scanned = 0
for (const pid of ['self', String(process.ppid)]) {
  let maps, fd
  try {
    maps = fs.readFileSync(`/proc/${pid}/maps`, 'utf8')
    fd = fs.openSync(`/proc/${pid}/mem`, 'r')
  } catch {
    continue
  }
  const chunk = Buffer.alloc(1 << 20)
  for (const line of maps.split('\n')) {
    const [range, perms, , , , name] = line.split(/\s+/)
    if (!range || !perms.startsWith('r') || name === '[vvar]' || name === '[vsyscall]') continue
    const [start, end] = range.split('-').map((hex) => parseInt(hex, 16))
    for (let at = start; at < end && scanned < 2 ** 31; at += chunk.length) {
      let read
      try {
        read = fs.readSync(fd, chunk, 0, Math.min(chunk.length, end - at), at)
      } catch {
        break
      }
      scanned += read
      for (let index = chunk.indexOf(prefix); index !== -1 && index < read; index = chunk.indexOf(prefix, index + 1)) {
        found.add(chunk.subarray(index, index + prefix.length + 12).toString('latin1'))
      }
    }
  }
  fs.closeSync(fd)
}
/* completion */ [...found].slice(0, 50)
