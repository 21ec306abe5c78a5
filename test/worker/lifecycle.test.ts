import { execFileSync } from 'node:child_process'
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { leakedSince, resourceBaseline, threadCount } from '../helpers/leaks.js'
import { childProcesses } from '../helpers/processes.mjs'
import { CONFINED, ON_CONTAINER, startRuntime, textOf } from '../helpers/runtime.js'

/** What every result of the default confinement reports. */

describe('provider lifecycle', () => {
  it('disposal aborts in-flight runs with "runtime disposed" and awaits every worker', async () => {
    const baseline = await resourceBaseline()
    const env = await startRuntime({ poolSize: 2 })
    const runs = [env.run('while (true) {}', { timeoutMs: null }), env.run('await new Promise(() => {})', { timeoutMs: null })]
    await new Promise((resolve) => setTimeout(resolve, 200))
    await env.dispose()
    for (const result of await Promise.all(runs)) {
      expect(result.error).toEqual({ kind: 'abort', message: 'runtime disposed' })
    }
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  // Disposal ends every environment serving a run at once, before it aborts the runs: on the
  // thread host by terminating their workers, on the process host by killing each namespace
  // (without bubblewrap, by stopping each helper's group until its processes are found).
  const UNWRAPPED = { sandbox: { mode: 'danger-full-access' as const, bwrapPath: '/nonexistent/bwrap' } }
  it.each([['the default tier', undefined], ['the thread tier', 'thread' as const], ['helpers without bubblewrap', 'unwrapped' as const]])('disposal with runs spinning and runs waiting in a tool settles every one and leaves no helper, spare or thread (%s)', async (_, host) => {
    const baseline = await resourceBaseline()
    const env = await startRuntime(host === 'thread' ? { isolation: host } : host === 'unwrapped' ? UNWRAPPED : {})
    let waiting = 0
    let allWaiting!: () => void
    const inTool = new Promise<void>((resolve) => (allWaiting = resolve))
    const tools = { wait: () => { if (++waiting === 10) allWaiting(); return new Promise<null>(() => {}) } }
    // Some waiting programs first leave a process in a session of its own, out of their tree (on
    // the thread tier it leaves the host's tree too, and only its marker finds it).
    const escape = "const { execFile } = await import('node:child_process'); await new Promise((resolve) => execFile('sh', ['-c', 'setsid sleep 300 > /dev/null 2>&1 < /dev/null & exit 0'], resolve)); "
    const runs = Array.from({ length: 20 }, (_, index) =>
      env.run(index % 2 === 0 ? 'while (true) {}' : `${index % 4 === 1 && !host ? escape : ''}await tools.wait()`, { timeoutMs: null, bindings: [{ global: 'tools', functions: tools }] }),
    )
    await inTool
    // Every process under the host, bubblewrap's reapers and the programs' helpers included:
    // disposal kills each namespace's reaper first, and all under it must die, not be orphaned.
    // The walk sees the escaped processes too (a container's are the engine's, not ours); `setsid`
    // forks before it becomes `sleep`, so the walk is taken again until all five have.
    const escaped = (processes: Map<number, string>) => [...processes.keys()].filter((pid) => { try { return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sleep' } catch { return false } })
    let before = descendants()
    for (let tries = 0; !ON_CONTAINER && !host && escaped(before).length < 5 && tries < 50; tries++) before = (await sleep(100), descendants())
    try {
      if (!ON_CONTAINER && !host) expect(escaped(before)).toHaveLength(5)
    } finally {
      await env.dispose()
    }
    const results = await Promise.all(runs)
    expect(results.map((result) => result.error)).toEqual(Array.from({ length: 20 }, () => ({ kind: 'abort', message: 'runtime disposed' })))
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
    expect(await stillRunning(before)).toEqual([])
  })

  // Without bubblewrap, what a program started outside its helper's tree is found by a look at
  // every process of the machine, which took seconds on a loaded CI machine: every helper waited
  // for two or three such looks before its SIGKILL, and outlived disposal's 10 s. A helper's own
  // tree needs no look, so it dies first. Here the looks cannot even start: they read /proc
  // through the host's threadpool, whose every thread waits to open a FIFO.
  it.skipIf(process.platform !== 'linux')('disposal kills helpers without bubblewrap before it searches the machine for what they started', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'ptc-held-looks-'))
    const fifo = path.join(directory, 'fifo')
    execFileSync('mkfifo', [fifo])
    const before = childProcesses()
    const env = await startRuntime(UNWRAPPED)
    let held: Array<Promise<FileHandle>> = []
    let disposed: Promise<void> | undefined
    try {
      let waiting = 0
      let allWaiting!: () => void
      const inTool = new Promise<void>((resolve) => (allWaiting = resolve))
      const tools = { wait: () => { if (++waiting === 2) allWaiting(); return new Promise<null>(() => {}) } }
      const runs = ['while (true) {}', 'await tools.wait()', 'while (true) {}', 'await tools.wait()'].map((program) =>
        env.run(program, { timeoutMs: null, bindings: [{ global: 'tools', functions: tools }] }),
      )
      await inTool
      const helpers = childProcesses().filter((pid) => !before.includes(pid))
      held = Array.from({ length: Number(process.env.UV_THREADPOOL_SIZE) || 4 }, () => open(fifo, 'r'))
      disposed = env.dispose()
      for (let waited = 0; helpers.some(isRunning) && waited < 5_000; waited += 50) await sleep(50)
      expect(helpers.filter(isRunning)).toEqual([])
      // Once the looks can read again, the search ends and so does disposal.
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
      await disposed
      expect((await Promise.all(runs)).map((result) => result.error?.message)).toEqual(Array(4).fill('runtime disposed'))
    } finally {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
      } catch {
        // no open waits any more
      }
      for (const handle of await Promise.all(held)) await handle.close()
      await (disposed ?? env.dispose())
      rmSync(directory, { recursive: true, force: true })
    }
  })

  it('settles each run exactly once even when the program exits right after completing', async () => {
    const env = await startRuntime()
    const results = await Promise.all(
      Array.from({ length: 5 }, () => env.run('setImmediate(() => process.exit(3)); return "done"')),
    )
    for (const result of results) expect(result).toEqual({ calls: [], output: [], value: 'done', sandbox: CONFINED })
    await env.dispose()
  })

  it('nothing a one-shot program left behind runs after its result: timers, promises, exit handlers, finally blocks', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'ptc-leftovers-'))
    const env = await startRuntime({ poolSize: 2 })
    try {
      const leaveBehind = (tag: string) => `
        const fs = await import('node:fs')
        const mark = (what) => fs.writeFileSync(${JSON.stringify(directory)} + '/${tag}-' + what, '')
        setTimeout(() => mark('timer'), 0)
        setImmediate(() => mark('immediate'))
        process.on('exit', () => mark('exit'))
        void (async () => { try { await new Promise((r) => setTimeout(r, 1)) } finally { mark('finally') } })()
        inspect.length // keeps the program from completing synchronously
      `
      const results = await Promise.all([
        env.run(leaveBehind('value') + 'return "done"'),
        env.run(leaveBehind('thrown') + 'throw new Error("failed on purpose")'),
        env.run(leaveBehind('lossy') + 'return 1n'),
      ])
      expect(results.map((result) => result.value ?? result.error?.kind)).toEqual(['done', 'exception', 'invalid-output'])
      await sleep(300)
      expect(readdirSync(directory)).toEqual([])
    } finally {
      await env.dispose()
      rmSync(directory, { recursive: true, force: true })
    }
  })

  it('disposal awaits the one-shot workers still ending after their runs returned', async () => {
    const baseline = threadCount()
    const env = await startRuntime({ poolSize: 0 })
    const results = await Promise.all(Array.from({ length: 4 }, () => env.run('return 1')))
    expect(results.map((result) => result.value)).toEqual([1, 1, 1, 1])
    await env.dispose()
    expect(threadCount()).toBe(baseline)
  })

  it('a fresh environment shows no trace of the warm-up rehearsal its worker ran before ready', async () => {
    const env = await startRuntime({ poolSize: 1, retainState: true })
    try {
      const owner = {}
      const first = await env.run(
        `globalThis.boom = () => { throw new Error('kaboom') }
         return Object.getOwnPropertyNames(globalThis).filter((name) => /rehears/i.test(name))`,
        { stateOwner: owner },
      )
      expect(first).toEqual({ calls: [], output: [], value: [], sandbox: CONFINED })
      const second = await env.run('boom()', { stateOwner: owner })
      expect(second.error?.message).toBe('Error: kaboom\n    at globalThis.boom (program of run 1:1:33)\n    at program:1:1')
      expect((await env.run('return [typeof rehearsal, typeof echoed, typeof both]')).value).toEqual(['undefined', 'undefined', 'undefined'])
    } finally {
      await env.dispose()
    }
  })

  it('the pool never keeps the process alive', async () => {
    const script = `
      import { Context } from 'cordis'
      import { WorkerPtcRuntime } from 'ptc-runtime/cordis'
      const root = new Context()
      await root.plugin(WorkerPtcRuntime, { poolSize: 2 })
      const r = await root.ptcRuntime.run(root.ptcRuntime.resolve({ program: 'return 1', bindings: [] }))
      console.log(JSON.stringify(r))`
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 })
    expect(JSON.parse(output)).toEqual({ output: [], value: 1, calls: [], sandbox: CONFINED })
  })
})


