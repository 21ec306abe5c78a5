// attack: eval'd code names itself like the runtime's own files to confuse stack mapping
// expect: exception
// message: ^Error: spoofed
const names = ['program', 'node:internal/worker', 'worker.js', 'program.js']
for (const name of names) { try { eval(`throw 1\n//# sourceURL=${name}`) } catch {} }
eval('throw new Error("spoofed")\n//# sourceURL=program:1')
