// attack: a completion that contains itself
// expect: invalid-output
const loop = { name: 'loop', list: [] }
loop.list.push(loop)
/* completion */ loop
