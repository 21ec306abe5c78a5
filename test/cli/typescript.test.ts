import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDirectory } from '../helpers/sandbox.js'

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url))
const tools = fileURLToPath(new URL('./fixtures/tools.mjs', import.meta.url))
const temp = tempDirectory('ptc-cli-ts')
afterAll(() => temp.remove())

/** Runs the built ptc-run; resolves with its exit code and what it wrote. */
async function ptcRun(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [cli, ...args], { timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  )
}

function file(name: string, text: string): string {
  const where = path.join(temp.dir, name)
  writeFileSync(where, text)
  return where
}

describe('ptc-run and TypeScript', () => {
  const typed = 'const days: Array<{ highC: number }> = await Promise.all(["Oslo", "Lima"].map((city) => weather.forecast({ city })))\nreturn days.map((day) => day.highC)\n'

  it('runs a .ts file as TypeScript by its extension, and --language typescript for any other', async () => {
    expect(await ptcRun([file('forecast.ts', typed), '--tools', tools])).toEqual({ code: 0, stdout: '[\n  14,\n  22\n]\n', stderr: '' })
    expect(await ptcRun([file('forecast.txt', typed), '--tools', tools, '--language', 'typescript'])).toMatchObject({ code: 0, stdout: '[\n  14,\n  22\n]\n' })
    expect((await ptcRun([file('as-js.js', typed), '--tools', tools])).stderr).toMatch(/^error \(exception\): SyntaxError/)
  })

  it('type-checks with --typecheck and runs nothing that does not check', async () => {
    const wrong = file('wrong.ts', 'const n: number = "x"\nconsole.log("ran")\n')
    expect(await ptcRun([wrong, '--typecheck'])).toEqual({
      code: 1,
      stdout: '',
      stderr: "error (exception): The program does not type-check against the declared tools; nothing ran.\nTS2322: Type 'string' is not assignable to type 'number'. (line 1, column 7)\n",
    })
    expect(await ptcRun([file('right.ts', typed), '--typecheck', '--tools', tools])).toMatchObject({ code: 0, stdout: '[\n  14,\n  22\n]\n' })
  })

  it('refuses an unknown --language, naming the choices', async () => {
    expect(await ptcRun([file('x.ts', 'return 1'), '--language', 'ruby'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--language must be one of javascript, typescript, python, got "ruby"') })
  })
})
