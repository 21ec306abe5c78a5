// attack: unbounded recursion
// expect: exception
// message: Maximum call stack size exceeded
const recurse = (n) => recurse(n + 1) + 1
recurse(0)
