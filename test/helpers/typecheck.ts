import ts from 'typescript'

/**
 * Type-checks sample programs against generated declarations with the TypeScript compiler, all
 * in one compiler program (the standard library loads once). The declarations are a global
 * script, as the model reads them; each sample is a module whose body is the body of an async
 * function, as a `function-body` program is. Returns the diagnostics of the declarations and of
 * each sample, as `TS<code>: <message>` lines.
 */
export function typecheck(declarations: string, samples: readonly string[]): { declarations: string[]; samples: string[][] } {
  // The standard library without the DOM, plus the console every environment has.
  const files = new Map<string, string>([
    ['/console.d.ts', 'declare const console: { log(...data: unknown[]): void; error(...data: unknown[]): void }'],
    ['/declarations.d.ts', declarations],
  ])
  samples.forEach((body, index) => files.set(`/sample${index}.ts`, `export {}\nasync function program() {\n${body}\n}\nvoid program\n`))
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    lib: ['lib.es2023.d.ts'],
    types: [],
  }
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (name, language) => {
    const text = files.get(name)
    return text === undefined ? getSourceFile(name, language) : ts.createSourceFile(name, text, language)
  }
  const fileExists = host.fileExists.bind(host)
  host.fileExists = (name) => files.has(name) || fileExists(name)
  const program = ts.createProgram([...files.keys()], options, host)
  const diagnosticsOf = (name: string) => {
    const file = program.getSourceFile(name)!
    return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map(
      (diagnostic) => `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`,
    )
  }
  return {
    declarations: [...program.getGlobalDiagnostics().map((d) => `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`), ...diagnosticsOf('/declarations.d.ts')],
    samples: samples.map((_, index) => diagnosticsOf(`/sample${index}.ts`)),
  }
}
