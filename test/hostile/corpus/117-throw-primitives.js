// attack: throws a symbol (which cannot be converted to a string implicitly)
// expect: exception
// message: Symbol\(not a string\)
throw Symbol('not a string')
