// attack: replaces the array iterator, then throws: the runtime's own stack rendering iterates arrays
// expect: exception
// message: ^Error: after the iterator\n    at program:\d+:\d+$
Array.prototype[Symbol.iterator] = function* () { yield 'forged' }
throw new Error('after the iterator')
