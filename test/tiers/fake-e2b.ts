/**
 * A fake of the part of the `e2b` SDK that docs/providers.md's provider uses, shaped as the
 * SDK's source has it: `Sandbox.create(template, { timeoutMs })`, `sandbox.kill()`,
 * `commands.run(cmd, { background, stdin, onStdout, onStderr, timeoutMs })` resolving a handle
 * with a `pid` and a `wait()` that rejects with an `exitCode` for a non-zero exit, and
 * `commands.sendStdin(pid, data)`. A sandbox's command is a real stream entry started here;
 * the SDK's own wire protocol (E2B's API and the sandbox's agent) is not faked.
 */
import type { ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { killSandbox, spawnEntry } from '../helpers/stream.js'

/** Where the template puts the entry (docs/providers.md runs `node /ptc/stream-entry.cjs`). */
const ENTRY_COMMAND = 'node /ptc/stream-entry.cjs'

interface RunOptions {
  background: true
  stdin: true
  timeoutMs: number
  onStdout: (data: string) => void
  onStderr: (data: string) => void
}

export class FakeE2BSandbox {
  readonly sandboxId = `i${randomUUID().slice(0, 8)}`
  killed = false
  /** Why E2B ended it, when it did (its timeout passed). */
  private _ended: string | undefined
  private readonly _commands = new Map<number, ChildProcess>()

  constructor(readonly timeoutMs: number) {}

  readonly commands = {
    run: (cmd: string, options: RunOptions) => this._run(cmd, options),
    sendStdin: (pid: number, data: Uint8Array) =>
      new Promise<void>((resolve, reject) => {
        const command = this._commands.get(pid)
        if (this.killed || !command) return reject(new Error(`sandbox ${this.sandboxId} not found`))
        command.stdin!.write(data, (error) => (error ? reject(error) : resolve()))
      }),
  }

  async kill(): Promise<void> {
    this.killed = true
    for (const command of this._commands.values()) killSandbox(command)
  }

  /** E2B ends the sandbox on its own (its timeout passed) while a command runs. */
  expire(): void {
    this._ended = `sandbox ${this.sandboxId} was killed: its timeout of ${this.timeoutMs} ms passed`
    void this.kill()
  }

  /** The entries of its commands. */
  get entries(): ChildProcess[] {
    return [...this._commands.values()]
  }

  private async _run(cmd: string, options: RunOptions) {
    if (cmd !== ENTRY_COMMAND) throw new Error(`the template runs only ${ENTRY_COMMAND}, not ${cmd}`)
    if (!options.background || !options.stdin) throw new Error('the entry needs a background command with stdin')
    const entry = spawnEntry({ detached: true })
    entry.stdin!.on('error', () => undefined)
    entry.stdout!.setEncoding('utf8').on('data', (text: string) => options.onStdout(text))
    const pid = entry.pid!
    this._commands.set(pid, entry)
    const exited = new Promise<unknown>((resolve, reject) => {
      entry.once('exit', (code) => {
        if (this.killed) return reject(new Error(this._ended ?? `sandbox ${this.sandboxId} not found`))
        if (code === 0) return resolve({ exitCode: 0 })
        reject(Object.assign(new Error(`exit status ${code}`), { exitCode: code ?? 1 }))
      })
    })
    return { pid, wait: () => exited }
  }
}

/** The service: the templates it knows, and every sandbox it made. */
export class FakeE2B {
  readonly templates = new Set(['ptc-entry'])
  readonly sandboxes: FakeE2BSandbox[] = []
  /** While set, `create` fails with this (a rate limit, an exhausted plan). */
  failing: string | undefined

  /** What the provider is given as the SDK's `Sandbox` class. */
  readonly Sandbox = {
    create: async (template: string, options: { timeoutMs: number }): Promise<FakeE2BSandbox> => {
      await new Promise((resolve) => setTimeout(resolve, 20))
      if (this.failing) throw new Error(this.failing)
      if (!this.templates.has(template)) throw new Error(`404: template '${template}' not found`)
      const sandbox = new FakeE2BSandbox(options.timeoutMs)
      this.sandboxes.push(sandbox)
      return sandbox
    },
  }

  live(): FakeE2BSandbox[] {
    return this.sandboxes.filter((sandbox) => !sandbox.killed)
  }
}
