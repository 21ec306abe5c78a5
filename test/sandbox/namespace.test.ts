/**
 * The host's own sweep of a confined helper's PID namespace: what is left there after a
 * settlement dies, whatever the helper (which shares a process with the program) answers.
 */
import { execFileSync, spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { helperWrapper } from '../../src/host/sandbox/bwrap.js'
import { helperOf, NAMESPACE_HELPER_PID, namespaceMembers, sweepHelperNamespace } from '../../src/host/sandbox/namespace.js'
import { RUNTIME_PATHS } from '../../src/host/sandbox/runtime-files.js'
import { WRAPPER_INPUT_FD } from '../../src/protocol/frames.js'
import { isDead } from '../../src/system/process-sweep.js'
import { leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { startRuntime } from '../helpers/runtime.js'
import { bwrap, marker, onPath, processesMatching, tempDirectory } from '../helpers/sandbox.js'

const until = async (done: () => boolean) => {
  for (let waited = 0; waited < 5000 && !done(); waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
}

/**
 * Whether a process other than the reaper and the helper runs in the namespace of the helper
 * whose host PID is `helper`, by twenty looks at its own /proc: a fast chain slips past one.
 */
function chainRuns(helper: number): boolean {
  const proc = `/proc/${helper}/root/proc`
  for (let look = 0; look < 20; look++) if ((namespaceMembers(helper) ?? []).some((pid) => pid > NAMESPACE_HELPER_PID && !isDead(pid, proc))) return true
  return false
}

describe.skipIf(!bwrap)('sweeping a helper namespace from the host', () => {
  it('kills every process in the namespace but the reaper and the helper, and says it found them', async () => {
    const tag = marker()
    const wrapper = helperWrapper(bwrap!, { policy: { mode: 'read-only', workspaceRoot: '/' }, cwd: '/', runtimePaths: RUNTIME_PATHS })
    // The helper stands in as `sleep 1<tag>` (PID 2 inside); it leaves one stray in its group and one in a session of its own.
    // The tag comes in as $0, so only the sleeps' own command lines spell it out.
    const script = 'sleep "2$0" & setsid sleep "3$0" & exec sleep "1$0"'
    const stdio = ['ignore', 'ignore', 'ignore', 'ignore', 'pipe'] as const
    const child = spawn(wrapper.command, [...wrapper.args, '--', '/bin/sh', '-c', script, tag], { stdio: [...stdio] })
    ;(child.stdio[WRAPPER_INPUT_FD] as Writable).end(wrapper.input)
    const exited = new Promise((resolve) => child.once('exit', resolve))
    try {
      await until(() => processesMatching(`sleep 1${tag}`).length === 1 && processesMatching(`sleep 3${tag}`).length === 1)
      expect(processesMatching(`sleep 2${tag}`)).toHaveLength(1)
      // The namespace's own /proc lists all four (reaper, helper, two strays), whatever their tree;
      // the killed strays stay listed as zombies (a `sleep` never reaps), which a sweep sees through.
      const helper = helperOf(child.pid!)!
      expect(namespaceMembers(helper)?.sort()).toEqual([1, 2, expect.any(Number), expect.any(Number)])

      expect(await sweepHelperNamespace(child.pid!, helper)).toEqual({ found: true, cleared: true })
      expect(processesMatching(`sleep 2${tag}`)).toEqual([])
      expect(processesMatching(`sleep 3${tag}`)).toEqual([])
      expect(processesMatching(`sleep 1${tag}`)).toHaveLength(1)
      expect(await sweepHelperNamespace(child.pid!, helper)).toEqual({ found: false, cleared: true })
    } finally {
      child.kill('SIGKILL')
      await exited
    }
  })

  // A chain's dead hop can be read as a zombie after the listing that showed it, with the
  // successor it forked missing from that listing: no one listing proves the chain is over.
  it.skipIf(!onPath('cc'))('never calls a namespace clear while a fork-and-exit chain still runs there', async () => {
    const temp = tempDirectory('ptc-sandbox-chain')
    const hop = chainCommand(temp.dir)[0]!
    const wrapper = helperWrapper(bwrap!, { policy: { mode: 'read-only', workspaceRoot: '/' }, cwd: '/', runtimePaths: [...RUNTIME_PATHS, temp.dir] })
    const stdio = ['ignore', 'ignore', 'ignore', 'ignore', 'pipe'] as const
    const verdicts: { cleared: boolean; runs: boolean }[] = []
    try {
      for (let round = 0; round < 30; round++) {
        // The helper stands in as `sleep` (PID 2 inside), under the scheduling class helpers get.
        const child = spawn('chrt', ['--idle', '0', wrapper.command, ...wrapper.args, '--', '/bin/sh', '-c', `${hop} & exec sleep 1000`], { stdio: [...stdio] })
        ;(child.stdio[WRAPPER_INPUT_FD] as Writable).end(wrapper.input)
        const exited = new Promise((resolve) => child.once('exit', resolve))
        try {
          let helper: number | undefined
          await until(() => (helper = helperOf(child.pid!)) !== undefined && chainRuns(helper))
          const { cleared } = await sweepHelperNamespace(child.pid!, helper)
          verdicts.push({ cleared, runs: chainRuns(helper!) })
        } finally {
          child.kill('SIGKILL')
          await exited
        }
      }
    } finally {
      temp.remove()
    }
    expect(verdicts.filter(({ cleared, runs }) => cleared && runs)).toEqual([])
  })

  it('finds nothing under a process that is not bubblewrap', async () => {
    expect(await sweepHelperNamespace(process.pid)).toEqual({ found: false, cleared: true })
  })
})

/**
 * A program that takes over its helper's main thread through the inspector: it disables the
 * helper's kills and rewrites what the helper writes to the host, then leaves a subprocess.
 */
const subvert = (tag: string) => `
  const inspector = await import('node:inspector')
  const cp = await import('node:child_process')
  // A process tier's helper runs the program on its main thread: the session connects to it.
  const { isMainThread } = await import('node:worker_threads')
  // A function, so that evaluating it again (after a lost reply) declares nothing twice.
  const expression = \`(() => {
    process.kill = () => true
    const { Socket } = process.getBuiltinModule('node:net')
    const write = Socket.prototype.write
    Socket.prototype.write = function (chunk, ...rest) {
      if (typeof chunk === 'string') chunk = chunk.replace('"alone":false', '"alone":true')
      return write.call(this, chunk, ...rest)
    }
    return 'subverted'
  })()\`
  // Node 26 sometimes leaves a reply undelivered until the main thread wakes for something
  // else: ask again on a new session, as an attacker would.
  let answer
  for (let attempt = 0; attempt < 10 && answer === undefined; attempt++) {
    const session = new inspector.Session()
    if (isMainThread) session.connect()
    else session.connectToMainThread()
    answer = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve(undefined), 1000)
      session.post('Runtime.evaluate', { expression }, (error, result) => {
        clearTimeout(timer)
        error ? reject(error) : resolve(result.result.value)
      })
    })
    session.disconnect()
  }
  cp.spawn('setsid', ['sleep', '${tag}'], { stdio: 'ignore', detached: true }).unref()
  await new Promise((resolve) => setTimeout(resolve, 300))
  globalThis.kept = 'state'
  return answer`

describe.skipIf(!bwrap)('a retained helper that lies about its sweep', () => {
  const temp = tempDirectory('ptc-sandbox-namespace')
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot

  beforeAll(async () => {
    baseline = await resourceBaseline()
    env = await startRuntime({ retainState: true, sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir } })
  })
  afterAll(async () => {
    await env.dispose()
    temp.remove()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('cannot keep a subprocess past the settlement: the host sweeps without asking the helper', async () => {
    const owner = {}
    const tag = marker()
    const first = await env.run(subvert(tag), { stateOwner: owner })
    expect(first.value).toBe('subverted')
    expect(processesMatching(`sleep ${tag}`)).toEqual([])
    // The program's state stays: the host's own sweep accounted for every process it started.
    const next = await env.run('return typeof globalThis.kept', { stateOwner: owner })
    expect(next.value).toBe('string')
    await env.runtime.release(owner)
  })
})

const python3 = onPath('python3')
const perl = onPath('perl')

/**
 * A subprocess started by a nested worker (the runtime's spawn hooks live in the program's own
 * thread only): `setsid sleep`, in a session of its own and out of the helper's tree, or a plain
 * child of the helper.
 */
const unreported = (tag: string, command: string[]) => `
  const { Worker } = await import('node:worker_threads')
  const worker = new Worker(
    'require("node:child_process").spawn(${JSON.stringify(command[0])}, ${JSON.stringify([...command.slice(1), tag])}, { stdio: "ignore", detached: true }).unref();' +
      'require("node:worker_threads").parentPort.postMessage("started")',
    { eval: true },
  )
  await new Promise((resolve) => worker.once('message', resolve))
  await new Promise((resolve) => setTimeout(resolve, 300))
  globalThis.kept = 'state'
  return 'started'`

/** A C program each of whose processes forks its successor and exits at once, for 500 000 hops. */
const HOP = 'int fork(void); void _exit(int); int main(void) { for (int n = 0; n < 500000; n++) if (fork() > 0) _exit(0); return 0; }'

/**
 * The command of a fork-and-exit chain: compiled where a C compiler is at hand, since a tiny
 * process forks fast enough to stay ahead of a walk of the process tree; perl's otherwise.
 */
function chainCommand(directory: string): string[] {
  if (!onPath('cc')) return ['perl', '-e', '$n = 0; while ($n++ < 500000) { fork && exit }']
  writeFileSync(path.join(directory, 'hop.c'), HOP)
  execFileSync('cc', ['-O2', '-o', path.join(directory, 'hop'), path.join(directory, 'hop.c')])
  return [path.join(directory, 'hop')]
}

// With bubblewrap the host sweeps the helper's PID namespace; without it, the helper's children
// (a double fork escapes there: the README says so).
describe.each([
  ['in its PID namespace', { sandbox: 'none' as const }, ['setsid', 'sleep'], true],
  ['without bubblewrap', { sandbox: { mode: 'danger-full-access' as const, bwrapPath: '/nonexistent/bwrap' } }, ['sleep'], false],
])('a process-host subprocess nobody reported, %s', (_where, config, command, namespaced) => {
  const temp = tempDirectory('ptc-sandbox-unreported')
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot

  beforeAll(async () => {
    baseline = await resourceBaseline()
    env = await startRuntime({ retainState: true, ...config })
  })
  afterAll(async () => {
    await env.dispose()
    temp.remove()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  // A reported subprocess whose main thread exits while another thread runs: it looks like a zombie.
  it.skipIf(!python3)('whose main thread exited is still killed before the result, if reported', async () => {
    const owner = {}
    const tag = marker()
    const threaded = 'import threading, ctypes; threading.Thread(target=lambda: ctypes.CDLL(None).sleep(1000)).start(); ctypes.CDLL(None).pthread_exit(None)'
    const program = `(await import('node:child_process')).spawn('python3', ['-c', ${JSON.stringify(threaded)}, '${tag}'], { stdio: 'ignore' }).unref()
      await new Promise((resolve) => setTimeout(resolve, 500))
      return 'started'`
    expect((await env.run(program, { stateOwner: owner })).value).toBe('started')
    expect(processesMatching(tag)).toEqual([])
    await env.runtime.release(owner)
  })

  it('is killed by the host before the owner\'s next run, which keeps its state', async () => {
    const owner = {}
    const tag = marker()
    expect((await env.run(unreported(tag, command), { stateOwner: owner })).value).toBe('started')
    const next = await env.run('return typeof globalThis.kept', { stateOwner: owner })
    expect(next).toMatchObject({ output: [], value: 'string' })
    expect(processesMatching(`sleep ${tag}`)).toEqual([])
    await env.runtime.release(owner)
  })

  // Without bubblewrap a chain leaves the helper's tree at its first hop: the README says so.
  it.skipIf(!namespaced || !(perl || onPath('cc')))('that forks its successor and exits, hop after hop, cannot outpace the host\'s sweep', async () => {
    const owner = {}
    const tag = marker()
    expect((await env.run(unreported(tag, chainCommand(temp.dir)), { stateOwner: owner })).value).toBe('started')
    // Killed by the sweep (state kept), or the environment discarded with a notice: either way, gone.
    expect((await env.run('return 1', { stateOwner: owner })).value).toBe(1)
    expect(processesMatching(tag)).toEqual([])
    await env.runtime.release(owner)
  })
})

// Disposal ends namespaces through their reaper and, without bubblewrap, looks for marked
// processes anywhere on the machine: either way nothing a program started outlives it.
describe.each([
  ['in its PID namespace', {}],
  ['without bubblewrap', { sandbox: { mode: 'danger-full-access' as const, bwrapPath: '/nonexistent/bwrap' } }],
])('runtime disposal, %s', (_where, config) => {
  it('leaves nothing running that a kept environment or an in-flight run started, even out of the tree and group', async () => {
    const env = await startRuntime({ retainState: true, ...config })
    const tag = marker()
    const escape = (suffix: string) => `cp.spawn('setsid', ['sleep', '${tag}${suffix}'], { stdio: 'ignore', detached: true }).unref()`
    // Started by a timer after the kept run's result and the host's sweep after it (a loaded host
    // may sweep 100 ms late): nothing has swept it yet.
    const kept = `const cp = await import('node:child_process'); setTimeout(() => ${escape('1')}, 1000); return 1`
    expect((await env.run(kept, { stateOwner: {} })).value).toBe(1)
    let spawned!: () => void
    const started = new Promise<void>((resolve) => (spawned = resolve))
    const bindings = [{ global: 'tools', functions: { spawned: async () => (spawned(), null) } }]
    const flying = env.run(`const cp = await import('node:child_process'); ${escape('2')}; await tools.spawned(); await new Promise(() => {})`, {
      bindings,
      timeoutMs: null,
    })
    await started
    // The sleeps themselves: `setsid` forks, and its parent names the same sleep for a moment.
    const sleeps = () => processesMatching(`sleep ${tag}`).filter((pid) => commandOf(pid) === 'sleep')
    await until(() => sleeps().length === 2)
    expect(sleeps()).toHaveLength(2)
    await env.dispose()
    expect(processesMatching(`sleep ${tag}`)).toEqual([])
    expect((await flying).error).toEqual({ kind: 'abort', message: 'runtime disposed' })
  })

  it('leaves nothing running that a program started before it killed its own helper, once the result is in', async () => {
    const env = await startRuntime(config)
    try {
      const tag = marker()
      const program = `const cp = await import('node:child_process')
        cp.spawn('setsid', ['sleep', '${tag}'], { stdio: 'ignore', detached: true }).unref()
        await new Promise((resolve) => setTimeout(resolve, 300))
        cp.execSync('kill -9 $PPID')
        await new Promise((resolve) => setTimeout(resolve, 5000))`
      expect((await env.run(program)).error?.kind).toBe('worker-exit')
      expect(processesMatching(`sleep ${tag}`)).toEqual([])
    } finally {
      await env.dispose()
    }
  })
})

/** The command name of `pid`, or undefined once it is gone. */
function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return undefined
  }
}