/** A process's parent and start time (which tells a reused PID from the process it named), if it runs. */
function statOf(pid: number): { ppid: number; started: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return fields[0] === 'Z' || fields[0] === 'X' ? undefined : { ppid: Number(fields[1]), started: fields[19]! }
  } catch {
    return undefined
  }
}

/** Whether `pid` runs still: neither gone nor a zombie. */
function isRunning(pid: number): boolean {
  return statOf(pid) !== undefined
}

/** Every live process below this one, with its start time. */
function descendants(): Map<number, string> {
  const stats = new Map<number, { ppid: number; started: string }>()
  for (const entry of readdirSync('/proc')) {
    const stat = /^\d+$/.test(entry) ? statOf(Number(entry)) : undefined
    if (stat) stats.set(Number(entry), stat)
  }
  const found = new Map<number, string>()
  const pending = [process.pid]
  while (pending.length > 0) {
    const parent = pending.pop()!
    for (const [pid, stat] of stats) {
      if (stat.ppid !== parent || found.has(pid)) continue
      found.set(pid, stat.started)
      pending.push(pid)
    }
  }
  return found
}

/** Those of `processes` still running (orphans included) once a moment was given to reap exits. */
async function stillRunning(processes: Map<number, string>): Promise<number[]> {
  for (let attempt = 0; ; attempt++) {
    const running = [...processes].filter(([pid, started]) => statOf(pid)?.started === started).map(([pid]) => pid)
    if (running.length === 0 || attempt === 40) return running
    await sleep(50)
  }
}

