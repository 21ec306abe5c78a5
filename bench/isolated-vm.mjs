/**
 * The isolated-vm peer, run as a child process started with `--no-node-snapshot` (isolated-vm's
 * requirement on Node 20, which slows every other Worker and child process, so the rest of the
 * bench must not pay it). The parent sends one request per measurement over IPC and
 * interleaves them with its own rounds. isolated-vm is optional: it compiles from source on
 * Node 20, so it is not a devDependency; install it with `npm i -D isolated-vm@5` or point
 * NODE_PATH at a node_modules that has it.
 */
import { createRequire } from 'node:module'
import { stampingEcho } from './programs.mjs'
import { now } from './stats.mjs'

const require = createRequire(import.meta.url)
let ivm
try {
  ivm = require('isolated-vm')
  const { version } = require('isolated-vm/package.json')
  process.send({ available: true, version })
} catch (error) {
  const missing = error.code === 'MODULE_NOT_FOUND'
  process.send({
    available: false,
    reason: missing ? 'not installed (npm i -D isolated-vm to include it)' : `failed to load: ${error.message.split('\n')[0]}`,
  })
  process.disconnect()
}

const TOOLS = `const tools = { echo: (x) => __echo.apply(undefined, [x], { arguments: { copy: true }, result: { promise: true, copy: true } }) };`

/** A new isolate and context, the program, and disposal; the value comes back copied. */
async function runInNewIsolate(program, echo) {
  const isolate = new ivm.Isolate({ memoryLimit: 64 })
  try {
    const context = await isolate.createContext()
    await context.global.set('__echo', new ivm.Reference(echo))
    return await context.eval(`${TOOLS}\n(async () => {\n${program}\n})()`, { promise: true, copy: true })
  } finally {
    isolate.dispose()
  }
}

const echo = async (value) => value

const handlers = {
  async latency({ program }) {
    const start = now()
    await runInNewIsolate(program, echo)
    return { ms: now() - start }
  },
  async bindings({ program, n, width }) {
    const recorder = stampingEcho(n)
    await runInNewIsolate(program, recorder.echo)
    return { gaps: recorder.gaps(width) }
  },
}

if (ivm) {
  process.on('message', async (message) => {
    try {
      process.send(await handlers[message.op](message))
    } catch (error) {
      process.send({ error: error.message })
    }
  })
}
