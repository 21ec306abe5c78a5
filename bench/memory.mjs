/**
 * Table 4: memory per idle sandbox. Each kind is measured in its own child process with
 * --expose-gc (isolated-vm's also with --no-node-snapshot): the marginal RSS of one more
 * instance between `low` and `high` instances, and what the first ones cost including
 * one-time loading.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { fmt, machine, note, scale, table } from './stats.mjs'

const run = promisify(execFile)
const CHILD = fileURLToPath(new URL('./memory-child.mjs', import.meta.url))
const K = scale(1, 0.5)

const KINDS = [
  { name: 'ptc-runtime idle pooled worker', mode: 'pooled', low: 2, high: 2 + Math.round(8 * K) },
  { name: 'ptc-runtime retained environment (retainState + stateOwner)', mode: 'retained', low: 2, high: 2 + Math.round(8 * K) },
  { name: 'bare idle Worker (no harness)', mode: 'worker', low: 2, high: 2 + Math.round(8 * K) },
  { name: 'isolated-vm isolate + context', mode: 'isolatedVm', low: 5, high: 5 + Math.round(20 * K), flags: ['--no-node-snapshot'] },
  { name: 'quickjs-emscripten runtime + context', mode: 'quickjs', low: 10, high: 10 + Math.round(200 * K) },
  { name: 'node:vm context', mode: 'vm', low: 10, high: 10 + Math.round(100 * K) },
]

async function memory() {
  console.log(`\n## Memory per idle sandbox (RSS, MB)\n\n${machine()}; each kind in its own child process with --expose-gc.`)
  const rows = []
  const skipped = []
  for (const kind of KINDS) {
    try {
      const { stdout } = await run(process.execPath, [...(kind.flags ?? []), '--expose-gc', CHILD, kind.mode, String(kind.low), String(kind.high)], {
        timeout: 120_000,
      })
      const measured = JSON.parse(stdout.trim().split('\n').at(-1))
      rows.push([kind.name, fmt(measured.perInstance), fmt(measured.first), `${kind.low} → ${kind.high}`])
    } catch (error) {
      const text = `${error.stderr ?? ''}${error.message}`
      const reason = /Cannot find (module|package) '(isolated-vm|quickjs-emscripten)'/.exec(text)
      skipped.push(`${kind.name}: ${reason ? `${reason[2]} not installed` : text.split('\n').find((line) => line.trim()) ?? 'failed'}`)
    }
  }
  table('Marginal RSS per instance', ['sandbox', 'MB per instance', 'MB per instance for the first ones (incl. one-time load)', 'instances'], rows)
  for (const line of skipped) note(line)
}

await memory()
