/**
 * The runtime's own files and repository metadata under a writable root: a program that
 * could change them would run its code in every later helper, or outside the sandbox (the
 * host's next start, the user's next `git`). Each test installs the built package the way a
 * host project does (its own copy in `node_modules`) and runs a real host process from there.
 */
import { execFileSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { Context } from 'cordis'
import { WorkerPtcRuntime } from 'ptc-runtime/cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REPO, installRuntime, modules } from '../helpers/host-project.js'
import { bwrap, processesMatching, tempDirectory } from '../helpers/sandbox.js'

/**
 * A runtime host script: plugs in the runtime with argv[2] as config, runs argv[3]'s programs
 * (each a program's text, or a request without its bindings).
 */
const HOST_SCRIPT = `
import { Context } from 'cordis'
import { WorkerPtcRuntime } from 'ptc-runtime/cordis'
const root = new Context()
const fiber = await root.plugin(WorkerPtcRuntime, JSON.parse(process.argv[2]))
const results = []
for (const program of JSON.parse(process.argv[3])) {
  const request = typeof program === 'string' ? { program } : program
  try {
    results.push(await root.ptcRuntime.run(root.ptcRuntime.resolve({ ...request, bindings: [] })))
  } catch (error) {
    results.push({ refused: error.message })
  }
}
await fiber.dispose()
console.log(JSON.stringify(results))
`

/** A host project in `dir`: this package installed (installRuntime) and the host script. */
function installHost(dir: string): void {
  installRuntime(dir)
  writeFileSync(path.join(dir, 'host.mjs'), HOST_SCRIPT)
}

interface Result { value?: unknown; error?: { kind: string; message: string }; refused?: string }

function runHost(dir: string, config: object, programs: Array<string | { program: string; language: string }>, node = process.execPath): Result[] {
  const output = execFileSync(node, [path.join(dir, 'host.mjs'), JSON.stringify(config), JSON.stringify(programs)], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
  })
  return JSON.parse(output) as Result[]
}

const fsProgram = (body: string) => `const fs = await import('node:fs');\n${body}`
const append = (file: string) => fsProgram(`fs.appendFileSync(${JSON.stringify(file)}, '\\nglobalThis.injected = 1\\n')`)

describe.skipIf(!bwrap)('the runtime\'s own files under a writable root', () => {
  const temp = tempDirectory('ptc-sandbox-runtime')
  const protectedFiles = [
    'node_modules/ptc-runtime/dist/worker.cjs',
    'node_modules/ptc-runtime/dist/index.js',
    'node_modules/ptc-runtime/package.json',
    'node_modules/acorn/package.json',
    'node_modules/schemastery/package.json',
    '.git/hooks/post-checkout',
    '.git/config',
    'nested/.git/config',
  ]
  const before = new Map<string, string>()
  let results: Result[]

  beforeAll(() => {
    installHost(temp.dir)
    for (const file of ['.git/hooks/post-checkout', '.git/config', 'nested/.git/config']) {
      mkdirSync(path.dirname(path.join(temp.dir, file)), { recursive: true })
      writeFileSync(path.join(temp.dir, file), '# as the user left it\n')
    }
    for (const file of protectedFiles) before.set(file, readFileSync(path.join(temp.dir, file), 'utf8'))
    results = runHost(temp.dir, { sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir } }, [
      ...protectedFiles.map(append),
      fsProgram(`fs.renameSync('node_modules/ptc-runtime', 'moved-runtime')`),
      fsProgram(`fs.renameSync('.git', 'moved-git')`),
      fsProgram(`fs.writeFileSync('allowed.txt', 'x'); return fs.readFileSync('allowed.txt', 'utf8')`),
    ])
  }, 90_000)
  afterAll(() => temp.remove())

  it.each(protectedFiles.map((file, index) => [file, index] as const))('a program cannot append to %s', (file, index) => {
    expect(results[index]!.error).toEqual({ kind: 'exception', message: expect.stringMatching(/EROFS/) })
    expect(readFileSync(path.join(temp.dir, file), 'utf8')).toBe(before.get(file))
  })

  it('a program cannot move the runtime package or the repository metadata aside', () => {
    const [runtime, git] = results.slice(protectedFiles.length)
    expect(runtime!.error?.message).toMatch(/EBUSY|EROFS|EXDEV/)
    expect(git!.error?.message).toMatch(/EBUSY|EROFS/)
    expect(readFileSync(path.join(temp.dir, 'node_modules/ptc-runtime/dist/worker.cjs'), 'utf8')).toBe(before.get(protectedFiles[0]!))
  })

  it('the rest of the writable root stays writable', () => {
    expect(results.at(-1)).toMatchObject({ value: 'x' })
  })
})

