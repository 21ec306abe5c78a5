// attack: throws a real Error whose name, message and stack getters all throw
// expect: exception
const error = new Error('hidden')
for (const key of ['name', 'message', 'stack']) Object.defineProperty(error, key, { get() { throw new Error(`${key} getter`) } })
throw error
