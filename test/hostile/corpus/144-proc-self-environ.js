// attack: reads the environment block of its own process and of its parent through /proc, where process.env does not reach
// expect: ok
// value: []
// known-limit[thread]: /proc/self/environ is the host's own environment block, which a worker thread shares
/* The runner plants PTC_CORPUS_SECRET in the host's environment before any runtime starts: a
   helper process must not inherit it. */
const fs = await import('node:fs')
const names = []
for (const pid of ['self', String(process.ppid)]) {
  try {
    for (const entry of fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0')) if (entry.startsWith('PTC_CORPUS_SECRET=')) names.push(`${pid}: ${entry}`)
  } catch {}
}
/* completion */ names
