import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { defineToolGroup, RUNTIME_DECLARATIONS } from 'ptc-runtime'

const consumer = fileURLToPath(new URL('./fixtures/consumer.ts', import.meta.url))

/** `TS<code>: <message>` for every diagnostic of compiling `files` with `options`. */
function diagnostics(files: string[], options: ts.CompilerOptions, host?: ts.CompilerHost): string[] {
  const program = ts.createProgram(files, { strict: true, noEmit: true, skipLibCheck: true, target: ts.ScriptTarget.ES2022, types: ['node'], ...options }, host)
  return ts.getPreEmitDiagnostics(program).map((d) => `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`)
}

describe('a strict TypeScript consumer of the built package', () => {
  // ptc-runtime resolves to dist/ through the package's own exports, as in a project that installed it.
  it.each([
    ['Bundler', ts.ModuleKind.ESNext, ts.ModuleResolutionKind.Bundler],
    ['NodeNext', ts.ModuleKind.NodeNext, ts.ModuleResolutionKind.NodeNext],
    ['Node16', ts.ModuleKind.Node16, ts.ModuleResolutionKind.Node16],
  ])('annotates binding arguments and mixes namespaces without casts under %s', (_, module, moduleResolution) => {
    expect(diagnostics([consumer], { module, moduleResolution, lib: ['lib.es2023.d.ts'] })).toEqual([])
  })

  it('compiles an agent loop that starts the runtime with createPtcRuntime and never imports Cordis, under NodeNext', () => {
    const standalone = fileURLToPath(new URL('./fixtures/standalone-consumer.ts', import.meta.url))
    const imports = ts.preProcessFile(ts.sys.readFile(standalone)!).importedFiles.map((file) => file.fileName)
    expect(imports).toEqual(['ptc-runtime'])
    expect(diagnostics([standalone], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, lib: ['lib.es2023.d.ts'] })).toEqual([])
  })

  // Node16 refuses a CommonJS file's import of an ES module's declarations (TS1479); the
  // package's `require` condition gives it CommonJS declarations of the same ES module.
  it.each([
    ['NodeNext', ts.ModuleKind.NodeNext, ts.ModuleResolutionKind.NodeNext],
    ['Node16', ts.ModuleKind.Node16, ts.ModuleResolutionKind.Node16],
  ])('compiles a CommonJS consumer (.cts) under %s', (_, module, moduleResolution) => {
    const commonjs = fileURLToPath(new URL('./fixtures/commonjs-consumer.cts', import.meta.url))
    expect(diagnostics([commonjs], { module, moduleResolution, lib: ['lib.es2023.d.ts'] })).toEqual([])
  })

  // A CommonJS file under `verbatimModuleSyntax` (a `tsc --init` default) writes a value import as
  // `import … = require(…)`, which the repository's own ES module typecheck refuses: so it lives here.
  const requireConsumer = `import ptc = require('ptc-runtime')
import type { PtcRunResult } from 'ptc-runtime'
async function main(): Promise<PtcRunResult> {
  const { runtime, dispose } = await ptc.createPtcRuntime({ isolation: 'thread' })
  const group = ptc.defineToolGroup({ global: 'weather', tools: { forecast: { inputSchema: { type: 'object' }, run: async ({ city }: { city: string }) => ({ city }) } } })
  const result = await runtime.run(runtime.resolve({ program: 'return 1', bindings: [group.namespace] }))
  await dispose()
  return result
}
void main().then((result) => console.log(result.value instanceof ptc.PtcImage))
`
  it.each([
    ['NodeNext', ts.ModuleKind.NodeNext, ts.ModuleResolutionKind.NodeNext],
    ['Node16', ts.ModuleKind.Node16, ts.ModuleResolutionKind.Node16],
  ])('compiles a CommonJS consumer that writes import = require under verbatimModuleSyntax and %s', (_, module, moduleResolution) => {
    const file = fileURLToPath(new URL('./fixtures/require-consumer.cts', import.meta.url))
    const options: ts.CompilerOptions = { module, moduleResolution, verbatimModuleSyntax: true, lib: ['lib.es2023.d.ts'] }
    const host = ts.createCompilerHost(options)
    const read = host.getSourceFile.bind(host)
    host.getSourceFile = (name, language) => (name === file ? ts.createSourceFile(name, requireConsumer, language) : read(name, language))
    const exists = host.fileExists.bind(host)
    host.fileExists = (name) => name === file || exists(name)
    expect(diagnostics([file], options, host)).toEqual([])
  })

  it('compiles the AI SDK path without @types/json-schema under NodeNext', () => {
    const options: ts.CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'] }
    const host = ts.createCompilerHost(options)
    const exists = host.fileExists.bind(host)
    host.fileExists = (name) => !name.includes('/@types/json-schema/') && exists(name)
    const aiConsumer = fileURLToPath(new URL('./fixtures/ai-consumer.ts', import.meta.url))
    expect(diagnostics([aiConsumer], { ...options, types: ['node'] }, host)).toEqual([])
  })

  it('compiles the declarations the model reads beside the DOM library', () => {
    const group = defineToolGroup({
      global: 'camera',
      tools: { snap: { inputSchema: { type: 'object' }, outputSchema: { type: 'string' }, run: () => 'ok' } },
    })
    const files = new Map([['/model.d.ts', `${RUNTIME_DECLARATIONS}\n${group.declarations}`], ['/program.ts', 'export const width = (shot: Image): number => shot.width\nvoid new Image(1, 1).naturalWidth']])
    const options: ts.CompilerOptions = { lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'], types: [], module: ts.ModuleKind.ESNext }
    const host = ts.createCompilerHost(options)
    const read = host.getSourceFile.bind(host)
    host.getSourceFile = (name, language) => (files.has(name) ? ts.createSourceFile(name, files.get(name)!, language) : read(name, language))
    const exists = host.fileExists.bind(host)
    host.fileExists = (name) => files.has(name) || exists(name)
    expect(diagnostics([...files.keys()], options, host)).toEqual([])
  })
})
