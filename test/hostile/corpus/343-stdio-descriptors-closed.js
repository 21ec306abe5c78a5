// attack: destroys the process's stdout and stderr streams and closes descriptors 0, 1 and 2 of the process it now owns (a process tier's helper runs the program on its main thread, whose stdio are the host's pipes), then prints and returns: its output and value must still reach the host, which must not take the closed pipes for the helper's end
// expect: ok
// value: "returned"
// output: still printed
// hosts: process,confined,stream
const { closeSync } = await import('node:fs')
for (const stream of [process.stdout, process.stderr, process.stdin]) {
  try { stream.destroy() } catch { /* refused */ }
}
for (const fd of [0, 1, 2]) {
  try { closeSync(fd) } catch { /* already closed */ }
}
await new Promise((resolve) => setTimeout(resolve, 300))
console.log('still printed')
/* completion */ 'returned'
