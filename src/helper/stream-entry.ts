/**
 * The stream entry: the far end of a stream-tier environment (`isolation: { stream }` or
 * `'container'`). It runs where the deployer's stream leads (a container, a remote sandbox),
 * reads the stream on its stdin and writes it on its stdout, and there starts one helper
 * (src/helper/main.ts) exactly as the process tier does on the host: its channel and the
 * worker's inbox are socket pairs on descriptors 3 and 5, and its writable memory is capped by
 * the kernel (`ulimit -d`) at what a fresh helper holds here plus the environment's budget.
 * Each line of the stream is one `HostLine` or `EntryLine` (src/protocol/frames.ts); the first it writes
 * announces its protocol version (`hello`), and it starts nothing for a host of another.
 *
 * With `--listen [host:]port` it serves the first TCP connection on that port instead of its
 * stdio, and stops listening: for a sandbox the host reaches over the network (a Kubernetes pod
 * it connects to; keep the port closed to everyone else, as a NetworkPolicy does).
 *
 * It shares its machine with the program, so the host trusts nothing it says: the boundary on
 * these tiers is the container or sandbox the stream leads into, and killing the environment
 * means closing the stream and deleting that sandbox, never asking the entry.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { type Socket, createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { CHANNEL_FD, type EntryLine, FrameReader, type HostLine, INBOX_FD, STREAM_PROTOCOL_VERSION, type StreamStart, encodeLine } from '../protocol/frames.js'
import { dataBaseline, limitedCommand, nodeBuild } from '../system/memory-limit.js'
import { childrenOf, cpuMsOfTree, isDead, killProcessTrees, nothingElseRuns } from '../system/process-sweep.js'

const HELPER_FILE = fileURLToPath(new URL('./helper.cjs', import.meta.url))
/** After the helper exits, how long to wait for frames it wrote just before. */
const EXIT_DRAIN_MS = 100

let helper: ChildProcess | undefined
let channel: Socket | undefined
let inbox: Socket | undefined
let marker = ''
let closing = false
/** Where lines to the host go: stdout, or the connection `--listen` accepted. */
let toHost: NodeJS.WritableStream = process.stdout

function send(line: EntryLine | string): void {
  if (closing) return
  toHost.write(typeof line === 'string' ? line : encodeLine(line))
}

/** The host closed the stream, or the helper is gone: nothing here outlives either. */
function close(code = 0): void {
  if (closing) return
  closing = true
  if (helper?.pid !== undefined) {
    try {
      process.kill(-helper.pid, 'SIGKILL') // the helper's process group: it and what it started
    } catch {
      // already gone
    }
  }
  process.exit(code)
}

/** Where cgroup v2 and v1 count the OOM killer's kills in this cgroup (a container's memory limit). */
const OOM_COUNTS = ['/sys/fs/cgroup/memory.events', '/sys/fs/cgroup/memory/memory.oom_control']

/** How many times the kernel's OOM killer acted in this cgroup. */
function oomKills(): number {
  for (const file of OOM_COUNTS) {
    try {
      return Number(/oom_kill (\d+)/.exec(readFileSync(file, 'utf8'))?.[1] ?? 0)
    } catch {
      // not this cgroup version
    }
  }
  return 0
}
const oomKillsAtStart = oomKills()

async function start(options: StreamStart): Promise<void> {
  marker = options.helper.subprocessMarker
  const node = [process.execPath, '--no-warnings', HELPER_FILE, JSON.stringify(options.helper)]
  // Measuring costs a Node start; the container image runs the host's own Node, measured already.
  const { baseline } = options
  const baselineKb = baseline.node === nodeBuild() ? baseline.kb : await dataBaseline(options.helper.maxOldGenerationSizeMb)
  const child = spawn('/bin/sh', limitedCommand(baselineKb, options.maxMemoryMb, node), {
    env: {},
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'ignore', 'pipe'],
  })
  helper = child
  channel = child.stdio[CHANNEL_FD] as Socket
  inbox = (child.stdio as unknown as Socket[])[INBOX_FD]!
  for (const stream of [child.stdout!, child.stderr!, channel, inbox]) stream.on('error', () => undefined)
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding('utf8')
    stream.on('data', (text: string) => send(['output', text]))
  }
  const frames = new FrameReader(options.maxFrameBytes)
  channel.on('data', (chunk: Buffer) => {
    const whole = frames.readLines(chunk, chunk.length, (text) => {
      send(`["channel",${text}]\n`)
      return true
    })
    if (whole) return
    channel!.pause()
    send(['forged'])
  })
  // Nothing genuine comes back on the inbox: bytes there were written by the program.
  inbox.on('data', () => {
    inbox!.pause()
    send(['forged'])
  })
  let exited = false
  const exit = (describe: string) => {
    if (exited) return
    exited = true
    const drained = new Promise<void>((resolve) => (channel!.readableEnded || channel!.destroyed ? resolve() : channel!.once('close', () => resolve())))
    void Promise.race([drained, new Promise((resolve) => setTimeout(resolve, EXIT_DRAIN_MS))]).then(() => {
      if (closing) return
      toHost.write(encodeLine(['ended', describe, oomKills() > oomKillsAtStart]), () => close())
    })
  }
  child.on('exit', (code, signal) => exit(signal ? `was killed by ${signal}` : `exited with code ${code}`))
  child.on('error', (error) => exit(`could not be started (${error.message})`))
}

