// attack: grows memory from an endless promise chain instead of a loop
// expect: worker-exit
// message: out of memory
// timeout: 15000
const keep = []
const grow = () => { keep.push(new Array(1e5).fill(keep.length)); return Promise.resolve().then(grow) }
await grow()
