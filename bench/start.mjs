/**
 * Table: where a fresh confined environment's start goes, beside the thread tier's start in the
 * same rounds. The process tier's default confinement (bubblewrap, `workspace-write`) serves
 * `return 1` with no pooled environment; the bench records the command line the runtime spawns
 * its helper with (by wrapping `child_process.spawn`, which changes nothing else) and then
 * replays growing prefixes of that start itself, with the same descriptors and seccomp filter:
 *
 *   bubblewrap and namespaces   the wrapper scripts and bwrap running `/bin/true`, outside the
 *                                helpers' CPU group
 *   the CPU group                the same, moving into the group first, as every helper does
 *   Node's start                 bwrap running `node -e` that writes one byte to the channel
 *   the environment, restored    the helper (the environment's bundle on the process's main
 *   from its snapshot            thread), restored from the runtime's startup snapshot, without
 *                                a rehearsal, up to its `ready` frame
 *   the rehearsal                the helper as spawned, up to its `ready` frame
 *   the run and teardown         the rest of a whole fresh run of `return 1`
 *
 * and, for comparison, a helper that loads its bundle instead of restoring the snapshot (as the
 * helpers that start before the snapshot is made do), and the layout the process tier had before
 * (and the stream tier's helper keeps): a helper that starts a worker of its own for the program,
 * each up to its `ready` frame.
 *
 * Each part is the difference of two medians, so parts are estimates; the cumulative column is
 * measured. Beside each row, CPU time, which a loaded machine changes less than the wall clock
 * (helpers run at SCHED_IDLE, so they wait while anything else runs): for a replay, every thread
 * of its processes until the first byte (/proc's schedstat); for the thread tier's fresh run,
 * the host process's (its worker included, once it has exited); for the whole fresh confined run,
 * the host's own part. `node bench/run.mjs start`.
 */
import childProcess, { spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { startOurs } from './ours.mjs'
import { fmt, interleave, machine, note, now, scale, settle, summarize, table, target, times } from './stats.mjs'

const ROUNDS = scale(6, 2)
const PER = scale(5, 2)
const CHANNEL_FD = 3
const SECCOMP_FD = 4

// Records the helper's command line and the bytes bwrap reads (the seccomp filter).
let recorded
const original = childProcess.spawn
childProcess.spawn = function (command, args, options) {
  const child = original.call(this, command, args, options)
  if (command === '/bin/sh' && args.includes('--') && !recorded) {
    const input = child.stdio[SECCOMP_FD]
    const end = input?.end
    if (input && end) {
      input.end = function (chunk, ...rest) {
        recorded = { command, args: [...args], options, input: Buffer.from(chunk) }
        return end.call(this, chunk, ...rest)
      }
    }
  }
  return child
}
syncBuiltinESMExports()

/** CPU time in ms of every live thread of `pid` and of its descendants (schedstat: nanoseconds on the CPU). */
function treeCpuMs(pid) {
  let total = 0
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
      for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean)) total += treeCpuMs(Number(child))
    }
  } catch {
    // it ended while we looked
  }
  return total
}

const hostCpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

const confined = await startOurs({ isolation: 'process', poolSize: 0 })
const thread = await startOurs({ isolation: 'thread', poolSize: 0 })
const fresh = (ours) => async () => {
  const cpu = hostCpuMs()
  const begin = now()
  const result = await ours.run({ program: 'return 1', bindings: [] })
  const wall = now() - begin
  if (result.error || result.value !== 1) throw new Error(`bench run failed: ${JSON.stringify(result.error ?? result.value)}`)
  await settle() // the worker's exit, after the result, counts too
  return { wall, cpu: hostCpuMs() - cpu }
}
// The helpers start from the runtime's startup snapshot once it is made in the background: the
// command line recorded is the first one that does.
const SNAPSHOT_FLAG = '--snapshot-blob'
const deadline = now() + 30_000
for (;;) {
  recorded = undefined
  await fresh(confined)()
  if (!recorded) throw new Error('bench: the helper\'s command line was not seen (is bubblewrap confining here?)')
  if (recorded.args.includes(SNAPSHOT_FLAG)) break
  if (now() > deadline) throw new Error('bench: no helper started from the startup snapshot within 30 s')
  await new Promise((resolve) => setTimeout(resolve, 50))
}

// The argv is: sh -c LIMITS ptc-helper KB CPUGROUP bwrap ...args -- [sh -c ulimit ptc-limits N] node FLAGS worker.cjs OPTIONS
const separator = recorded.args.indexOf('--')
const outer = recorded.args.slice(0, separator + 1)
const inner = recorded.args.slice(separator + 1)
const nodeAt = inner.indexOf(process.execPath)
const prelude = inner.slice(0, nodeAt)
const node = inner[nodeAt]
const flags = inner.slice(nodeAt + 1, -2)
const snapshotAt = flags.indexOf(SNAPSHOT_FLAG)
const loadingFlags = flags.toSpliced(snapshotAt, 2)
const [helperFile, options] = inner.slice(-2)
const workerHostingHelper = helperFile.replace(/worker\.cjs$/, 'helper.cjs')

