// attack: asks Node to write heap snapshots near the heap limit, whose callback raises the limit each time, then allocates without end; the kernel's cap (or the namespace's budget, which counts the snapshots written to temporary files) must still end it
// expect: worker-exit
// message: out of memory|memory budget
// hosts: confined,stream
// timeout: 20000
const v8 = await import('node:v8')
v8.setHeapSnapshotNearHeapLimit(1000)
const keep = []
for (;;) keep.push(new Array(1e6).fill(keep.length))
