// What a held call costs while nobody answers it: the CPU time of the environment (the helper
// process and everything under it, read from /proc) and of this host process, over a hold of
// HOLD_MS, on both hosts. Run after `npm run build`: node bench/hold-cpu.mjs
import { readFileSync, readdirSync } from 'node:fs'
import { Context } from 'cordis'
import { defineToolGroup } from 'ptc-runtime'
import { WorkerPtcRuntime } from 'ptc-runtime/cordis'

const HOLD_MS = Number(process.env.HOLD_MS ?? 2000)
const USER_HZ = 100

function children(pid) {
  const found = []
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ')) if (child.trim()) found.push(Number(child))
  }
  return found
}

/** CPU milliseconds of every process under this one (the helpers). */
function helpersCpuMs() {
  let ticks = 0
  const pending = children(process.pid)
  while (pending.length > 0) {
    const pid = pending.pop()
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(fields[11]) + Number(fields[12])
      pending.push(...children(pid))
    } catch {
      // gone
    }
  }
  return (ticks * 1000) / USER_HZ
}

const hostCpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

const mail = defineToolGroup({ global: 'mail', tools: { send: { inputSchema: {}, needsApproval: true, run: async () => 'sent' } } })
// On the thread host the worker is a thread of this process: its CPU is in the host's figure.
for (const isolation of ['process', 'thread']) {
  const root = new Context()
  const fiber = await root.plugin(WorkerPtcRuntime, { poolSize: 0, isolation })
  const runtime = root.ptcRuntime
  for (const timeoutMs of [120_000, 300]) {
    const first = await runtime.run(runtime.resolve({ program: `return await mail.send({})`, bindings: [mail.namespace], timeoutMs }))
    const helpers = helpersCpuMs()
    const host = hostCpuMs()
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS))
    const helperSpent = helpersCpuMs() - helpers
    const hostSpent = hostCpuMs() - host
    const last = await runtime.resume(first.paused.id, { approve: true })
    const helper = isolation === 'process' ? `the helper used ${helperSpent} ms of CPU, ` : ''
    console.log(`${isolation}, timeoutMs ${timeoutMs}: over a ${HOLD_MS} ms hold ${helper}the host ${hostSpent.toFixed(1)} ms; then ${JSON.stringify(last.value)}`)
  }
  await fiber.dispose()
}
