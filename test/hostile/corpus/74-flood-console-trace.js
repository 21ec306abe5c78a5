// attack: console.trace from deep recursion, each trace a long stack
// expect: output-limit
const dive = (n) => (n === 0 ? console.trace('deep') : dive(n - 1))
for (;;) dive(200)