// The wrapper's arguments after its script are `ptc-helper KB GROUPFILE`: an empty one stays out.
const GROUP_AT = 4
if (!(outer[GROUP_AT] === '' || /\/(tasks|cgroup\.procs)$/.test(outer[GROUP_AT]))) throw new Error(`bench: the wrapper's arguments changed (${outer.slice(2, GROUP_AT + 1).join(' ')})`)
const outsideGroup = outer.with(GROUP_AT, '')

/** Spawns `innerCommand` under the recorded wrapper (`wrapper`); resolves when a byte arrives on the channel or the process exits. */
function replay(innerCommand, wrapper = outer) {
  return () => new Promise((resolve, reject) => {
    const begin = now()
    // The sixth descriptor is the startup snapshot's, the runtime's own (it stays open while the runtime runs).
    const child = original('/bin/sh', [...wrapper, ...innerCommand], { ...recorded.options, stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe', 'pipe', recorded.options.stdio[6]] })
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.stdio[SECCOMP_FD].on('error', () => undefined).end(recorded.input)
    let done = false
    const finish = (ok) => {
      if (done) return
      done = true
      // A process that already exited (bwrap running /bin/true) left no CPU time to read.
      const elapsed = { wall: now() - begin, cpu: ok === 'byte' ? treeCpuMs(child.pid) : NaN }
      child.kill('SIGKILL')
      child.once('close', () => (ok ? resolve(elapsed) : reject(new Error(`replay failed: ${stderr.trim()}`))))
    }
    child.stdio[CHANNEL_FD].once('data', () => finish('byte'))
    child.once('exit', (code) => finish(code === 0 && 'exit'))
  })
}

const withoutRehearsal = JSON.stringify({ ...JSON.parse(options), rehearsal: undefined })
const STAGES = [
  ['bubblewrap and namespaces', replay([...prelude, '/bin/true'], outsideGroup)],
  ["the helpers' CPU group", replay([...prelude, '/bin/true'])],
  ["Node's start", replay([...prelude, node, '--no-warnings', '-e', "require('fs').writeSync(3, 'x')"])],
  ["the environment, restored from its snapshot", replay([...prelude, node, ...flags, helperFile, withoutRehearsal])],
  ['the rehearsal', replay([...prelude, node, ...flags, helperFile, options])],
  ['the run and teardown', fresh(confined)],
]
const BEFORE = 'for comparison: a helper with a worker of its own, until ready'
const LOADING = 'for comparison: a helper that loads its bundle (no snapshot), until ready'
const BASELINE = 'thread tier, fresh `return 1`'
for (const [, sample] of STAGES) await sample()
const before = replay([...prelude, node, '--no-warnings', workerHostingHelper, options])
const loading = replay([...prelude, node, ...loadingFlags, helperFile, options])
await before()
await loading()
const samples = await interleave([
  { name: BASELINE, sample: fresh(thread) },
  ...STAGES.map(([name, sample]) => ({ name, sample })),
  { name: LOADING, sample: loading },
  { name: BEFORE, sample: before },
], { rounds: ROUNDS, per: PER })
await Promise.all([confined.dispose(), thread.dispose()])

const median = (name) => summarize(samples.get(name).map((sample) => sample.wall)).median
const cpuOf = (name) => summarize(samples.get(name).map((sample) => sample.cpu)).median
const base = median(BASELINE)
console.log(`\n## Where a fresh confined environment's start goes\n\n${machine()}; ${ROUNDS} interleaved rounds of ${PER}.`)
let previous = 0
table(
  'A fresh environment serving `return 1` (medians, ms; parts are differences of cumulative medians)',
  ['part', 'part ms', 'part vs thread start', 'cumulative ms', 'cumulative vs thread start', 'CPU ms'],
  [
    [BASELINE, fmt(base), times(1), fmt(base), times(1), fmt(cpuOf(BASELINE))],
    ...STAGES.map(([name]) => {
      const cumulative = median(name)
      const part = cumulative - previous
      previous = cumulative
      return [name, fmt(part), times(part / base), fmt(cumulative), times(cumulative / base), fmt(cpuOf(name))]
    }),
    [LOADING, '', '', fmt(median(LOADING)), times(median(LOADING) / base), fmt(cpuOf(LOADING))],
    [BEFORE, '', '', fmt(median(BEFORE)), times(median(BEFORE) / base), fmt(cpuOf(BEFORE))],
  ],
)
const total = median(STAGES.at(-1)[0])
target('a fresh confined start within 1.3x the thread tier\'s', times(total / base), total / base <= 1.3)
const cpuRatio = (cpuOf('the rehearsal') + cpuOf('the run and teardown')) / cpuOf(BASELINE)
note(`CPU: a helper's processes until ready plus the host's part of a confined run come to ${times(cpuRatio)} the thread tier's fresh run (an estimate that leaves out the helper's teardown); with a worker of its own, ${times((cpuOf(BEFORE) + cpuOf('the run and teardown')) / cpuOf(BASELINE))}`)
note('the last row is a whole fresh run on the default tier (bubblewrap, workspace-write, poolSize 0); the earlier rows replay its command line.')
