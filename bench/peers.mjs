/**
 * The alternatives a user could pick instead of ptc-runtime, each running the same program
 * with the same `tools.echo` binding: node:vm, quickjs-emscripten, a bare Worker (the floor our
 * thread host builds on), a child process per run, and isolated-vm (in its own child process,
 * because it needs `node --no-node-snapshot`, which would slow every other measurement).
 */
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import vm from 'node:vm'
import { MessageChannel, Worker } from 'node:worker_threads'
import { now } from './stats.mjs'

const here = (file) => fileURLToPath(new URL(file, import.meta.url))

// ---------------------------------------------------------------------------------------------
// node:vm: a new context per run. Values cross with structuredClone both ways, which is the
// least a host must do to keep the program from holding host objects (it is still no boundary).

export async function vmRun(program, echo) {
  const tools = { echo: (value) => echo(structuredClone(value)).then(structuredClone) }
  const context = vm.createContext({ tools })
  const script = new vm.Script(`(async () => {\n${program}\n})()`)
  return structuredClone(await script.runInContext(context))
}

// ---------------------------------------------------------------------------------------------
// quickjs-emscripten (sync WASM variant, one module for the process): a new runtime + context
// per run. A binding is a host function returning a QuickJS promise settled from the host.

let quickjs
export async function loadQuickJS() {
  try {
    const { getQuickJS } = await import('quickjs-emscripten')
    const module = await getQuickJS()
    const version = (await import('quickjs-emscripten/package.json', { with: { type: 'json' } })).default.version
    quickjs = module
    return { available: true, version }
  } catch (error) {
    return { available: false, reason: `not installed or failed to load (${error.message}); npm i -D quickjs-emscripten` }
  }
}

export async function quickjsRun(program, echo) {
  const runtime = quickjs.newRuntime()
  const context = runtime.newContext()
  const pending = new Set()
  try {
    const hostEcho = context.newFunction('__echo', (argument) => {
      const deferred = context.newPromise()
      pending.add(deferred)
      echo(JSON.parse(context.getString(argument))).then((value) => {
        if (!deferred.alive) return
        context.newString(JSON.stringify(value)).consume((handle) => deferred.resolve(handle))
        pending.delete(deferred)
        deferred.dispose()
        runtime.executePendingJobs()
      })
      return deferred.handle
    })
    context.setProp(context.global, '__echo', hostEcho)
    hostEcho.dispose()
    const source = [
      'const tools = { echo: async (x) => JSON.parse(await __echo(JSON.stringify(x))) };',
      `(async () => {\n${program}\n})()`,
    ].join('\n')
    const promise = context.unwrapResult(context.evalCode(source))
    const settled = context.resolvePromise(promise)
    promise.dispose()
    runtime.executePendingJobs()
    const result = context.unwrapResult(await settled)
    const value = context.dump(result)
    result.dispose()
    return value
  } finally {
    for (const deferred of pending) deferred.dispose()
    context.dispose()
    runtime.dispose()
  }
}

// ---------------------------------------------------------------------------------------------
// A bare Worker: the program arrives on the worker's parentPort, bindings are a raw request and
// reply on the same port. No harness, no validation: the floor under our thread host.

const BARE_WORKER = `
const { parentPort } = require('node:worker_threads')
const AsyncFunction = (async () => {}).constructor
const waiting = new Map()
let next = 0
const tools = { echo: (value) => new Promise((resolve) => { waiting.set(++next, resolve); parentPort.postMessage({ call: next, value }) }) }
parentPort.on('message', async (message) => {
  if (message.reply !== undefined) return waiting.get(message.reply)(message.value), waiting.delete(message.reply)
  parentPort.postMessage({ done: await new AsyncFunction('tools', message.program)(tools) })
})
parentPort.postMessage({ ready: true })
`

/** A pre-spawned, never-used Worker that resolves once it has booted. */
export function spawnBareWorker(echo) {
  const worker = new Worker(BARE_WORKER, { eval: true, env: {} })
  const exited = new Promise((resolve) => worker.once('exit', resolve))
  let onDone
  worker.on('message', (message) => {
    if (message.call !== undefined) echo(message.value).then((value) => worker.postMessage({ reply: message.call, value }))
    else if (message.done !== undefined) onDone(message.done)
    else if (message.ready) onDone()
  })
  const ready = new Promise((resolve) => (onDone = resolve))
  return ready.then(() => ({
    /** post → result, then terminate → exit, in ms. */
    async run(program) {
      const start = now()
      const done = new Promise((resolve) => (onDone = resolve))
      worker.postMessage({ program })
      await done
      const result = now()
      await worker.terminate()
      await exited
      return { result: result - start, exit: now() - start }
    },
    close: () => worker.terminate(),
  }))
}

/** The binding floor: a worker awaiting `n` raw MessagePort round trips, `width` at a time. */
export async function messagePortLoop(n, width, echo) {
  const { port1, port2 } = new MessageChannel()
  const source = `
const { workerData: { port, n, width } } = require('node:worker_threads')
const waiting = new Map()
port.on('message', (message) => { waiting.get(message.id)(message.value); waiting.delete(message.id) })
const call = (id, value) => new Promise((resolve) => { waiting.set(id, resolve); port.postMessage({ id, value }) })
;(async () => {
  for (let b = 0; b < n / width; b++) await Promise.all(Array.from({ length: width }, (_, i) => call(b * width + i, { i })))
  port.postMessage({ done: true })
  port.close()
})()
`
  const worker = new Worker(source, { eval: true, env: {}, workerData: { port: port2, n, width }, transferList: [port2] })
  const finished = new Promise((resolve) => {
    port1.on('message', (message) => {
      if (message.done) return resolve()
      echo(message.value).then((value) => port1.postMessage({ id: message.id, value }))
    })
  })
  await finished
  port1.close()
  await worker.terminate()
}

// ---------------------------------------------------------------------------------------------
// A child process per run: fork, program over IPC, bindings over IPC, until the child exits.

export function childProcessRun(program, echo) {
  const start = now()
  const child = fork(here('./child-program.mjs'), [program], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: {} })
  return new Promise((resolve, reject) => {
    let value
    child.on('message', (message) => {
      if (message.call !== undefined) echo(message.value).then((reply) => child.send({ reply: message.call, value: reply }))
      else if ('done' in message) value = message.done
    })
    child.on('error', reject)
    child.on('exit', () => (value === undefined ? reject(new Error('child exited without a result')) : resolve(now() - start)))
  })
}

// ---------------------------------------------------------------------------------------------
// isolated-vm, served by bench/isolated-vm.mjs in a child started with --no-node-snapshot. Each
// request runs one measurement there and returns its samples; rounds interleave with ours.

export function startIsolatedVm() {
  let child
  try {
    child = fork(here('./isolated-vm.mjs'), [], { execArgv: ['--no-node-snapshot'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  } catch (error) {
    return Promise.resolve({ available: false, reason: error.message })
  }
  const replies = []
  child.on('message', (message) => replies.shift()?.(message))
  const next = () => new Promise((resolve) => replies.push(resolve))
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve({ available: false, reason: `its child exited (code ${code})` })))
  return Promise.race([next(), exited]).then((hello) => {
    if (!hello.available) {
      child.kill()
      return { available: false, reason: hello.reason }
    }
    return {
      available: true,
      version: hello.version,
      request(message) {
        child.send(message)
        return Promise.race([next(), exited.then(() => Promise.reject(new Error('isolated-vm child exited')))])
      },
      close: () => new Promise((resolve) => {
        child.once('exit', resolve)
        child.disconnect()
      }),
    }
  })
}
