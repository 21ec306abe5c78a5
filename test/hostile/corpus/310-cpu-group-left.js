// attack: moves itself out of its host's helper CPU group (where all helpers together weigh like one process) into the host's own cgroup, to out-weigh the host again
// expect: ok
// hosts: confined
// value: {"moved":0,"same":true}
const fs = await import('node:fs')
const before = fs.readFileSync('/proc/self/cgroup', 'utf8')
let moved = 0
for (const file of ['/sys/fs/cgroup/cpu/cgroup.procs', '/sys/fs/cgroup/cpu,cpuacct/cgroup.procs', '/sys/fs/cgroup/cgroup.procs', '/sys/fs/cgroup/unified/cgroup.procs']) {
  try {
    fs.writeFileSync(file, String(process.pid))
    moved++
  } catch {
    // read-only, or not there
  }
}
/* completion */ ({ moved, same: fs.readFileSync('/proc/self/cgroup', 'utf8') === before })
