// Every kind of TypeScript consumer resolves every entry's types from the package as it ships,
// and a consumer that does not use Cordis never meets Cordis's declarations: the packed package in
// a fresh project, compiled with `skipLibCheck: false` under NodeNext, Node16 (ES module and
// CommonJS files), Bundler and CommonJS (`module: commonjs`), on the repository's TypeScript and
// on those PTC_TYPESCRIPT_6 and PTC_TYPESCRIPT_7 name (directories where typescript@6 and @7 are
// installed; `.ci/run` installs them). A version not given is skipped, saying so.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exec, type PackedProject, packedProject, repository } from '../helpers/packed.js'

const compilers = [
  ['the repository', path.join(repository, 'node_modules')],
  ['PTC_TYPESCRIPT_6', process.env.PTC_TYPESCRIPT_6 && path.join(process.env.PTC_TYPESCRIPT_6, 'node_modules')],
  ['PTC_TYPESCRIPT_7', process.env.PTC_TYPESCRIPT_7 && path.join(process.env.PTC_TYPESCRIPT_7, 'node_modules')],
].flatMap(([source, modules]) => {
  const manifest = modules && path.join(modules, 'typescript', 'package.json')
  if (!manifest || !existsSync(manifest)) {
    console.warn(`test/tools/consumer-matrix.test.ts: no TypeScript from ${source}; set it to a directory where that TypeScript is installed`)
    return []
  }
  const { version, bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; bin: Record<string, string> }
  return [{ version, tsc: path.join(modules!, 'typescript', bin.tsc!) }]
})

// What a consumer without Cordis writes: the runtime, the ready tool, the AI SDK and MCP adapters.
const consumer = `import { createPtcRuntime, createRunCodeTool, defineToolGroup, type PtcRunResult } from 'ptc-runtime'
import { aiTool, codeModeTools } from 'ptc-runtime/ai'
import { mcpToolGroup } from 'ptc-runtime/mcp'

export async function main(): Promise<PtcRunResult> {
  const { runtime, dispose } = await createPtcRuntime({ timeoutMs: 5_000 })
  const shop = defineToolGroup({ global: 'shop', tools: { price: { inputSchema: { type: 'object' }, run: ({ sku }: { sku: string }) => sku.length } } })
  const runCode = createRunCodeTool({ runtime, groups: [shop] })
  void aiTool(runCode)
  void codeModeTools
  void mcpToolGroup
  const answer = await runCode.run({ program: 'return 1' })
  await dispose()
  return answer.result
}
`

/** Each consumer: where its file lives (an ES module or a CommonJS package) and its options. */
const kinds = [
  { name: 'NodeNext, an ES module', dir: 'esm', options: { module: 'nodenext' } },
  { name: 'NodeNext, CommonJS', dir: 'cjs', options: { module: 'nodenext' } },
  { name: 'Node16, an ES module', dir: 'esm', options: { module: 'node16' } },
  { name: 'Bundler', dir: 'esm', options: { module: 'preserve', moduleResolution: 'bundler' } },
  // `module: commonjs` resolves as node10, which reads no package's `exports`: the AI SDK's own
  // declarations then miss `eventsource-parser/stream` (TS7016). That error is the AI SDK's, not
  // this package's, so this row holds only errors in the consumer's file or this package's types.
  { name: 'CommonJS', dir: 'cjs', options: { module: 'commonjs', esModuleInterop: true }, ownErrorsOnly: true },
]

describe.each(compilers)('TypeScript $version consumers of the packed package', ({ tsc }) => {
  let project: PackedProject
  beforeAll(async () => {
    project = await packedProject()
    for (const [dir, type] of [['esm', 'module'], ['cjs', 'commonjs']]) {
      mkdirSync(path.join(project.dir, dir!))
      writeFileSync(path.join(project.dir, dir!, 'package.json'), JSON.stringify({ type }))
      writeFileSync(path.join(project.dir, dir!, 'consumer.ts'), consumer)
    }
  }, 120_000)
  afterAll(() => project?.remove())

  it.each(kinds)('$name compiles with skipLibCheck: false and no Cordis declaration in its program', { timeout: 300_000 }, async ({ dir, options, ownErrorsOnly }) => {
    const config = { compilerOptions: { ...options, target: 'es2022', strict: true, skipLibCheck: false, noEmit: true, types: ['node'], listFiles: true }, files: ['consumer.ts'] }
    const directory = path.join(project.dir, dir)
    const name = `tsconfig.${Object.values(options).join('-')}.json`
    writeFileSync(path.join(directory, name), JSON.stringify(config))
    const output = await exec(process.execPath, [tsc, '-p', name], { cwd: directory }).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    )
    const lines = output.split('\n').filter((line) => line.trim() !== '')
    const ours = (line: string) => line.startsWith('consumer.ts') || line.includes('/ptc-runtime/')
    expect(lines.filter((line) => /error TS\d+/.test(line) && (!ownErrorsOnly || ours(line)))).toEqual([])
    expect(lines.filter((line) => line.includes('/node_modules/cordis/'))).toEqual([])
  })
})
