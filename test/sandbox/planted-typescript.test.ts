/**
 * A `typescript` of a program's own for the host's type check (`typecheck`), which runs
 * TypeScript in worker threads of the host, outside every sandbox: one the host loaded would run
 * the program's code unconfined. Each test installs the built package in a project that is the
 * run's writable root (installRuntime), runs a real host process from there in which a confined
 * program plants a package in the root's node_modules or changes the one installed there, and
 * then makes a checker, as a host does for each new conversation.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installRuntime, modules } from '../helpers/host-project.js'
import { bwrap, processesMatching, tempDirectory } from '../helpers/sandbox.js'

/**
 * A host script: starts a runtime whose writable root is argv[2], runs argv[3] (the plant),
 * then makes a run_code tool with the type check and runs argv[4]'s programs with it, then a
 * program on the runtime itself. Prints what each step gave.
 */
const HOST_SCRIPT = `
import { createPtcRuntime, createRunCodeTool } from 'ptc-runtime'
const [workspaceRoot, plant, programs] = [process.argv[2], process.argv[3], JSON.parse(process.argv[4])]
const outcome = (result) => (result.error ? { error: result.error } : { value: result.value })
const { runtime, dispose } = await createPtcRuntime({ poolSize: 0, sandbox: { mode: 'workspace-write', workspaceRoot } })
const report = { checked: [] }
try {
  report.plant = outcome(await runtime.run(runtime.resolve({ program: plant, bindings: [] })))
  let tool
  try {
    tool = createRunCodeTool({ runtime, groups: [], typecheck: true })
  } catch (error) {
    report.refused = error.message
  }
  if (tool) {
    for (const program of programs) report.checked.push(outcome((await tool.run({ program })).result))
    await tool.close()
  }
  report.after = outcome(await runtime.run(runtime.resolve({ program: 'return 6 * 7', bindings: [] })))
} finally {
  await dispose()
}
console.log(JSON.stringify(report))
`

interface Outcome { value?: unknown; error?: { kind: string; message: string } }
interface Report { plant: Outcome; refused?: string; checked: Outcome[]; after: Outcome }

/** A main module for a planted TypeScript: writes the id of the process that loaded it to `marker`. */
const plantedMain = (marker: string) => `require('node:fs').appendFileSync(${JSON.stringify(marker)}, 'loaded by process ' + process.pid + '\\n')`

/**
 * A program that plants a TypeScript 5 package in `project`'s node_modules, whose main module
 * (what the checker's worker loads) is `plantedMain`.
 */
function plantProgram(project: string, marker: string): string {
  return `const fs = await import('node:fs')
const directory = ${JSON.stringify(path.join(project, 'node_modules', 'typescript'))}
fs.mkdirSync(directory + '/lib', { recursive: true })
fs.writeFileSync(directory + '/package.json', JSON.stringify({ name: 'typescript', version: '5.9.3', main: 'lib/typescript.js' }))
fs.writeFileSync(directory + '/lib/typescript.js', ${JSON.stringify(plantedMain(marker))})
return 'planted'`
}

/** Runs the host script from `project` with `plant` as the confined program, and gives its report. */
function runHost(project: string, plant: string, programs: string[]): Report {
  const output = execFileSync(process.execPath, [path.join(project, 'host.mjs'), project, plant, JSON.stringify(programs)], {
    cwd: project,
    encoding: 'utf8',
    timeout: 60_000,
  })
  return JSON.parse(output) as Report
}

/** A project under `dir` (the run's writable root) with this package installed and the host script. */
function installProject(dir: string): string {
  const project = path.join(dir, 'project')
  mkdirSync(project)
  installRuntime(project)
  writeFileSync(path.join(project, 'host.mjs'), HOST_SCRIPT)
  return project
}

/**
 * A temporary directory made as the suite starts (a suite a filter skips makes none) and
 * removed after it.
 */
function suiteDirectory(prefix: string): { readonly dir: string } {
  let temp: ReturnType<typeof tempDirectory> | undefined
  beforeAll(() => {
    temp = tempDirectory(prefix)
  })
  afterAll(() => temp?.remove())
  return {
    get dir() {
      return temp!.dir
    },
  }
}

/** The planted module's marker in `dir`, outside the writable root: only code that runs in the host can write it. */
const markerIn = (dir: string) => path.join(dir, 'planted.log')

/** Who loaded the planted module, by the marker in `dir`. */
const loaded = (dir: string) => (existsSync(markerIn(dir)) ? readFileSync(markerIn(dir), 'utf8') : 'by nobody')

/** A program the type check refuses (its message names the mistake), and one it passes. */
const CHECK_FAILS = "const word = 'checked'\nreturn word.toFixed(2)"
const CHECKS = "const word = 'checked'\nreturn word.length"
const CHECKED = [
  { error: { kind: 'exception', message: expect.stringMatching(/^The program does not type-check.*\n.*Property 'toFixed' does not exist on type/) } },
  { value: 7 },
]

