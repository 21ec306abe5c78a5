/**
 * The kernel's cap on what one helper may allocate, shared by every tier that starts helpers:
 * the process tier on this machine, and the stream entry inside a container or a remote sandbox
 * (src/helper/stream-entry.ts), which measures its own Node's reservation there.
 */
import { execFile } from 'node:child_process'

/**
 * Runs before the helper: makes it the kernel OOM killer's first choice, caps its writable
 * memory (V8 heap, array buffers, WebAssembly memory, malloc) at `$1` KiB, joins the host's
 * helper CPU group through its file `$2` (cpu-group.ts; none when empty: `0`, written by the
 * shell's own `echo`, is the shell itself), moves itself to the
 * SCHED_IDLE scheduling class (`chrt`, where installed), then becomes the helper (or bubblewrap)
 * at `nice` 10 (where installed). A SCHED_IDLE thread has the CPU only when no ordinary one
 * wants it, and is preempted as soon as one wakes: fifty programs spinning cannot delay the
 * host's timers and deadlines (at `nice` 10 alone their weight out-weighed the host's about five
 * to one), and they share what the host leaves fairly among themselves. The nice value keeps a
 * program from moving back: leaving SCHED_IDLE needs CAP_SYS_NICE, or an RLIMIT_NICE that allows
 * its nice value. `ulimit -d` sets RLIMIT_DATA; all three are inherited by every thread and
 * process the helper starts. `ulimit -c 0`: a helper whose heap reaches its cap aborts (V8's
 * fatal out-of-memory), and no core of it is written where the program's files are.
 *
 * RLIMIT_DATA counts writable mappings, reserved or used, and a fresh Node process with one
 * worker reserves very different amounts by version (measured: about 64 MiB on Node 20, about
 * 1.1 GiB on Node 24, nearly all of it untouched). So the limit is that reservation, measured
 * once per Node binary and heap cap (`dataBaseline`), plus the budget: the program may
 * allocate `maxMemoryMb` beyond what its fresh environment holds.
 */
const LIMITS_SCRIPT =
  '{ echo 1000 >/proc/self/oom_score_adj; } 2>/dev/null; ulimit -d "$1" || exit 125; ulimit -c 0 2>/dev/null; ' +
  '[ -z "$2" ] || { echo 0 >"$2"; } 2>/dev/null; shift 2; ' +
  'chrt --idle --pid 0 $$ >/dev/null 2>&1; command -v nice >/dev/null 2>&1 && exec nice -n 10 "$@"; exec "$@"'

/**
 * The `/bin/sh` arguments that run `command` under `LIMITS_SCRIPT`, its writable memory capped at
 * `maxMemoryMb` beyond `baselineKb`, what a fresh helper reserves (`dataBaseline`), and in the
 * CPU group joined through the file `cpuGroup`, if any (`helperCpuGroup`).
 */
export function limitedCommand(baselineKb: number, maxMemoryMb: number, command: readonly string[], cpuGroup = ''): string[] {
  return ['-c', LIMITS_SCRIPT, 'ptc-helper', String(baselineKb + maxMemoryMb * 1024), cpuGroup, ...command]
}

/** A helper's own code and heap beyond the bare reservation the probe measures. */
const HELPER_MARGIN_KB = 64 * 1024
const BASELINE_TIMEOUT_MS = 10_000
const baselines = new Map<number, Promise<number>>()

/**
 * The writable memory (VmData) a Node process of this binary holds once it has started one
 * worker with this heap cap, in KiB, plus the helper's own margin. A helper that runs its
 * program on its main thread (the process tier's) is measured the same way: on Node 24 and later
 * every isolate reserves about 528 MiB of writable memory, so a program that starts a worker
 * thread of its own, as it may there, needs that much beyond its main thread's; what it really
 * uses is held to `maxMemoryMb` by the environment's budget, and this limit is the kernel's
 * backstop. Measured once per heap cap with a throwaway process; if that fails, a generous fixed
 * allowance stands in. The probe's worker stays alive until the reading: one that had already
 * exited had released its reservation, and helpers started under the lower limit died reserving
 * their code range (measured: 2 probes in 6 started together read 586 MB instead of 1.1 GB).
 */
export function dataBaseline(maxOldGenerationSizeMb: number): Promise<number> {
  let baseline = baselines.get(maxOldGenerationSizeMb)
  if (!baseline) {
    const script = `
      const { Worker } = require('node:worker_threads')
      const worker = new Worker('require("node:worker_threads").parentPort.postMessage(0); setInterval(() => {}, 1000)', { eval: true, resourceLimits: { maxOldGenerationSizeMb: ${maxOldGenerationSizeMb} } })
      worker.once('message', () => {
        process.stdout.write(/VmData:\\s+(\\d+)/.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))[1])
        process.exit(0)
      })`
    baseline = new Promise((resolve) => {
      execFile(process.execPath, ['-e', script], { env: {}, timeout: BASELINE_TIMEOUT_MS, encoding: 'utf8' }, (error, stdout) => {
        const measured = Number(stdout)
        const reserved = !error && Number.isSafeInteger(measured) && measured > 0 ? measured : 2 * 1024 * 1024
        // Newer V8s reserve more as code is compiled (a code range, seen failing on Node 26).
        resolve(reserved + Math.ceil(reserved / 4) + HELPER_MARGIN_KB)
      })
    })
    baselines.set(maxOldGenerationSizeMb, baseline)
  }
  return baseline
}

/** The Node build a data baseline holds for: another build measures its own. */
export function nodeBuild(): string {
  return `${process.version} ${process.arch}`
}
