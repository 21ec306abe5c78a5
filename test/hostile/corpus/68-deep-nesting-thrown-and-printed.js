// attack: prints and then throws a value nested 100 000 levels deep
// expect: exception
// output: ^\{ v: \{ v: \{ v: \[Object\] \} \} \}\n$
let value = null
for (let i = 0; i < 100000; i++) value = { v: value }
console.log(value)
throw value