/** What every attack here must leave: a host that still runs programs, and nothing of the test's running. */
function itLeavesTheHostRunning(temp: { readonly dir: string }, reported: () => Report): void {
  it('leaves the host running its programs, and nothing running after it', () => {
    expect(reported().after).toEqual({ value: 42 })
    expect(processesMatching(temp.dir)).toEqual([])
  })
}

describe.skipIf(!bwrap)('a typescript planted where the host found none', () => {
  const temp = suiteDirectory('ptc-sandbox-typescript-none')
  let project: string
  let report: Report

  beforeAll(() => {
    project = installProject(temp.dir)
    report = runHost(project, plantProgram(project, markerIn(temp.dir)), ['return 1'])
  }, 90_000)

  it('is never loaded by the running host: a checker made after the plant fails, saying TypeScript was not found as the host started', () => {
    expect(report.plant).toEqual({ value: 'planted' })
    expect(existsSync(path.join(project, 'node_modules', 'typescript', 'lib', 'typescript.js'))).toBe(true)
    expect(loaded(temp.dir)).toBe('by nobody')
    expect(report.refused).toMatch(/typecheck needs the typescript package .*did not find as it started/)
  })

  itLeavesTheHostRunning(temp, () => report)
})

describe.skipIf(!bwrap)('a typescript planted nearer than the one the host found', () => {
  const temp = suiteDirectory('ptc-sandbox-typescript-nearer')
  let project: string
  let report: Report

  beforeAll(() => {
    // The host's TypeScript above the writable root (a workspace's hoisted node_modules): the
    // root's own node_modules, where the program plants its copy, comes first on the path.
    mkdirSync(path.join(temp.dir, 'node_modules'))
    symlinkSync(modules('typescript'), path.join(temp.dir, 'node_modules', 'typescript'))
    project = installProject(temp.dir)
    report = runHost(project, plantProgram(project, markerIn(temp.dir)), [CHECK_FAILS, CHECKS])
  }, 90_000)

  it('is never loaded by the running host: a checker made after the plant checks with the TypeScript found as the host started', () => {
    expect(report.plant).toEqual({ value: 'planted' })
    expect(existsSync(path.join(project, 'node_modules', 'typescript', 'lib', 'typescript.js'))).toBe(true)
    expect(loaded(temp.dir)).toBe('by nobody')
    expect(report.refused).toBeUndefined()
    expect(report.checked).toEqual(CHECKED)
  })

  itLeavesTheHostRunning(temp, () => report)
})

describe.skipIf(!bwrap)('a typescript the host installed in the writable root', () => {
  const temp = suiteDirectory('ptc-sandbox-typescript-installed')
  let project: string
  let report: Report

  beforeAll(() => {
    project = installProject(temp.dir)
    cpSync(modules('typescript'), path.join(project, 'node_modules', 'typescript'), { recursive: true })
    // Each way a program could make the host's next checker load code of its own instead: add
    // it to the module the worker loads, point the manifest elsewhere, or move the package or
    // the node_modules above it aside (to put a copy of its own in its place).
    const installed = path.join(project, 'node_modules', 'typescript')
    const replace = `const fs = await import('node:fs')
const installed = ${JSON.stringify(installed)}
const tried = {}
const attempt = (what, act) => {
  try {
    act()
    tried[what] = 'done'
  } catch (error) {
    tried[what] = error.code
  }
}
attempt('append', () => fs.appendFileSync(installed + '/lib/typescript.js', ${JSON.stringify(`\n${plantedMain(markerIn(temp.dir))}`)}))
attempt('manifest', () => fs.writeFileSync(installed + '/package.json', JSON.stringify({ name: 'typescript', version: '5.9.3', main: 'planted.js' })))
attempt('move', () => fs.renameSync(installed, installed + '-aside'))
attempt('move parent', () => fs.renameSync(${JSON.stringify(path.dirname(installed))}, ${JSON.stringify(`${path.dirname(installed)}-aside`)}))
return tried`
    report = runHost(project, replace, [CHECK_FAILS, CHECKS])
  }, 90_000)

  it('cannot be changed or moved by a program, and the host\'s next checker checks with it', () => {
    expect(report.plant).toEqual({ value: { append: 'EROFS', manifest: 'EROFS', move: 'EBUSY', 'move parent': 'EBUSY' } })
    expect(readFileSync(path.join(project, 'node_modules', 'typescript', 'lib', 'typescript.js'), 'utf8')).toBe(readFileSync(path.join(modules('typescript'), 'lib', 'typescript.js'), 'utf8'))
    expect(loaded(temp.dir)).toBe('by nobody')
    expect(report.refused).toBeUndefined()
    expect(report.checked).toEqual(CHECKED)
  })

  itLeavesTheHostRunning(temp, () => report)
})
