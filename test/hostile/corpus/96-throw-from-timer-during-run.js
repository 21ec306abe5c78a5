// attack: a timer throws while the program is still waiting
// expect: exception
// message: ^Error: from a timer
setTimeout(() => { throw new Error('from a timer') }, 0)
await new Promise((resolve) => setTimeout(resolve, 2000))
