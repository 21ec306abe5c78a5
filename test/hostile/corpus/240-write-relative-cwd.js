// attack: writes a file by a relative path, into whatever directory its process really runs in: a helper started in the host's own checkout (the stream host's local entry once was) would plant it among the host's code
// expect: ok
// known-limit[thread]: a worker thread's relative paths are the host process's own, and it writes whatever the host user can
// value: "written"
const fs = await import('node:fs')
fs.writeFileSync('planted-by-program.js', 'process.exit(1)\n')
/* completion */ 'written'
