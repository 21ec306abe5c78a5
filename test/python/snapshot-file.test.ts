/**
 * Where Python's interpreter snapshot lives. It once was a named file in the host's temporary
 * directory: a program whose writable root held that directory could swap the snapshot's
 * directory for one whose file was a link to any host file, which bubblewrap then bound into
 * later helpers, where the program read it; and a host that ended without its `exit` event
 * (SIGKILL, SIGTERM) left its 31 MB there for good. Now no path names it.
 *
 * The host runs with a temporary directory of its own (TMPDIR), which is the writable root.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isUnnamedFile } from '../helpers/leaks.js'
import { bwrap } from '../helpers/sandbox.js'
import { startRuntime } from '../helpers/runtime.js'

const SLOW = { timeout: 240_000 }
const SECRET = 'python-snapshot-secret-3e9a'

describe.skipIf(!bwrap)('the Python snapshot', () => {
  const originalTmpdir = process.env.TMPDIR
  // The host's temporary directory, and a secret the policy hides, in the user's home as a token
  // file would be. The links are relative: bubblewrap resolves them on the host for the source,
  // and in the helper's view for the mount point, which it makes in the private home.
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'ptc-python-tmpdir-'))
  const secret = path.join(os.homedir(), `.ptc-python-secret-${process.pid}`)
  const workspace = mkdtempSync(path.join(tmp, 'workspace-'))
  let env: Awaited<ReturnType<typeof startRuntime>>
  const run = (program: string) => env.run(program, { timeoutMs: 90_000 })

  beforeAll(async () => {
    writeFileSync(secret, SECRET, { mode: 0o600 })
    process.env.TMPDIR = tmp
    env = await startRuntime({ language: 'python', poolSize: 1, sandbox: { mode: 'workspace-write', workspaceRoot: workspace, writableRoots: [tmp] } })
  }, 240_000)
  afterAll(async () => {
    await env?.dispose()
    if (originalTmpdir === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = originalTmpdir
    rmSync(tmp, { recursive: true, force: true })
    rmSync(secret, { force: true })
  })

  it('is no file in the host’s temporary directory', SLOW, async () => {
    expect((await run('return 6 * 7')).value).toBe(42)
    expect(readdirSync(tmp).filter((name) => name.startsWith('ptc-runtime-python-'))).toEqual([])
  })

  it('is restored by confined helpers, none of whose programs holds its descriptor', SLOW, async () => {
    // CPython draws its hash seed as it boots: environments restored from one snapshot share it.
    const program = `import js
fs = js.process.getBuiltinModule("fs")
links = []
for fd in fs.readdirSync("/proc/self/fd"):
    try:
        links.append(fs.readlinkSync("/proc/self/fd/" + fd))
    except Exception:
        pass
return {"hash": hash("ptc-runtime"), "descriptors": links}`
    const [first, second] = [await run(program), await run(program)]
    expect(first.error).toBeUndefined()
    expect((first.value as { hash: number }).hash).toBe((second.value as { hash: number }).hash)
    for (const result of [first, second]) expect((result.value as { descriptors: string[] }).descriptors.filter(isUnnamedFile)).toEqual([])
  })

  it('is held by no JavaScript program of a runtime in the same host', SLOW, async () => {
    // Its helpers are handed the snapshot this host built, and let it go before a program runs.
    const other = await startRuntime({ poolSize: 1 })
    try {
      const result = await other.run(`const { readdirSync, readlinkSync } = await import('node:fs')
return readdirSync('/proc/self/fd').flatMap((fd) => { try { return [readlinkSync('/proc/self/fd/' + fd)] } catch { return [] } })`)
      expect(result.error).toBeUndefined()
      expect((result.value as string[]).filter(isUnnamedFile)).toEqual([])
    } finally {
      await other.dispose()
    }
  })

  it('is held by no initializer of a JavaScript runtime that runs a Python request', SLOW, async () => {
    // The initializer runs before the Python program, and before the interpreter loads.
    const other = await startRuntime({ poolSize: 1 })
    try {
      other.runtime.registerEnvironmentInitializer(`const { readdirSync, readlinkSync } = await import('node:fs')
globalThis.seen = readdirSync('/proc/self/fd').flatMap((fd) => { try { return [readlinkSync('/proc/self/fd/' + fd)] } catch { return [] } })`)
      const result = await other.run('import js\nreturn [str(link) for link in js.seen]', { language: 'python', timeoutMs: 90_000 })
      expect(result.error).toBeUndefined()
      expect((result.value as string[]).length).toBeGreaterThan(0)
      expect((result.value as string[]).filter(isUnnamedFile)).toEqual([])
    } finally {
      await other.dispose()
    }
  })

  it('cannot be swapped for a host file by a program whose writable root holds that directory', SLOW, async () => {
    // Every file under the runtime's directories in the temporary directory becomes a link to the secret.
    const swap = await run(`import js
fs = js.process.getBuiltinModule("fs")
relative = js.process.getBuiltinModule("path").relative
tmp = ${JSON.stringify(tmp)}
swapped = []
for name in fs.readdirSync(tmp):
    if not name.startswith("ptc-runtime-python-"):
        continue
    directory = tmp + "/" + name
    files = list(fs.readdirSync(directory))
    fs.renameSync(directory, directory + "-aside")
    fs.mkdirSync(directory)
    for file in files:
        fs.symlinkSync(relative(directory, ${JSON.stringify(secret)}), directory + "/" + file)
        swapped.append(directory + "/" + file)
return swapped`)
    expect(swap.error).toBeUndefined()
    // Helpers started after the swap: the first may have been the spare started before it.
    for (let attempt = 0; attempt < 3; attempt++) {
      const read = await run(`import js
fs = js.process.getBuiltinModule("fs")
found = []
for file in ${JSON.stringify(swap.value)}:
    try:
        found.append(fs.readFileSync(file, "utf8"))
    except Exception as error:
        found.append(str(error))
return found`)
      expect(read.error).toBeUndefined()
      expect(JSON.stringify(read.value)).not.toContain(SECRET)
    }
    expect((await run('return "still runs"')).value).toBe('still runs')
  })
})
