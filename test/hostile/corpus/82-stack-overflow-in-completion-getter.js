// attack: the completion has a getter that recurses until the stack overflows during validation
// expect: invalid-output
/* completion */ ({ get self() { return this.self } })
