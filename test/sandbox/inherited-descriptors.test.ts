/**
 * Descriptors a host inherited from whatever started it (a shell's redirection, a supervisor's
 * sockets) are open in the host without close-on-exec, so every process it spawns inherits them
 * too, through bubblewrap. A helper must hold none of them: one that leads to a directory outside
 * the sandbox would let a confined program write there through `/proc/self/fd`.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { bwrap, tempDirectory } from '../helpers/sandbox.js'

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/index.js')
/** The descriptor the host inherits the outside directory on. */
const INHERITED_FD = 50

describe.skipIf(!bwrap)('a host\'s inherited descriptors', () => {
  const temp = tempDirectory('ptc-inherited')
  afterAll(() => temp.remove())

  it('reach no helper: a confined program cannot write outside its sandbox through one', async () => {
    const outside = path.join(temp.dir, 'outside')
    mkdirSync(outside)
    const host = path.join(temp.dir, 'host.mjs')
    // The host runs one program, on a fresh helper and again once helpers start from the
    // startup snapshot (where Node can restore it), and prints what the program could do.
    writeFileSync(host, `
      const { createPtcRuntime } = await import(${JSON.stringify(PACKAGE)})
      const { runtime, dispose } = await createPtcRuntime({ poolSize: 0 })
      const program = \`
        const fs = await import('node:fs')
        let wrote = 'no'
        try { fs.writeFileSync('/proc/self/fd/${INHERITED_FD}/planted', 'x'); wrote = 'yes' } catch (error) { wrote = error.code }
        return wrote\`
      const outcomes = []
      for (let round = 0; round < 8; round++) {
        const result = await runtime.run(runtime.resolve({ program, bindings: [] }))
        outcomes.push(result.error ? result.error.kind : result.value)
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
      process.stdout.write(JSON.stringify(outcomes))
      await dispose()
    `)
    // A shell's redirection gives the host the descriptor as its parent would, without close-on-exec
    // (bash: dash redirects single-digit descriptors only).
    const child = spawn('/bin/bash', ['-c', `exec "$0" "$1" ${INHERITED_FD}<"$2"`, process.execPath, host, outside], { stdio: ['ignore', 'pipe', 'inherit'], cwd: temp.dir })
    let output = ''
    child.stdout!.on('data', (chunk) => (output += chunk))
    const code = await new Promise((resolve) => child.once('close', resolve))
    expect(code).toBe(0)
    const outcomes = JSON.parse(output) as string[]
    expect(outcomes).toHaveLength(8)
    expect(outcomes.filter((outcome) => outcome === 'yes')).toEqual([])
    expect(existsSync(path.join(outside, 'planted'))).toBe(false)
  }, 60_000)
})
