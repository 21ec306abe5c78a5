/**
 * Table 4: memory per environment. Each kind is measured in its own child process with
 * --expose-gc (isolated-vm's also with --no-node-snapshot): the marginal memory of one more
 * instance between `low` and `high` instances, and what the first ones cost including one-time
 * loading. Memory is the child's plus that of every process it started (a process-host
 * environment is a helper process, under bubblewrap when it works), as RSS and PSS; see
 * bench/memory-child.mjs. Retained environments are read twice: once settled after their run,
 * and once idle, 15 s later.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { fmt, machine, note, scale, table, target } from './stats.mjs'

const run = promisify(execFile)
const CHILD = fileURLToPath(new URL('./memory-child.mjs', import.meta.url))
const K = scale(1, 0.5)
const OURS = { low: 2, high: 2 + Math.round(8 * K) }

const RETAINED = [
  { name: 'thread host', isolation: 'thread' },
  { name: 'process host (default)', isolation: 'process' },
  { name: 'process host, sandbox: none', isolation: 'process-unconfined' },
]
const KINDS = [
  { name: 'ptc-runtime, thread host: idle pooled worker', mode: 'pooled', isolation: 'thread', ...OURS },
  { name: 'ptc-runtime, process host: idle pooled helper process', mode: 'pooled', isolation: 'process', ...OURS },
  { name: 'ptc-runtime, process host, sandbox: none: idle pooled helper process', mode: 'pooled', isolation: 'process-unconfined', ...OURS },
  { name: 'bare idle Worker (no harness)', mode: 'worker', low: 2, high: 2 + Math.round(8 * K) },
  { name: 'isolated-vm isolate + context', mode: 'isolatedVm', low: 5, high: 5 + Math.round(20 * K), flags: ['--no-node-snapshot'] },
  { name: 'quickjs-emscripten runtime + context', mode: 'quickjs', low: 10, high: 10 + Math.round(200 * K) },
  { name: 'node:vm context', mode: 'vm', low: 10, high: 10 + Math.round(100 * K) },
]

/** Runs one measurement; the parsed JSON line, or `{ skipped }`. */
async function measure(kind, idle = false) {
  const args = [...(kind.flags ?? []), '--expose-gc', CHILD, kind.mode, kind.isolation ?? '-', String(kind.low), String(kind.high), idle ? 'idle' : '']
  try {
    const { stdout } = await run(process.execPath, args, { timeout: 240_000 })
    return JSON.parse(stdout.trim().split('\n').at(-1))
  } catch (error) {
    const text = `${error.stderr ?? ''}${error.message}`
    const reason = /Cannot find (module|package) '(isolated-vm|quickjs-emscripten)'/.exec(text)
    return { skipped: `${kind.name}: ${reason ? `${reason[2]} not installed` : (text.split('\n').find((line) => line.trim()) ?? 'failed')}` }
  }
}

const mb = (part) => `${fmt(part.rss)} / ${fmt(part.pss)}`

async function memory() {
  console.log(`\n## Memory per environment (MB)\n\n${machine()}; each kind in its own child process with --expose-gc.`)
  const skipped = []
  const rows = []
  let processIdle
  for (const host of RETAINED) {
    const measured = await measure({ name: host.name, mode: 'retained', isolation: host.isolation, ...OURS }, true)
    if (measured.skipped) {
      skipped.push(measured.skipped)
      continue
    }
    for (const [when, per] of [['settled after its run', measured.perInstance], ['idle 15 s', measured.idle]]) {
      rows.push([host.name, when, fmt(per.tree.rss), fmt(per.tree.pss), host.isolation === 'process' ? mb(per.children) : '—', mb(per.host)])
    }
    if (host.isolation === 'process') processIdle = measured.idle.tree.pss
  }
  table(
    `Retained environment (retainState + stateOwner, one run each; ${OURS.low} → ${OURS.high} environments)`,
    ['host', 'when', 'RSS per environment', 'PSS per environment', 'of which helper + bwrap processes (RSS / PSS)', 'host process growth (RSS / PSS)'],
    rows,
  )
  note('PSS splits each shared page among the processes mapping it, so the Node binary that every helper maps counts once in total; growth of the whole tree is what one more environment costs.')
  if (processIdle !== undefined) {
    target('retained process environment ≤ 16 MB PSS when idle (1 000 retained conversations in 16 GB)', `${fmt(processIdle)} MB`, processIdle <= 16)
  }

  const peers = []
  for (const kind of KINDS) {
    const measured = await measure(kind)
    if (measured.skipped) skipped.push(measured.skipped)
    else peers.push([kind.name, fmt(measured.perInstance.tree.rss), fmt(measured.perInstance.tree.pss), fmt(measured.first.tree.rss), `${kind.low} → ${kind.high}`])
  }
  table(
    'Marginal memory per idle instance',
    ['sandbox', 'RSS per instance', 'PSS per instance', 'RSS per instance for the first ones (incl. one-time load)', 'instances'],
    peers,
  )
  for (const line of skipped) note(line)
}

await memory()
