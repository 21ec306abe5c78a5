// attack: the completion has a getter that throws when read
// expect: invalid-output
/* completion */ ({ ok: 1, get boom() { throw new Error('getter exploded') } })
