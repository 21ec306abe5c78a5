// attack: allocates arrays until the heap limit is reached
// expect: worker-exit
// message: out of memory
// timeout: 15000
const keep = []
for (;;) keep.push(new Array(1e6).fill(keep.length))
