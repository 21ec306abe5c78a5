// attack: the completion has a getter that returns a different value on each read; it must be read exactly once
// expect: ok
// value: {"value": "first"}
let reads = 0
/* completion */ ({ get value() { return reads++ === 0 ? 'first' : () => 'second' } })
