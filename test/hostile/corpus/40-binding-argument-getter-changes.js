// attack: a binding argument whose getter answers differently on every read; it must be read exactly once
// expect: ok
// value: {"value": "checked"}
let reads = 0
/* completion */ await tools.echo({ get value() { return reads++ === 0 ? 'checked' : { evil: () => 1 } } })
