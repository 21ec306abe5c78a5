// attack: raises its heap cap through V8's process-wide flags (a process tier's helper takes its cap from `--max-old-space-size` on its command line, and its own code sets V8's flags back as it loads), then allocates without end
// expect: worker-exit
// message: out of memory|memory budget
// hosts: process,confined,stream
// timeout: 15000
const v8 = await import('node:v8')
for (const flag of ['--max-old-space-size=8192', '--max-heap-size=8192', '--max-semi-space-size=512', '--no-expose-gc', '--huge-max-old-generation-size']) {
  try { v8.setFlagsFromString(flag) } catch { /* refused */ }
}
const keep = []
for (;;) keep.push(new Array(1e6).fill(keep.length))
