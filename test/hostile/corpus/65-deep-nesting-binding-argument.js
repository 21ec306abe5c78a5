// attack: a binding argument nested 10 000 levels deep, echoed back by the host
// expect: ok
// value: 10000
// timeout: 15000
let value = 0
for (let i = 0; i < 10000; i++) value = [value]
let echoed = await tools.echo(value)
let depth = 0
while (Array.isArray(echoed)) { echoed = echoed[0]; depth++ }
/* completion */ depth
