/** `ptc-run --language python`: a Python program file (here standard input) under the default confinement. */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url))

function ptcRun(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'ptc-python-cli-'))
  const child = spawn(process.execPath, [cli, ...args], { cwd, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  child.stdin.end(input)
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => {
      rmSync(cwd, { recursive: true, force: true })
      resolve({ code, stdout, stderr })
    })
  })
}

describe('ptc-run --language python', () => {
  it('runs a Python program and prints its output, then its value', { timeout: 240_000 }, async () => {
    const result = await ptcRun(['-', '--language', 'python', '--timeout', '200000'], 'print("hi from", "python")\nreturn {"sum": 1 + 2}\n')
    expect(result).toEqual({ code: 0, stdout: 'hi from python\n{\n  "sum": 3\n}\n', stderr: '' })
  })

  it('exits 1 with the failure and its program line', { timeout: 240_000 }, async () => {
    const result = await ptcRun(['-', '--language', 'python', '--timeout', '200000'], 'x = 1\nraise ValueError("bad " + str(x))\n')
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('ValueError: bad 1\n    at program:2:1')
  })

  it('refuses an unknown language and --language with --repl', async () => {
    expect((await ptcRun(['-', '--language', 'ruby'], '')).stderr).toContain('ptc-run: --language must be one of javascript, typescript, python, got "ruby"')
    expect((await ptcRun(['--repl', '--language', 'python'], '')).stderr).toContain('--language cannot be combined with --repl')
  })
})
