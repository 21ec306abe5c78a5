// attack: grows one Map until its backing store cannot be reallocated under the heap limit
// expect: worker-exit
// known-limit[thread]: V8 aborts the whole process when a large allocation fails under a worker's heap limit (nodejs/node#47224)
// timeout: 15000
/* On the thread host V8 aborts the whole host process here: resourceLimits cannot stop a
   failed large allocation (nodejs/node#47224). Only a process boundary survives it. */
const map = new Map()
for (let i = 0; ; i++) map.set(i, { i, text: 'entry ' + i })
