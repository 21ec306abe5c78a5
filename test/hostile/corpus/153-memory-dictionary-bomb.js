// attack: grows a plain object used as a dictionary until its backing store cannot be reallocated under the heap limit
// expect: worker-exit
// known-limit[thread]: V8 aborts the whole process when a large allocation fails under a worker's heap limit (nodejs/node#47224)
// timeout: 30000
const dictionary = {}
for (let i = 0; ; i++) dictionary['k' + i] = i
