// attack: the program writes its own bytes into the worker's inbox descriptor (5), which the host only ever writes to
// expect: protocol
// hosts: process, confined
const { writeSync } = await import('node:fs')
writeSync(5, '{"type":"relay","message":{"type":"run"}}\n')
await tools.delay(200)
/* completion */ 'unnoticed'
