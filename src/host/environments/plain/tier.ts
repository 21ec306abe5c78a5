/**
 * `isolation: 'plain'`: a helper process with no confinement around it: no bubblewrap, no PID
 * namespace. The kernel still holds its memory budget (`ulimit -d`, as for every helper) and
 * runs it behind the host (SCHED_IDLE, `nice` 10): memory-limit.ts. What a program started is
 * found by its children and the marker it inherits, and killed after a run that reported one
 * and at disposal. Trusted programs only, like the thread tier; use `process` (the default) for
 * anything else.
 *
 * It is the smallest tier, and the example of adding one (ARCHITECTURE.md): this file and its
 * line in `tiers.ts`. It supplies only its pipe, the helper's descriptors: a frame written to
 * one of them, the channel's bytes handed to the connection as they arrive, the helper's exit,
 * SIGKILL to its process group, its CPU time, and its sweep. The environment around the pipe is
 * `PipeEnvironment` (`../pipe.ts`). Tested by test/tiers/plain.test.ts.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import { CHANNEL_FD, type HelperOptions, INBOX_FD, PYTHON_SNAPSHOT_FD } from '../../../protocol/frames.js'
import { helperPythonSnapshot } from '../../../python/snapshot.js'
import { helperCpuGroup, holdCpuGroup } from '../../../system/cpu-group.js'
import { dataBaseline, limitedCommand } from '../../../system/memory-limit.js'
import { childrenOf, cpuMsOfTree, killProcessTrees } from '../../../system/process-sweep.js'
import { type ChannelLimits, IDLE_FRAME_BYTES, channelLimits } from '../../connection/frame-bounds.js'
import { rehearsalProgram } from '../../run/programs.js'
import { PipeEnvironment } from '../pipe.js'
import type { Tier, TierSetting } from '../tier.js'

const HELPER_FILE = fileURLToPath(new URL('./helper.cjs', import.meta.url))
/** How long a helper may take to report ready: a Node start and its worker's, on a loaded machine. */
const START_TIMEOUT_MS = 30_000

export class PlainTier implements Tier {
  readonly name = 'plain'
  readonly confines = false
  private _setting!: TierSetting
  private _limits!: ChannelLimits
  /** What a fresh helper reserves (KiB), to which the memory budget is added. */
  private _baselineKb = 0
  /** Its hold on the host's helper CPU group (cpu-group.ts), from its start to its stop. */
  private _releaseCpuGroup: (() => void) | undefined

  async start(setting: TierSetting): Promise<void> {
    this._setting = setting
    this._limits = channelLimits('frame', setting.config, IDLE_FRAME_BYTES)
    this._baselineKb = await dataBaseline(setting.config.maxOldGenerationSizeMb)
    this._releaseCpuGroup = holdCpuGroup()
  }

  stop(): void {
    this._releaseCpuGroup?.()
  }

  spawn(): PipeEnvironment {
    const { config } = this._setting
    const launch = { channelLimits: this._limits, startTimeoutMs: START_TIMEOUT_MS, maxMemoryMb: config.maxMemoryMb }
    return new PipeEnvironment(launch, (ends) => {
      // Every subprocess of the program inherits the marker, which finds it wherever it went.
      const marker = randomUUID()
      const python = helperPythonSnapshot()
      const options: HelperOptions = {
        maxOldGenerationSizeMb: config.maxOldGenerationSizeMb,
        rehearsal: rehearsalProgram(config.language),
        subprocessMarker: marker,
        ...(python ? { pythonSnapshot: python.snapshot } : {}),
      }
      const helper = [process.execPath, '--no-warnings', HELPER_FILE, JSON.stringify(options)]
      const descriptors: Array<'ignore' | 'pipe' | number> = ['ignore', 'pipe', 'pipe', 'pipe', 'ignore', 'pipe', 'ignore']
      if (python) descriptors[PYTHON_SNAPSHOT_FD] = python.descriptor
      // The shell sets the limits and becomes the helper (exec): the child's PID is the helper's,
      // in a session and process group of its own, so that one signal ends it and what it started.
      const child = spawn('/bin/sh', limitedCommand(this._baselineKb, config.maxMemoryMb, helper, helperCpuGroup()), {
        cwd: config.cwd, env: {}, detached: true, stdio: descriptors,
      })
      const stdio = child.stdio as unknown as Socket[]
      const [channel, inbox] = [stdio[CHANNEL_FD]!, stdio[INBOX_FD]!]
      const streams = [child.stdout as Socket, child.stderr as Socket, channel, inbox]
      // A write to a dead helper fails with EPIPE; unhandled, that 'error' would crash the host.
      for (const stream of streams) stream.on('error', () => undefined)
      for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding('utf8').on('data', ends.output)
      channel.on('data', ends.frames)
      inbox.on('data', ends.forged)
      child.on('exit', (code, signal) => {
        // Frames written just before the exit may still be unread: the channel's end first, or a
        // moment (a subprocess may hold the descriptor open).
        const drained = new Promise<void>((resolve) => {
          if (channel.readableEnded || channel.destroyed) return resolve()
          channel.once('close', resolve)
          setTimeout(resolve, 100)
        }).then(() => {
          for (const stream of streams) stream.destroy()
        })
        ends.ended(signal ? `was killed by ${signal}` : `exited with code ${code}`, signal !== null, drained)
      })
      child.on('error', (error) => child.pid === undefined && ends.ended(`could not be started (${error.message})`, false))
      return {
        write: (frame, to, written) => void (to === 'channel' ? channel : inbox).write(`${frame}\n`, written && (() => written())),
        kill: () => {
          try {
            if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
          } catch {
            // already gone
          }
        },
        busyMs: () => (child.pid === undefined ? 0 : cpuMsOfTree(child.pid)),
        hold: (held) => {
          for (const handle of [child, ...streams]) held ? handle.ref() : handle.unref()
        },
        sweep: async () => {
          const children = child.pid === undefined ? [] : childrenOf(child.pid)
          await killProcessTrees(new Set(children), marker)
          return true
        },
      }
    })
  }
}
