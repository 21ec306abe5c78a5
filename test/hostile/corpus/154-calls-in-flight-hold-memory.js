// attack: 16 tool calls in flight at once, each passing the same 20 MB string to a tool that never answers, so the host holds every copy
// expect: exception
// message: [Bb]udget|[Ll]imit|bytes|out of memory
// timeout: 20000
/* Over the budget, the call rejects inside the program with a message naming the limit (or the
   worker cannot even copy that many arguments out of its capped heap). */
const big = 'x'.repeat(20 * 2 ** 20)
await Promise.all(Array.from({ length: 16 }, () => tools.hang(big)))
