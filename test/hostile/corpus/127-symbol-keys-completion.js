// attack: a completion with symbol keys, non-enumerable keys and a class instance inside
// expect: invalid-output
/* completion */ ({ visible: 1, [Symbol('hidden')]: 2, when: new Date(0) })
