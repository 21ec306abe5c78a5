// attack: a completion with 20 000 keys, over the output cap
// expect: output-limit
// timeout: 15000
const wide = {}
for (let i = 0; i < 20000; i++) wide['key number ' + i] = 'value ' + i
/* completion */ wide
