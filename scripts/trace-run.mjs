/**
 * Which source files one run crosses on the host's main thread, and how many times it enters
 * each: the measure of how directly a run reads (ARCHITECTURE.md, "The host run path").
 *
 * The host is bundled once more with a source map (`.scratch/trace/`, next to copies of the built
 * helper and worker, which it starts), and every function of the bundle gets a logpoint at its
 * start: a breakpoint whose condition records the function and answers false, so the thread
 * never pauses. After a few warm-up runs, one pooled one-shot run on the default configuration
 * (one tool call, one `console.log`) is recorded from `run()` to its result. Each function is
 * mapped back to its source file through the source map; a file entry is a step from one file
 * into another. A worker message's hops are the files from where its bytes arrive to where the
 * session acts on it.
 *
 * Usage: `npm run build && node scripts/trace-run.mjs [--isolation thread] [--sequence] [--functions]`
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { Session } from 'node:inspector'
import { SourceMap } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parse } from 'acorn'
import { build } from 'esbuild'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const out = path.join(root, '.scratch', 'trace')
const args = process.argv.slice(2)
const isolation = args.includes('--isolation') ? args[args.indexOf('--isolation') + 1] : undefined

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
await build({
  entryPoints: [path.join(root, 'src', 'index.ts')],
  outfile: path.join(out, 'index.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'external',
  logLevel: 'error',
})
for (const file of ['helper.cjs', 'worker.cjs']) copyFileSync(path.join(root, 'dist', file), path.join(out, file))

const bundleFile = path.join(out, 'index.js')
const bundle = readFileSync(bundleFile, 'utf8')
const map = new SourceMap(JSON.parse(readFileSync(`${bundleFile}.map`, 'utf8')))

/** Every function's first position in the bundle, and the source file it came from. */
const functions = []
const visit = (node) => {
  if (!node || typeof node.type !== 'string') return
  if (/Function/.test(node.type) && node.body) {
    const statements = node.body.type === 'BlockStatement' ? node.body.body : [node.body]
    // Nothing may be evaluated in a derived constructor before super() returns.
    const first = statements.findIndex((statement) => !(statement.expression?.type === 'CallExpression' && statement.expression.callee.type === 'Super'))
    const start = statements[first === -1 ? 0 : first] ?? node.body
    const entry = map.findEntry(start.loc.start.line - 1, start.loc.start.column)
    const source = entry?.originalSource ? path.relative(root, fileURLToPath(new URL(entry.originalSource, pathToFileURL(bundleFile)))) : undefined
    if (source?.startsWith('src/')) functions.push({ line: start.loc.start.line - 1, column: start.loc.start.column, source: source.slice(4), name: entry.name ?? node.id?.name ?? `${source.slice(4)}:${entry.originalLine + 1}` })
  }
  for (const key in node) {
    const value = node[key]
    if (Array.isArray(value)) value.forEach(visit)
    else if (value && typeof value === 'object' && key !== 'loc') visit(value)
  }
}
visit(parse(bundle, { ecmaVersion: 'latest', sourceType: 'module', locations: true }))

const session = new Session()
session.connect()
const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))))
await post('Debugger.enable')
const url = pathToFileURL(bundleFile).href
globalThis.__ptcTrace = undefined
for (let id = 0; id < functions.length; id++) {
  const { line, column } = functions[id]
  await post('Debugger.setBreakpointByUrl', { url, lineNumber: line, columnNumber: column, condition: `(globalThis.__ptcTrace && globalThis.__ptcTrace.push(${id}), false)` })
}

const { createPtcRuntime, defineToolGroup } = await import(url)
const tools = defineToolGroup({
  global: 'tools',
  tools: { echo: { description: 'Echoes its argument.', inputSchema: { type: 'object' }, run: async (input) => input } },
})
const { runtime, dispose } = await createPtcRuntime(isolation ? { isolation } : {})
const program = 'const answer = await tools.echo({ n: 1 })\nconsole.log(answer.n)\nreturn answer.n'
const once = async () => {
  const result = await runtime.run(runtime.resolve({ program, bindings: [tools.namespace] }))
  if (result.error || result.value !== 1) throw new Error(`the traced run failed: ${JSON.stringify(result)}`)
}
for (let warm = 0; warm < 5; warm++) {
  await once()
  await new Promise((resolve) => setTimeout(resolve, 300))
}
globalThis.__ptcTrace = []
await once()
const trace = globalThis.__ptcTrace
globalThis.__ptcTrace = undefined
await dispose()
session.disconnect()

const steps = []
for (const id of trace) {
  const file = functions[id].source
  if (steps.at(-1) !== file) steps.push(file)
}
const entries = new Map()
for (const file of steps) entries.set(file, (entries.get(file) ?? 0) + 1)
console.log(`isolation ${isolation ?? 'default'}: ${entries.size} source files, ${steps.length} file entries, ${trace.length} function entries`)
for (const [file, count] of [...entries].sort((a, b) => b[1] - a[1])) console.log(`  ${String(count).padStart(3)}  ${file}`)
if (args.includes('--sequence')) console.log(steps.join('\n'))
if (args.includes('--functions')) console.log(trace.map((id) => `${functions[id].source} ${functions[id].name}`).join('\n'))
rmSync(out, { recursive: true, force: true })