describe.skipIf(!bwrap)('the directories above the runtime\'s files under a writable root', () => {
  const temp = tempDirectory('ptc-sandbox-parents')
  const planted = path.join(temp.dir, 'planted.log')
  const log = (who: string) => `appendFileSync(${JSON.stringify(planted)}, '${who}\\n')`
  // Each program moves a parent of protected files aside, within its own directory (a move to
  // another mount fails on its own, EXDEV), and puts its own copy in its place, with a line that
  // logs who loaded it: a later helper (worker.cjs, unless it starts from a snapshot), the
  // snapshot builder, the host at its next start (cordis.js).
  const plant = (parent: string, files: Record<string, string>) => fsProgram(`
const aside = ${JSON.stringify(path.join(path.dirname(parent), `aside-${path.basename(parent)}`))}
fs.renameSync(${JSON.stringify(parent)}, aside)
fs.cpSync(aside, ${JSON.stringify(parent)}, { recursive: true, verbatimSymlinks: true })
for (const [file, line] of Object.entries(${JSON.stringify(files)})) fs.writeFileSync(file, line + fs.readFileSync(file, 'utf8'))
return 'planted'`)
  const runtime = 'node_modules/ptc-runtime/dist'
  let first: Result[]
  let next: Result[]

  beforeAll(() => {
    installHost(temp.dir)
    // A dependency of its own under a scope directory of the root's node_modules.
    const spec = path.join(temp.dir, 'node_modules', '@standard-schema', 'spec')
    rmSync(spec)
    cpSync(modules('@standard-schema/spec'), spec, { recursive: true })
    // No pool: each run starts a helper after the previous program ended.
    const config = { poolSize: 0, sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir } }
    first = runHost(temp.dir, config, [
      plant('node_modules/@standard-schema', { 'node_modules/@standard-schema/spec/dist/index.js': `import { appendFileSync } from 'node:fs'; ${log('dependency')}\n` }),
      plant('node_modules', {
        [`${runtime}/worker.cjs`]: `require('node:fs').${log('helper')};\n`,
        [`${runtime}/worker-snapshot.cjs`]: `require('node:fs').${log('snapshot builder')};\n`,
        [`${runtime}/cordis.js`]: `import { appendFileSync } from 'node:fs'; ${log('host')}\n`,
      }),
      'return 6 * 7',
    ])
    next = runHost(temp.dir, config, ['return 6 * 7'])
  }, 90_000)
  afterAll(() => temp.remove())

  it('a program cannot move a parent of the runtime package or of a dependency aside', () => {
    expect(first[0]!.error?.message).toMatch(/EBUSY/)
    expect(first[1]!.error?.message).toMatch(/EBUSY/)
    for (const directory of ['.', 'node_modules']) expect(readdirSync(path.join(temp.dir, directory)).filter((entry) => entry.startsWith('aside-'))).toEqual([])
  })

  it('later helpers and the host\'s next start run the real package', () => {
    expect(first[2]).toMatchObject({ value: 42 })
    expect(next).toMatchObject([{ value: 42 }])
    expect(existsSync(planted) ? readFileSync(planted, 'utf8') : 'nobody').toBe('nobody')
    expect(readFileSync(path.join(temp.dir, runtime, 'worker.cjs'), 'utf8')).toBe(readFileSync(path.join(REPO, 'dist', 'worker.cjs'), 'utf8'))
  })

  it('leaves nothing running', () => {
    expect(processesMatching(temp.dir)).toEqual([])
  })
})

