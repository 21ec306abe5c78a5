// attack: a completion nested 20 000 levels deep (fits the cap; must not overflow any stack)
// expect: ok
// value-depth: 20000
// timeout: 15000
let value = 'bottom'
for (let i = 0; i < 20000; i++) value = [value]
/* completion */ value
