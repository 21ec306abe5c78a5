// attack: closes every file descriptor above 2 of the process it runs in
// expect: worker-exit
// known-limit[thread]: descriptors belong to the whole process: closing the host's aborts it
// timeout: 10000
/* On the process host the helper loses its channel to the host and ends. */
const fs = await import('node:fs')
for (let fd = 3; fd < 4096; fd++) try { fs.closeSync(fd) } catch {}
await new Promise(() => {})
