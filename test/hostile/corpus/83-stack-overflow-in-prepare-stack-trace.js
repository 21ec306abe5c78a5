// attack: a prepareStackTrace that recurses through stack capture, then an error is thrown
// expect: exception
Error.prepareStackTrace = () => new Error('again').stack
throw new Error('original')
