// attack: throws an Error subclass with a self-referencing cause getter and a constructor getter that throws
// expect: exception
// message: sneaky message
class Sneaky extends Error {
  get cause() { return this }
}
Object.defineProperty(Sneaky.prototype, 'constructor', { get() { throw new Error('constructor getter') } })
throw new Sneaky('sneaky message')
