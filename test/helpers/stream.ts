/**
 * Streams for the stream tier in tests: the stream entry of the built package, started here as
 * a local process (`localStream`), and a fake remote sandbox service shaped like a Kubernetes
 * agent-sandbox `SandboxClaim` or an E2B sandbox (`SandboxService`): a sandbox is created
 * asynchronously, the entry is executed in it with its stdio attached, and closing the stream
 * deletes the sandbox.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Duplex } from 'node:stream'
import type { PtcBindingNamespace, PtcByteStream, PtcStreamRequest } from 'ptc-runtime'

export const ENTRY = fileURLToPath(new URL('../../dist/stream-entry.cjs', import.meta.url))

/** A binding a program calls once it runs (`probe.started()`): `running` settles then, so a test can act mid-run. */
export function startSignal(): { running: Promise<void>; namespace: PtcBindingNamespace } {
  let started!: () => void
  const running = new Promise<void>((resolve) => (started = resolve))
  return { running, namespace: { global: 'probe', functions: { started: async () => (started(), null) } } }
}

/** Whether a process is still running (a zombie counts as gone). */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  return true
}

/** Every living descendant of `pid`, from /proc. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>()
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      // The parent is the field after the command name, which may itself hold spaces or parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      parents.set(parent, [...(parents.get(parent) ?? []), Number(entry)])
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = []
  for (let queue = [pid]; queue.length > 0; ) {
    const children = parents.get(queue.pop()!) ?? []
    found.push(...children)
    queue.push(...children)
  }
  return found
}

/**
 * Ends a fake sandbox as an engine deletes one: its entry and everything under it (the helper
 * starts a process group of its own, so the entry's group is not enough).
 */
export function killSandbox(entry: ChildProcess): void {
  for (const pid of [entry.pid!, ...descendants(entry.pid!)].reverse()) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
}

/** How long a closed entry gets to end its helper's process group before it is killed. */
const CLOSE_GRACE_MS = 2_000

/**
 * The stdio of `child` as one stream. Destroying it closes the entry's stdin, on which the entry
 * kills its helper's process group and exits (a local stream has no sandbox to delete), then
 * calls `gone`; the stream closes once the child exited and its output was read.
 */
function stdioStream(child: ChildProcess, gone: () => void = () => undefined): Duplex {
  const stream = new Duplex({
    read() {},
    write(chunk, _encoding, callback) {
      child.stdin!.write(chunk, callback)
    },
    destroy(error, callback) {
      let timer: NodeJS.Timeout | undefined
      const done = () => (clearTimeout(timer), gone(), callback(error))
      if (child.exitCode !== null || child.signalCode !== null) return done()
      timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_GRACE_MS)
      child.once('exit', done)
      child.stdin!.end()
    },
  })
  child.stdin!.on('error', () => undefined)
  child.stdout!.on('data', (chunk: Buffer) => stream.push(chunk))
  // 'close', not 'exit': a child may exit before its last output is read, and the entry's last
  // line says how its helper ended.
  child.on('close', () => stream.destroy())
  return stream
}

/**
 * Starts the entry as a local process in a scratch directory of its own, which is also its home,
 * removed once it exits: programs run in the entry's working directory, and the test runner's is
 * the repository. Nothing of the host's environment goes with it: the program can read its
 * entry's (/proc/<pid>/environ).
 */
export function spawnEntry(options: { detached?: boolean; args?: string[] } = {}): ChildProcess {
  const scratch = mkdtempSync(path.join(tmpdir(), 'ptc-stream-entry-'))
  const entry = spawn(process.execPath, [ENTRY, ...(options.args ?? [])], { cwd: scratch, env: { HOME: scratch }, stdio: ['pipe', 'pipe', 'inherit'], detached: options.detached })
  entry.once('exit', () => rmSync(scratch, { recursive: true, force: true }))
  return entry
}

/** The entry as a local process: the smallest stream there is. */
export function localStream(): PtcByteStream {
  return stdioStream(spawnEntry())
}

/** One sandbox of the fake service: where its entry runs, and whether it was deleted. */
export interface FakeSandbox {
  id: string
  entry?: ChildProcess
  deleted: boolean
}

/**
 * A remote sandbox service as an agent loop meets one: `create` takes a while (a warm pool
 * would make it quick) and may fail, `exec` runs a command there with stdin and stdout
 * attached, `delete` ends the sandbox and everything in it.
 */
export class SandboxService {
  readonly sandboxes = new Map<string, FakeSandbox>()
  /** While set, `create` fails with this message. */
  failing: string | undefined

  constructor(private readonly _createMs = 20) {}

  async create(id: string): Promise<FakeSandbox> {
    await new Promise((resolve) => setTimeout(resolve, this._createMs))
    if (this.failing) throw new Error(this.failing)
    const sandbox: FakeSandbox = { id, deleted: false }
    this.sandboxes.set(id, sandbox)
    return sandbox
  }

  /** Runs the stream entry in the sandbox (a process group of its own, in a scratch directory). */
  exec(sandbox: FakeSandbox): ChildProcess {
    sandbox.entry = spawnEntry({ detached: true })
    return sandbox.entry
  }

  delete(sandbox: FakeSandbox): void {
    sandbox.deleted = true
    try {
      process.kill(-sandbox.entry!.pid!, 'SIGKILL') // the sandbox's whole process group
    } catch {
      // already gone
    }
  }

  /** Sandboxes created and not deleted. */
  live(): FakeSandbox[] {
    return [...this.sandboxes.values()].filter((sandbox) => !sandbox.deleted)
  }

  /**
   * The stream factory a deployer writes for such a service (`isolation: { stream }`): create
   * a sandbox named after the environment, run the entry there, delete the sandbox on close.
   */
  readonly stream = async ({ id }: PtcStreamRequest): Promise<PtcByteStream> => {
    const sandbox = await this.create(id)
    return stdioStream(this.exec(sandbox), () => this.delete(sandbox))
  }
}
