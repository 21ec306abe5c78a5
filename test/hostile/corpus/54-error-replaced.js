// attack: replaces Error, its stack hooks and toString, then fails with a native TypeError
// expect: exception
// message: TypeError
Error.prepareStackTrace = () => { throw new Error('prepareStackTrace refused') }
Error.captureStackTrace = () => { throw new Error('captureStackTrace refused') }
Error.prototype.toString = () => { throw new Error('toString refused') }
globalThis.Error = function () { throw new Error('Error is gone') }
globalThis.TypeError = globalThis.Error
null.property
