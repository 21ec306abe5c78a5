import { spawn } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { containerEngine } from '../helpers/container.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const cli = path.join(root, 'dist', 'image.js')
const container = await containerEngine()

interface Exit {
  code: number | null
  stdout: string
  stderr: string
}

function run(command: string, args: string[]): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const image = (args: string[]) => run(process.execPath, [cli, ...args])

describe('ptc-runtime-image', () => {
  it('is an executable script with a node shebang', () => {
    expect(readFileSync(cli, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true)
    expect(statSync(cli).mode & 0o111).not.toBe(0)
  })

  it('rejects an unknown option with exit 2, naming it', async () => {
    const { code, stdout, stderr } = await image(['--bogus'])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/^ptc-runtime-image: Unknown option '--bogus'\n\nUsage:/)
  })

  it('fails with exit 1 naming a container engine it cannot find', async () => {
    const { code, stderr } = await image(['--engine', 'no-such-engine', '--tag', 'ptc-runtime-test:never'])
    expect(code).toBe(1)
    expect(stderr).toBe('ptc-runtime-image: container engine no-such-engine not found on PATH\n')
  })
})

describe.skipIf(!container)('the image ptc-runtime-image builds', () => {
  const { engine, runArgs } = container ?? { engine: '', runArgs: [] }
  const tag = `ptc-runtime-test:${process.pid}-${Date.now()}`
  const inImage = (command: string[], options: string[] = []) => run(engine, ['run', '--rm', ...runArgs, '--network', 'none', ...options, tag, ...command])

  beforeAll(async () => {
    const built = await image(['--engine', engine, '--tag', tag])
    expect(built, built.stderr).toMatchObject({ code: 0, stdout: `${tag}\n` })
  }, 120_000)

  afterAll(async () => {
    await run(engine, ['rmi', tag])
  })

  it('runs the Node that built it, with the helper files in /ptc', async () => {
    const script = `const fs = require('node:fs'); console.log(JSON.stringify({ version: process.version, cwd: process.cwd(), ptc: ['helper.cjs', 'worker.cjs', 'stream-entry.cjs'].map((name) => fs.existsSync('/ptc/' + name)) }))`
    const { code, stdout, stderr } = await inImage(['/usr/local/bin/node', '-e', script])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toEqual({ version: process.version, cwd: '/tmp', ptc: [true, true, true] })
  })

  it('has a /bin/sh that can set limits', async () => {
    expect(await inImage(['/bin/sh', '-c', 'ulimit -d 100000 && echo ok'])).toEqual({ code: 0, stdout: 'ok\n', stderr: '' })
  })

  it('gives the unprivileged ptc user /tmp to write in, and the helper files to read only', async () => {
    const script = `const fs = require('node:fs'); fs.writeFileSync('/tmp/x', 'x'); let denied = false; try { fs.appendFileSync('/ptc/helper.cjs', 'x') } catch (error) { denied = error.code === 'EACCES' } console.log(require('node:os').userInfo().username, denied)`
    expect(await inImage(['/usr/local/bin/node', '-e', script], ['--user', 'ptc'])).toEqual({ code: 0, stdout: 'ptc true\n', stderr: '' })
  })
})