describe.skipIf(!bwrap)('an optional package the host has not installed, planted in a writable node_modules', () => {
  const temp = tempDirectory('ptc-sandbox-peer')
  const planted = path.join(temp.dir, 'planted.log')
  let results: Result[]

  beforeAll(() => {
    installHost(temp.dir)
    // Pyodide as a program would plant it: the host's snapshot builder loads pyodide.js in a
    // thread of the host's own process, outside every sandbox.
    const plant = fsProgram(`
const directory = ${JSON.stringify(path.join(temp.dir, 'node_modules', 'pyodide'))}
fs.mkdirSync(directory)
fs.writeFileSync(directory + '/package.json', JSON.stringify({ name: 'pyodide', version: '314.0.8', main: 'pyodide.js' }))
fs.writeFileSync(directory + '/pyodide.js', ${JSON.stringify(`require('node:fs').appendFileSync(${JSON.stringify(planted)}, 'loaded\\n'); exports.loadPyodide = () => Promise.reject(new Error('planted'))`)})
return 'planted'`)
    const config = { poolSize: 0, sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir } }
    results = runHost(temp.dir, config, [plant, { program: 'return 1', language: 'python' }, 'return 6 * 7'])
  }, 90_000)
  afterAll(() => temp.remove())

  it('is never loaded by the running host: Python stays unavailable, as the host found it at its start', () => {
    expect(results[0]).toMatchObject({ value: 'planted' })
    expect(results[1]!.refused).toMatch(/needs the optional peer dependency pyodide/)
    expect(results[2]).toMatchObject({ value: 42 })
    expect(existsSync(planted) ? readFileSync(planted, 'utf8') : 'nobody').toBe('nobody')
    expect(processesMatching(temp.dir)).toEqual([])
  })
})

describe.skipIf(!bwrap)('thousands of repositories made in a writable root', () => {
  const temp = tempDirectory('ptc-sandbox-repositories')
  let results: Result[]

  beforeAll(() => {
    installHost(temp.dir)
    // Each `.git` under the root is bound read-only at every later helper start: enough of them
    // once made more arguments than bubblewrap takes, or a command line longer than the kernel
    // does (spawn threw E2BIG, from a pool's refill too). The host now binds at most 256.
    // No pool: each run starts its helper after the program before it ended.
    const config = { poolSize: 0, sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir } }
    results = runHost(temp.dir, config, [
      fsProgram(`for (let i = 0; i < 4000; i++) fs.mkdirSync('d'.repeat(240) + i + '/.git', { recursive: true }); return 'made'`),
      'return 6 * 7',
      'return 6 * 7',
    ])
  }, 90_000)
  afterAll(() => temp.remove())

  it('fail the runs that need a new helper, and never the host', () => {
    // The host ran every program and exited of itself (runHost would have thrown otherwise).
    expect(results[0]).toMatchObject({ value: 'made' })
    for (const result of results.slice(1)) expect(result.error).toMatchObject({ kind: 'sandbox-unavailable', message: expect.stringContaining(`the writable root ${temp.dir} holds more than 256 repositories`) })
    expect(processesMatching(temp.dir)).toEqual([])
  })
})

describe.skipIf(!bwrap)('a Node executable in a private place', () => {
  const temp = tempDirectory('ptc-sandbox-node')

  beforeAll(() => {
    installHost(temp.dir)
    mkdirSync(path.join(temp.dir, '.node', 'bin'), { recursive: true })
    copyFileSync(process.execPath, path.join(temp.dir, '.node', 'bin', 'node'))
    mkdirSync(path.join(temp.dir, 'ws'))
  })
  afterAll(() => temp.remove())

  it.each(['read-only', 'workspace-write'])('runs confined programs under %s when Node and the runtime live under /tmp', (mode) => {
    const node = path.join(temp.dir, '.node', 'bin', 'node')
    const [result] = runHost(temp.dir, { sandbox: { mode, workspaceRoot: path.join(temp.dir, 'ws') } }, ['return process.execPath'], node)
    expect(result).toMatchObject({ value: node })
  })
})

