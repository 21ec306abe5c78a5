import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmdirSync } from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { childProcesses } from '../helpers/processes.mjs'
import { ON_CONTAINER, startRuntime } from '../helpers/runtime.js'

// The oracle, written apart from the library's own lookup: the cpu line of /proc/<pid>/cgroup (v1's
// cpu hierarchy, else v2's single line) and where that hierarchy is mounted.
function cpuCgroupOf(pid: number | 'self'): string {
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n').map((line) => line.split(':'))
  const line = lines.find((fields) => fields[1]!.split(',').includes('cpu')) ?? lines.find((fields) => fields[0] === '0')!
  return line.slice(2).join(':')
}

function hostCpuDirectory(): string | undefined {
  const v1 = readFileSync('/proc/self/cgroup', 'utf8').split('\n').some((line) => line.split(':')[1]?.split(',').includes('cpu'))
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [before, after] = line.split(' - ')
    const [type, , options = ''] = (after ?? '').split(' ')
    const [, , , root, mountPoint] = before!.split(' ')
    const isCpu = v1 ? type === 'cgroup' && options.split(',').includes('cpu') : type === 'cgroup2'
    if (isCpu && root === '/') return path.join(mountPoint!, cpuCgroupOf('self'))
  }
  return undefined
}

/** Whether this host may make a cpu group beside itself that hands the controller down. */
function hostMayMakeGroups(): boolean {
  const directory = hostCpuDirectory()
  if (!directory) return false
  if (!existsSync(path.join(directory, 'cpu.shares')) && !readFileSync(path.join(directory, 'cgroup.subtree_control'), 'utf8').includes('cpu')) return false
  const probe = path.join(directory, `ptc-test-probe-${process.pid}`)
  try {
    mkdirSync(probe)
    rmdirSync(probe)
    return true
  } catch {
    return false
  }
}

const GROUPS = process.platform === 'linux' && !ON_CONTAINER && hostMayMakeGroups()
const ownGroup = (pid: number) => path.posix.join(cpuCgroupOf('self'), `ptc-runtime-${pid}`)

describe.skipIf(process.platform !== 'linux' || ON_CONTAINER)('the helpers\' CPU group', () => {
  it(GROUPS
    ? 'every helper of a host, serving a run or spare, runs in one CPU group of the host\'s own, and a program cannot leave it'
    : 'where the host may make no CPU group, helpers stay in the host\'s cgroup', async () => {
    const env = await startRuntime({ poolSize: 2 })
    try {
      let groups: string[] = []
      const tools = {
        // Read once every helper is past its start-up shell, which joins the group first.
        look: async () => {
          const starting = () => childProcesses().some((pid) => ['sh', 'nice', 'chrt'].includes(readFileSync(`/proc/${pid}/comm`, 'utf8').trim()))
          while (starting()) await sleep(5)
          groups = childProcesses().map((pid) => cpuCgroupOf(pid))
          return null
        },
      }
      // The program tries to move itself to its host's cgroup through every cpu hierarchy it can see.
      const program = `
        const fs = await import('node:fs')
        const tried = []
        for (const file of ['/sys/fs/cgroup/cpu/cgroup.procs', '/sys/fs/cgroup/cpu,cpuacct/cgroup.procs', '/sys/fs/cgroup/cgroup.procs']) {
          try { fs.writeFileSync(file, String(process.pid)); tried.push('moved') } catch (error) { tried.push(error.code) }
        }
        await tools.look()
        return tried.filter((outcome) => outcome === 'moved').length`
      const result = await env.run(program, { bindings: [{ global: 'tools', functions: tools }] })
      expect(result.value).toBe(0)
      expect(groups.length).toBeGreaterThanOrEqual(2) // the run's helper and at least one spare
      expect(new Set(groups)).toEqual(new Set([GROUPS ? ownGroup(process.pid) : cpuCgroupOf('self')]))
    } finally {
      await env.dispose()
    }
  })

  it.skipIf(!GROUPS)('the group is removed when the runtime that made it is disposed, and one a dead host left when the next host starts', async () => {
    const parent = hostCpuDirectory()!
    const dead = Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }))
    const abandoned = path.join(parent, `ptc-runtime-${dead}`)
    mkdirSync(abandoned)
    const own = path.join(parent, `ptc-runtime-${process.pid}`)
    const env = await startRuntime({ poolSize: 0 })
    try {
      expect((await env.run('return 1')).value).toBe(1)
      expect(existsSync(own)).toBe(true)
      expect(existsSync(abandoned)).toBe(false)
    } finally {
      await env.dispose()
      if (existsSync(abandoned)) rmdirSync(abandoned)
    }
    expect(existsSync(own)).toBe(false)
  })
})
