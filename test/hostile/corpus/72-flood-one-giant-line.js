// attack: a single 2 MiB console.log line
// expect: output-limit
// output: ^z+$
console.log('z'.repeat(2 << 20))