describe.skipIf(!bwrap)('workspace-write without a workspace root', () => {
  it("writes in a private scratch directory, never in the host's working directory", async () => {
    const root = new Context()
    const fiber = await root.plugin(WorkerPtcRuntime, { sandbox: { mode: 'workspace-write' } })
    try {
      const program = fsProgram(`fs.writeFileSync('scratch.txt', 'x'); return [process.cwd(), fs.readdirSync('.')]`)
      const result = await root.ptcRuntime.run(root.ptcRuntime.resolve({ program, bindings: [] }))
      const [cwd, entries] = result.value as [string, string[]]
      expect(cwd).not.toBe(process.cwd())
      expect(entries).toEqual(['scratch.txt'])
      // The host sees only the empty mount point; the file lived in the environment's tmpfs.
      expect(readdirSync(cwd)).toEqual([])
    } finally {
      await fiber.dispose()
    }
  })
})

describe.skipIf(!bwrap)('a copy of the build outside dist/', () => {
  it('runs confined when the host, inside a checkout, loads the runtime from a copy of dist/ elsewhere in it', () => {
    // As the bench does: a snapshot under node_modules/.cache, which a checkout's hidden rest covers.
    const copy = path.join(REPO, 'node_modules', '.cache', `ptc-copy-test-${process.pid}`)
    cpSync(path.join(REPO, 'dist'), copy, { recursive: true })
    try {
      const script = `
import { Context } from 'cordis'
const { WorkerPtcRuntime } = await import(${JSON.stringify(path.join(copy, 'cordis.js'))})
const root = new Context()
const fiber = await root.plugin(WorkerPtcRuntime, { poolSize: 0 })
const result = await root.ptcRuntime.run(root.ptcRuntime.resolve({ program: 'return 6 * 7', bindings: [] }))
await fiber.dispose()
console.log(JSON.stringify(result.value ?? result.error))
`
      const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, encoding: 'utf8' })
      expect(JSON.parse(output)).toBe(42)
    } finally {
      rmSync(copy, { recursive: true, force: true })
    }
  })
})

describe.skipIf(!bwrap)('a host whose working directory is under /tmp', () => {
  it("keeps that directory read-only and empty for the program, though /tmp itself is writable", () => {
    const project = tempDirectory('ptc-cwd-under-tmp')
    try {
      writeFileSync(path.join(project.dir, 'secret.env'), 'TOKEN=host\n')
      // Started in the repository so Cordis resolves, then moved under /tmp before the runtime loads.
      const script = `
import { Context } from 'cordis'
process.chdir(${JSON.stringify(project.dir)})
const { WorkerPtcRuntime } = await import(${JSON.stringify(path.join(REPO, 'dist', 'cordis.js'))})
const root = new Context()
const fiber = await root.plugin(WorkerPtcRuntime, { poolSize: 0 })
const program = \`const fs = await import('node:fs'); const seen = fs.readdirSync(\${JSON.stringify(process.cwd())}); let code = 'written'; try { fs.writeFileSync(\${JSON.stringify(process.cwd() + '/planted.js')}, 'x') } catch (error) { code = error.code } return [seen, code]\`
const result = await root.ptcRuntime.run(root.ptcRuntime.resolve({ program, bindings: [] }))
await fiber.dispose()
console.log(JSON.stringify(result.value ?? result.error))
`
      const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, encoding: 'utf8' })
      expect(JSON.parse(output)).toEqual([[], 'EROFS'])
      expect(readdirSync(project.dir)).toEqual(['secret.env'])
    } finally {
      project.remove()
    }
  })
})