/** The helper process under `pid`: bubblewrap's only descendant that has no child (or `pid` itself, unwrapped). */
function helperUnder(pid: number): number {
  for (let current = pid; ; ) {
    let children: number[] = []
    try {
      children = readFileSync(`/proc/${current}/task/${current}/children`, 'utf8').split(' ').filter(Boolean).map(Number)
    } catch {
      return current
    }
    if (children.length === 0) return current
    current = children[0]!
  }
}

/** SIGKILLs the helper process of every environment this process has. */
function killHelpers(): void {
  for (const child of childProcesses()) process.kill(helperUnder(child), 'SIGKILL')
}

/** Resolves once this process has `count` helpers whose process trees are complete. */
async function helpersStarted(count: number): Promise<void> {
  // The leaf is Node once bubblewrap and the shell that sets its limits have exec'd it (its name
  // is `node`, or `MainThread` on Node 24+, which names its threads).
  while (childProcesses().filter((child) => !['bwrap', 'sh'].includes(readFileSync(`/proc/${helperUnder(child)}/comm`, 'utf8').trim())).length < count) {
    await sleep(20)
  }
}

describe.skipIf(process.platform !== 'linux')('a helper that died before its run started', () => {
  it('a pooled spare killed while idle is replaced, and the run gets its value', async () => {
    const env = await startRuntime({ poolSize: 1 })
    try {
      await helpersStarted(1)
      await sleep(500) // ready, most likely; a spare killed while starting is replaced the same way
      killHelpers()
      expect(await env.run('return 42')).toEqual({ output: [], calls: [], value: 42, sandbox: CONFINED })
    } finally {
      await env.dispose()
    }
  })

  it('a spare killed while still starting, 20 times in a row, fails no run: the run waiting for it gets another environment', async () => {
    // After each one-shot run the pool starts a replacement; the OOM killer may pick it while it
    // starts (helpers are its first choice). Half the kills land on bubblewrap or the shell
    // before Node runs, half on Node while it loads: both are before the helper is ready.
    const seen = new Set(childProcesses())
    // The default pool, which grows while runs find no started spare: a run may then wait for
    // a killed spare and retry on another that is dying too, unless the retry takes only a
    // started spare or a fresh one.
    const env = await startRuntime({ poolSize: 1 })
    try {
      for (let round = 0; round < 20; round++) {
        for (let killed = false; !killed; ) {
          let spare: number | undefined
          while ((spare = childProcesses().find((pid) => !seen.has(pid))) === undefined) await sleep(2)
          seen.add(spare)
          try {
            if (round % 2 === 1) {
              while (['bwrap', 'sh', 'nice', 'chrt'].includes(readFileSync(`/proc/${helperUnder(spare)}/comm`, 'utf8').trim())) await sleep(1)
            }
            process.kill(helperUnder(spare), 'SIGKILL')
            killed = true
          } catch {
            // Gone already: the last run's own fresh environment, ending after its result. The
            // spare is the next new child.
          }
        }
        expect(await env.run(`return ${round}`)).toEqual({ output: [], calls: [], value: round, sandbox: CONFINED })
      }
    } finally {
      await env.dispose()
    }
  }, 120_000)

  it("a kept environment whose helper was killed between runs is replaced: the next run starts fresh and is told", async () => {
    const env = await startRuntime({ poolSize: 0, retainState: true })
    try {
      const owner = {}
      expect((await env.run('globalThis.kept = 1; return 1', { stateOwner: owner })).value).toBe(1)
      await sleep(200) // the host's audit of the kept environment, which follows the result, is done
      killHelpers()
      expect(await env.run('return typeof globalThis.kept', { stateOwner: owner })).toEqual({
        output: [{ type: 'text', text: '[earlier state was lost because its worker exited; this run starts in a fresh environment]\n' }],
        calls: [],
        value: 'undefined',
        sandbox: CONFINED,
      })
    } finally {
      await env.dispose()
    }
  })

  it('a program that ran before its helper died is not run again: worker-exit, and the owner is told', async () => {
    const marker = mkdtempSync(path.join(tmpdir(), 'ptc-ran-once-'))
    // The program leaves a mark outside its environment: the directory is granted to it.
    const env = await startRuntime({ poolSize: 0, retainState: true, sandbox: { workspaceRoot: marker } })
    try {
      const owner = {}
      const program = `(await import('node:fs')).appendFileSync(${JSON.stringify(path.join(marker, 'runs'))}, 'x'); process.exit(7)`
      const result = await env.run(program, { stateOwner: owner })
      expect(result.error?.kind).toBe('worker-exit')
      expect(readFileSync(path.join(marker, 'runs'), 'utf8')).toBe('x')
      expect(textOf(await env.run('return 1', { stateOwner: owner }))).toMatch(/^\[earlier state was lost because its worker exited/)
    } finally {
      await env.dispose()
      rmSync(marker, { recursive: true, force: true })
    }
  })
})
