// attack: process.abort, which would end the whole host process if it worked in a worker
// expect: exception
// message: not supported in workers
process.abort()
