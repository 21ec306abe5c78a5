// attack: unbounded async recursion
// expect: exception
// message: Maximum call stack size exceeded
const dive = async (n) => (await dive(n + 1)) + 1
await dive(0)
