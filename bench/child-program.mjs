/**
 * The child-process-per-run peer: runs the program given as its argument, with `tools` calls
 * answered by the parent over IPC, sends the completion value and exits.
 */
const AsyncFunction = (async () => {}).constructor
const waiting = new Map()
let next = 0
const tools = {
  echo: (value) =>
    new Promise((resolve) => {
      waiting.set(++next, resolve)
      process.send({ call: next, value })
    }),
}
process.on('message', (message) => {
  waiting.get(message.reply)(message.value)
  waiting.delete(message.reply)
})
const done = await new AsyncFunction('tools', process.argv[2])(tools)
process.send({ done }, () => process.disconnect())
