/**
 * Builds the container image the `container` isolation tier runs its helper in. No image
 * registry is assumed reachable, so the image starts from nothing: a root file system assembled
 * from this machine's Node executable, the shared libraries it and `/bin/sh` load, and this
 * package's helper files, packed with `tar` and imported with `<engine> import`.
 */
import { spawn } from 'node:child_process'
import { accessSync, constants, existsSync, readFileSync } from 'node:fs'
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { packageRoot } from '../../sandbox/runtime-files.js'

const VERSION = (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version

/** The image the container tier runs unless told otherwise: one per package version, since the helper files inside must match the host's. */
export const DEFAULT_IMAGE = `ptc-runtime:${VERSION}`

/** The built files the image runs, found next to this module in `dist/`. */
const HELPER_FILES = ['helper.cjs', 'worker.cjs', 'stream-entry.cjs']

/** Where Node lives in the image. */
const NODE_IN_IMAGE = '/usr/local/bin/node'

// Root and an unprivileged user for the helper; home is /tmp, the only writable directory.
const PASSWD = 'root:x:0:0:root:/:/bin/sh\nptc:x:1000:1000:ptc:/tmp:/bin/sh\n'
const GROUP = 'root:x:0:\nptc:x:1000:\n'

/** What `buildImage` builds with, and where it reports its steps. */
export interface BuildImageOptions {
  /** `podman` or `docker` (a name on PATH, or a path); the first of them on PATH by default. */
  engine?: string
  /** The image's name; {@link DEFAULT_IMAGE} by default. */
  tag?: string
  /** The Node executable to put in the image; the one running this code by default. */
  node?: string
  /** Receives one line per step. */
  log?: (line: string) => void
}

/** Builds the image and returns its tag. Throws an `Error` saying what is missing or what failed. */
export async function buildImage(options: BuildImageOptions = {}): Promise<string> {
  const engine = findEngine(options.engine)
  const tag = options.tag ?? DEFAULT_IMAGE
  const node = options.node ?? process.execPath
  const log = options.log ?? (() => {})
  const helperFiles = HELPER_FILES.map((name) => {
    const file = fileURLToPath(new URL(`./${name}`, import.meta.url))
    if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`)
    return file
  })

  const root = await mkdtemp(path.join(os.tmpdir(), 'ptc-image-'))
  try {
    log(`assembling the root file system in ${root}`)
    const libraries = new Set([...(await sharedLibraries(node)), ...(await sharedLibraries('/bin/sh'))])
    await place(root, NODE_IN_IMAGE, node)
    await place(root, '/bin/sh', '/bin/sh')
    for (const library of libraries) await place(root, library, library)
    for (const file of helperFiles) await place(root, `/ptc/${path.basename(file)}`, file)
    log(`copied ${node}, /bin/sh, ${libraries.size} shared libraries and ${helperFiles.length} helper files`)
    for (const directory of ['proc', 'dev', 'sys', 'etc']) await mkdir(path.join(root, directory))
    // mkdir's mode is masked by the umask; chmod sets the sticky bit exactly.
    await mkdir(path.join(root, 'tmp'))
    await chmod(path.join(root, 'tmp'), 0o1777)
    await writeFile(path.join(root, 'etc', 'passwd'), PASSWD)
    await writeFile(path.join(root, 'etc', 'group'), GROUP)

    log(`importing into ${engine} as ${tag}`)
    // Owned by root whoever builds, so the unprivileged user cannot change the helper's files.
    const tar = start('tar', ['-C', root, '--owner=0', '--group=0', '--numeric-owner', '-c', '.'])
    const changes = ['WORKDIR /tmp', `CMD ${JSON.stringify([NODE_IN_IMAGE, '/ptc/stream-entry.cjs'])}`]
    const imported = start(engine, ['import', ...changes.flatMap((change) => ['--change', change]), '-', tag], tar.stdout)
    imported.stdout.resume()
    const [packed, done] = await Promise.all([tar.exit, imported.exit])
    if (packed.code !== 0) throw new Error(`tar failed (exit ${packed.code}): ${packed.stderr.trim()}`)
    if (done.code !== 0) throw new Error(`${engine} import failed (exit ${done.code}): ${done.stderr.trim()}`)
    log(`built ${tag}`)
    return tag
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

/** Whether `engine` has an image named `tag`. */
export async function imageExists(engine: string, tag: string): Promise<boolean> {
  const args = path.basename(engine).startsWith('podman') ? ['image', 'exists', tag] : ['image', 'inspect', tag]
  const probe = start(engine, args)
  probe.stdout.resume()
  return (await probe.exit).code === 0
}

function findEngine(requested: string | undefined): string {
  if (requested !== undefined) {
    if (!isExecutable(requested)) throw new Error(`container engine ${requested} not found${requested.includes('/') ? '' : ' on PATH'}`)
    return requested
  }
  const found = ['podman', 'docker'].find(isExecutable)
  if (found === undefined) throw new Error('no container engine found on PATH: install podman (or docker)')
  return found
}

/** Whether `command` is an executable path, or names one on PATH. */
function isExecutable(command: string): boolean {
  const candidates = command.includes('/') ? [command] : (process.env.PATH ?? '').split(path.delimiter).filter(path.isAbsolute).map((directory) => path.join(directory, command))
  return candidates.some((candidate) => {
    try {
      accessSync(candidate, constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/** The shared libraries `binary` loads, the dynamic loader included, at the paths it asks for. */
async function sharedLibraries(binary: string): Promise<string[]> {
  const ldd = start('ldd', [binary])
  let listing = ''
  ldd.stdout.setEncoding('utf8').on('data', (chunk: string) => (listing += chunk))
  const { code, stderr } = await ldd.exit
  if (code !== 0) {
    // A static executable needs no libraries.
    if (/not a dynamic executable/.test(stderr)) return []
    throw new Error(`ldd ${binary} failed (exit ${code}): ${stderr.trim()}`)
  }
  return listing.split('\n').flatMap((line) => {
    const missing = /^\s*(\S+) => not found/.exec(line)
    if (missing) throw new Error(`${binary} needs ${missing[1]}, which is not installed`)
    // "libc.so.6 => /lib/.../libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)";
    // the kernel's vDSO has no path and is skipped.
    const found = /(\/\S+) \(0x[0-9a-f]+\)$/.exec(line.trim())
    return found ? [found[1]!] : []
  })
}

/** Copies the content of `source` (symbolic links followed) to `target` inside `root`. */
async function place(root: string, target: string, source: string): Promise<void> {
  const destination = path.join(root, target)
  await mkdir(path.dirname(destination), { recursive: true })
  await copyFile(source, destination)
}

interface Exit {
  code: number | null
  stderr: string
}

/**
 * Starts `command` with an argument array (never a shell), feeding it `input`. Its stdout is left
 * for the caller to consume; `exit` settles when it has exited, with what it wrote to stderr.
 */
function start(command: string, args: readonly string[], input?: Readable): { stdout: Readable; exit: Promise<Exit> } {
  const child = spawn(command, args, { stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] })
  if (input) {
    // A command that stops reading early says why in its exit status and stderr.
    child.stdin!.on('error', () => {})
    input.pipe(child.stdin!)
  }
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exit = new Promise<Exit>((resolve, reject) => {
    child.on('error', (error: NodeJS.ErrnoException) => reject(error.code === 'ENOENT' ? new Error(`${command} not found: it is needed to build the image`) : error))
    child.on('close', (code) => resolve({ code, stderr }))
  })
  return { stdout: child.stdout!, exit }
}
