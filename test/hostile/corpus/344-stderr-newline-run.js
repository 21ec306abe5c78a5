// attack: writes runs of newlines and spaces straight to descriptor 2, where the host looks for the start of V8's fatal report in every chunk: a pattern that backtracks over whitespace held the host's event loop for minutes on 10 000 newlines
// expect: ok
// value: "written"
// hosts: process,confined,stream
// bystander: 4000
// timeout: 20000
// alone[process]: it measures the host's event loop, which other cases' work would colour
// alone[confined]: it measures the host's event loop, which other cases' work would colour
// alone[stream]: it measures the host's event loop, which other cases' work would colour
const { writeSync } = await import('node:fs')
await tools.beside('__MARKER__')
// Within the corpus's 64 KiB of output: the old pattern took six minutes on the first run alone.
for (const run of ['\n'.repeat(10_000), ' '.repeat(5_000), '\n#'.repeat(2_500), '\n \t'.repeat(2_000)]) writeSync(2, run)
/* completion */ 'written'
