// attack: floods output from an interval timer while the program waits forever
// expect: output-limit
setInterval(() => { for (let i = 0; i < 100; i++) console.error('tick', i) }, 0)
await new Promise(() => {})
