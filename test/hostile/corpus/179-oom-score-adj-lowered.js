// attack: lowers its helper's oom_score_adj from 1000, so that the kernel's OOM killer picks the host instead
// expect: ok
// hosts: process, confined
// value: {"written":"EROFS","now":"1000"}
const fs = await import('node:fs')
let written = 'written'
try {
  fs.writeFileSync('/proc/self/oom_score_adj', '0')
} catch (error) {
  written = error.code
}
/* completion */ ({ written, now: fs.readFileSync('/proc/self/oom_score_adj', 'utf8').trim() })
