/**
 * The plain tier (src/host/environments/plain/tier.ts): the smallest tier, one file and one line
 * in `TIERS`, which supplies only a pipe. Everything else it gets from the connection and the
 * pipe environment; the suite every pipe tier runs (pipe-tier-suite.ts) shows that it is enough:
 * calls, output, state, a timeout, forged traffic, the memory budget, disposal.
 */
import { spawnSync } from 'node:child_process'
import { describePipeTier } from './pipe-tier-suite.js'

/** The pids of the helpers (`helper.cjs`) this test process started, still running. */
const helperPids = (): number[] =>
  spawnSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' }).stdout.split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => Number(fields[1]) === process.pid && fields.some((field) => field.endsWith('helper.cjs')))
    .map((fields) => Number(fields[0]))

// Its sweep finds what a program started by the marker it inherits, even in a session of its own.
describePipeTier({ name: 'plain', isolation: 'plain', running: helperPids, endsDetachedSubprocesses: true })
