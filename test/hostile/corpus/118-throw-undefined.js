// attack: rejects with undefined from inside a promise chain
// expect: exception
// message: undefined
await Promise.resolve().then(() => { throw undefined })
