// attack: starts a Node child process that ignores SIGTERM, SIGINT and SIGHUP and keeps itself alive
// expect: ok
// value: "started"
const { spawn } = await import('node:child_process')
const code = 'for (const s of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(s, () => {}); setInterval(() => {}, 1000)'
spawn(process.execPath, ['-e', code, '__SLEEP__'], { stdio: 'ignore' })
await new Promise((resolve) => setTimeout(resolve, 100))
/* completion */ 'started'
