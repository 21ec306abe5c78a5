// Every kind of TypeScript consumer resolves every entry's types from the package as it ships,
// and a consumer that does not use Cordis never meets Cordis's declarations: the packed package in
// a fresh project, compiled with `skipLibCheck: false` under NodeNext and Node16 (an ES module and
// a CommonJS file in one program), Bundler and CommonJS (`module: commonjs`), on the repository's
// TypeScript and on those PTC_TYPESCRIPT_6 and PTC_TYPESCRIPT_7 name (directories where
// typescript@6 and @7 are installed; `.ci/run` installs them). A version not given is skipped,
// saying so. The CommonJS output of Node16 and of `module: commonjs` then runs a program, loading
// the package through `require()` as Node 20.19+ and 22.12+ do.
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
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
  return [{ version, major: Number(version.split('.')[0]), tsc: path.join(modules!, 'typescript', bin.tsc!) }]
})

// What a consumer without Cordis writes: the runtime, the ready tool, the AI SDK and MCP adapters.
const consumer = `import { createPtcRuntime, createRunCodeTool, defineToolGroup, PtcImage, type PtcRunResult } from 'ptc-runtime'
import { aiTool, codeModeTools } from 'ptc-runtime/ai'
import { mcpToolGroup } from 'ptc-runtime/mcp'

export async function main(): Promise<{ result: PtcRunResult; image: typeof PtcImage }> {
  const { runtime, dispose } = await createPtcRuntime({ isolation: 'thread', timeoutMs: 5_000 })
  const shop = defineToolGroup({ global: 'shop', tools: { price: { inputSchema: { type: 'object' }, run: ({ sku }: { sku: string }) => sku.length } } })
  const runCode = createRunCodeTool({ runtime, groups: [shop] })
  void aiTool(runCode)
  void codeModeTools
  void mcpToolGroup
  const answer = await runCode.run({ program: 'return await shop.price({ sku: "abc" }) * 14' })
  await dispose()
  return { result: answer.result, image: PtcImage }
}
`

// A CommonJS script running a compiled consumer: the answer, and whether `require` and `import`
// of the package met one copy of it (one `PtcImage` class) and the Cordis entry loads too.
const runner = `const { main } = require(process.argv[2])
main().then(async ({ result, image }) => {
  const { PtcImage } = await import('ptc-runtime')
  const { WorkerPtcRuntime } = require('ptc-runtime/cordis')
  console.log(JSON.stringify({ value: result.value, error: result.error, oneCopy: image === PtcImage, cordis: typeof WorkerPtcRuntime }))
})
`

interface ConsumerKind {
  name: string
  files: string[]
  options: (major: number) => Record<string, unknown>
  /** The error codes this TypeScript gives, in order: none but for a configuration TypeScript refuses. */
  errors?: (major: number) => string[]
  /** Only errors in the consumer's files, its configuration or this package's types count. */
  ownErrorsOnly?: boolean
  /** The CommonJS file whose output runs. */
  runs?: string
  skip?: (major: number) => boolean
}

const both = ['esm/consumer.ts', 'cjs/consumer.ts']
const kinds: ConsumerKind[] = [
  { name: 'NodeNext, an ES module and a CommonJS file', files: both, options: () => ({ module: 'nodenext' }) },
  { name: 'Node16, an ES module and a CommonJS file', files: both, options: () => ({ module: 'node16' }), runs: 'cjs/consumer.js' },
  { name: 'Bundler', files: ['esm/consumer.ts'], options: () => ({ module: 'preserve', moduleResolution: 'bundler' }) },
  // `module: commonjs` resolves as node10 on TypeScript 5 (reading `typesVersions`, not `exports`)
  // and as bundler from 6. Under node10 the AI SDK's own declarations miss
  // `eventsource-parser/stream` (TS7016): the AI SDK's error, not this package's, so this row
  // holds only errors in the consumer's files or this package's types.
  { name: 'CommonJS', files: ['cjs/consumer.ts'], options: () => ({ module: 'commonjs', esModuleInterop: true }), ownErrorsOnly: true, runs: 'cjs/consumer.js' },
  // node10 by name: TypeScript 5's default (the row above), deprecated by 6, removed by 7.
  {
    name: 'CommonJS, moduleResolution node10',
    files: ['cjs/consumer.ts'],
    options: (major) => ({ module: 'commonjs', moduleResolution: 'node10', esModuleInterop: true, ...(major === 6 ? { ignoreDeprecations: '6.0' } : {}) }),
    errors: (major) => (major >= 7 ? ['TS5108'] : []),
    ownErrorsOnly: true,
    skip: (major) => major < 6,
  },
  // TypeScript refuses this pair whatever the package: node16 resolution needs `module: node16`.
  { name: 'CommonJS, moduleResolution node16', files: ['cjs/consumer.ts'], options: () => ({ module: 'commonjs', moduleResolution: 'node16' }), errors: () => ['TS5110'] },
]

describe.each(compilers)('TypeScript $version consumers of the packed package', ({ tsc, major }) => {
  let project: PackedProject
  beforeAll(async () => {
    project = await packedProject()
    for (const [dir, type] of [['esm', 'module'], ['cjs', 'commonjs']]) {
      mkdirSync(path.join(project.dir, dir!))
      writeFileSync(path.join(project.dir, dir!, 'package.json'), JSON.stringify({ type }))
      writeFileSync(path.join(project.dir, dir!, 'consumer.ts'), consumer)
    }
    writeFileSync(path.join(project.dir, 'run.cjs'), runner)
  }, 120_000)
  afterAll(() => project?.remove())

  const applicable = kinds.filter((kind) => !kind.skip?.(major))
  it.each(applicable)('$name compiles with skipLibCheck: false and no Cordis declaration in its program', { timeout: 300_000 }, async (kind) => {
    const slug = kind.name.replace(/\W+/g, '-').toLowerCase()
    const outDir = `out-${slug}`
    const emit = kind.runs ? { outDir, rootDir: '.' } : { noEmit: true }
    const config = { compilerOptions: { ...kind.options(major), ...emit, target: 'es2022', strict: true, skipLibCheck: false, types: ['node'], listFiles: true }, files: kind.files }
    const name = `tsconfig.${slug}.json`
    writeFileSync(path.join(project.dir, name), JSON.stringify(config))
    const output = await exec(process.execPath, [tsc, '-p', name], { cwd: project.dir }).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    )
    const lines = output.split('\n').filter((line) => line.trim() !== '')
    const ours = (line: string) => kind.files.some((file) => line.startsWith(file)) || line.startsWith(name) || line.includes('/ptc-runtime/')
    const errors = lines.filter((line) => /error TS\d+/.test(line) && (!kind.ownErrorsOnly || ours(line)))
    expect(errors).toEqual((kind.errors?.(major) ?? []).map((code) => expect.stringContaining(`error ${code}:`)))
    expect(lines.filter((line) => line.includes('/node_modules/cordis/'))).toEqual([])
    if (!kind.runs) return

    // The emitted CommonJS keeps its directory's `"type": "commonjs"`.
    writeFileSync(path.join(project.dir, outDir, path.dirname(kind.runs), 'package.json'), JSON.stringify({ type: 'commonjs' }))
    const emitted = path.join(project.dir, outDir, kind.runs)
    expect(readFileSync(emitted, 'utf8')).toContain('require("ptc-runtime")')
    const { stdout, stderr } = await exec(process.execPath, ['run.cjs', emitted], { cwd: project.dir })
    expect(stderr).toBe('')
    expect(JSON.parse(stdout)).toEqual({ value: 42, oneCopy: true, cordis: 'function' })
  })
})