/** How many times a sweep of the namespace looks again for processes forked while it killed. */
const SWEEP_ROUNDS = 8

/**
 * Kills what the program started. Where the entry is the init of its PID namespace (a
 * container), that is every process but the entry and the helper: an orphan that shed the
 * marker is reparented to the entry, out of the helper's tree. Elsewhere, the helper's tree and
 * everything carrying the marker; a remote sandbox should run the entry as its namespace's init.
 */
async function sweep(): Promise<void> {
  const pid = helper?.pid
  if (pid === undefined) return send(['swept', false])
  if (process.pid !== 1) {
    await killProcessTrees(new Set(childrenOf(pid)), marker)
    return send(['swept', childrenOf(pid).every((child) => isDead(child))])
  }
  for (let round = 0; round < SWEEP_ROUNDS; round++) {
    const others = strangers(pid)
    if (others.length === 0 && nothingElseRuns('/proc', [process.pid, pid])) return send(['swept', true])
    for (const other of others) {
      try {
        process.kill(other, 'SIGKILL')
      } catch {
        // already gone
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  send(['swept', nothingElseRuns('/proc', [process.pid, pid])])
}

/** The namespace's living processes other than the entry and the helper. */
function strangers(helperPid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => pid !== process.pid && pid !== helperPid && !isDead(pid))
}

function receive(line: HostLine): void {
  switch (line[0]) {
    case 'start':
      if (helper) return
      if (line[1].protocol !== STREAM_PROTOCOL_VERSION) {
        const theirs = typeof line[1].protocol === 'number' ? `protocol ${line[1].protocol}` : 'no protocol version'
        const refusal = `could not be started: the stream entry speaks protocol ${STREAM_PROTOCOL_VERSION} and the host ${theirs}; deploy the entry of the host's ptc-runtime`
        return void toHost.write(encodeLine(['ended', refusal, false]), () => close(1))
      }
      return void start(line[1]).catch((error: Error) => {
        send(['ended', `could not be started (${error.message})`, false])
        close(1)
      })
    case 'sweep':
      return void sweep()
    case 'busy':
      // As its namespace's init, every orphan is the entry's child: the whole namespace counts.
      return send(['busy', helper?.pid === undefined ? 0 : cpuMsOfTree(process.pid === 1 ? 1 : helper.pid)])
  }
}

/** The prefixes of the lines that carry a frame on: their frame is passed on as written. */
const CHANNEL_LINE = '["channel",'
const INBOX_LINE = '["inbox",'

/** Serves the host on `input` and `output`, announcing the protocol version first. */
function serve(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): void {
  toHost = output
  send(['hello', STREAM_PROTOCOL_VERSION])
  // The host's lines are trusted, and a torn one means the host is gone.
  const reader = new FrameReader(Number.POSITIVE_INFINITY)
  input.on('data', (chunk: Buffer) => {
    const whole = reader.readLines(chunk, chunk.length, (text) => {
      if (text.startsWith(INBOX_LINE)) inbox?.write(`${text.slice(INBOX_LINE.length, -1)}\n`)
      else if (text.startsWith(CHANNEL_LINE)) channel?.write(`${text.slice(CHANNEL_LINE.length, -1)}\n`)
      else receive(JSON.parse(text) as HostLine)
      return true
    })
    if (!whole) close(1)
  })
  input.on('end', () => close())
  input.on('error', () => close())
  output.on('error', () => close())
}

const listen = process.argv.indexOf('--listen')
if (listen === -1) serve(process.stdin, process.stdout)
else {
  const address = /^(?:(.+):)?(\d+)$/.exec(process.argv[listen + 1] ?? '')
  if (!address) throw new Error(`--listen takes [host:]port, got ${process.argv[listen + 1]}`)
  const server = createServer({ noDelay: true }, (socket) => {
    server.close() // one host, once
    serve(socket, socket)
  })
  server.listen(Number(address[2]), address[1])
}
