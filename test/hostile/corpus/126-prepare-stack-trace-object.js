// attack: prepareStackTrace returns an object whose conversion throws, then an error is thrown
// expect: exception
// message: ^Error: original
Error.prepareStackTrace = () => ({ toString() { throw new Error('stack toString') } })
Error.stackTraceLimit = Infinity
throw new Error('original')
