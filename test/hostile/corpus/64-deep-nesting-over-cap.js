// attack: a completion nested 40 000 levels deep, over the output cap
// expect: output-limit
// timeout: 15000
let value = null
for (let i = 0; i < 40000; i++) value = { v: value }
/* completion */ value
