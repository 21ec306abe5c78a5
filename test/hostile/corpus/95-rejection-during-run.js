// attack: an unhandled rejection while the program is still waiting
// expect: exception
// message: ^Unhandled promise rejection: Error: unhandled
Promise.reject(new Error('unhandled'))
await new Promise((resolve) => setTimeout(resolve, 2000))
