/**
 * Type-checking a program against the declarations the model read, before it runs: a wrong
 * argument shape or a misspelled tool fails in milliseconds, with the compiler's message at the
 * program's own line and column, instead of after the calls before it have run.
 *
 * One TypeScript language service per tool (the declarations never change), so the standard
 * library and the declarations are parsed once and each check only re-reads the program.
 * TypeScript is an optional peer dependency, loaded when a tool asks for checking.
 */
import { createRequire } from 'node:module'
import type * as TS from 'typescript'
import type { PtcProgramFormat } from '../seam/types.js'
import { unfence } from '../transform/habits.js'

const DECLARATIONS = '/ptc-typecheck/declarations.d.ts'
const PROGRAM = '/ptc-typecheck/program.ts'

/**
 * What the check leaves to run time: names and modules the declarations do not describe (the
 * program's Node globals and built-in modules, and in the REPL formats what earlier runs
 * declared). The check is about the tools and the language, not about the environment.
 */
const LEFT_TO_RUN_TIME = new Set([2304, 2552, 2580, 2582, 2583, 2584, 2591, 2307, 2792])

/** Diagnostics quoted in one failure, so a program with a systematic mistake stays readable. */
const MAX_DIAGNOSTICS = 10

/** Checks programs of one format against one set of declarations. */
export interface ProgramChecker {
  /** The compiler's messages at the program's positions, or `undefined` when it checks. */
  check(program: string): string | undefined
}

function loadTypeScript(): typeof TS {
  try {
    return createRequire(import.meta.url)('typescript') as typeof TS
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    throw new Error(`typecheck needs the typescript package (an optional peer dependency), which could not be loaded: ${reason}`)
  }
}

/** A checker for `format` programs against `declarations`. Throws when TypeScript is missing. */
export function createProgramChecker(declarations: string, format: PtcProgramFormat): ProgramChecker {
  const ts = loadTypeScript()
  // The program is the body of an async function, or a module with top-level await; either
  // wrapper takes exactly the first line, so the program's line L is the file's line L + 1.
  const open = format === 'function-body' ? 'export {}; async function program() {\n' : 'export {};\n'
  const close = format === 'function-body' ? '\n}' : '\n'
  const repl = format === 'repl' || format === 'scoped-repl'
  const options: TS.CompilerOptions = {
    strict: true,
    noImplicitAny: false,
    useUnknownInCatchVariables: false,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2023.d.ts'],
    types: [],
  }
  let text = open + close
  let version = 0
  const virtual = (name: string) => (name === DECLARATIONS ? declarations : name === PROGRAM ? text : undefined)
  const host: TS.LanguageServiceHost = {
    getCompilationSettings: () => options,
    getScriptFileNames: () => [DECLARATIONS, PROGRAM],
    getScriptVersion: (name) => (name === PROGRAM ? String(version) : '0'),
    getScriptSnapshot: (name) => {
      const content = virtual(name) ?? ts.sys.readFile(name)
      return content === undefined ? undefined : ts.ScriptSnapshot.fromString(content)
    },
    getCurrentDirectory: () => '/ptc-typecheck',
    getDefaultLibFileName: (settings) => ts.getDefaultLibFilePath(settings),
    fileExists: (name) => virtual(name) !== undefined || ts.sys.fileExists(name),
    readFile: (name) => virtual(name) ?? ts.sys.readFile(name),
  }
  const service = ts.createLanguageService(host, ts.createDocumentRegistry())

  return {
    check(program) {
      // A fence's lines become blank, as when the program runs.
      text = open + unfence(program) + close
      version++
      let found: readonly TS.Diagnostic[]
      try {
        found = [...service.getSyntacticDiagnostics(PROGRAM), ...service.getSemanticDiagnostics(PROGRAM)]
      } catch {
        // The check is an aid: a compiler crash on a strange program lets it run unchecked,
        // where the runtime's own failures still describe it.
        return undefined
      }
      const diagnostics = found.filter((diagnostic) => !LEFT_TO_RUN_TIME.has(diagnostic.code) && !(repl && diagnostic.code === 2448))
      if (diagnostics.length === 0) return undefined
      const file = service.getProgram()!.getSourceFile(PROGRAM)!
      const lines = diagnostics.slice(0, MAX_DIAGNOSTICS).map((diagnostic) => {
        const { line, character } = file.getLineAndCharacterOfPosition(Math.max(diagnostic.start ?? 0, open.length))
        const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n  ')
        return `TS${diagnostic.code}: ${message} (line ${line}, column ${character + 1})`
      })
      if (diagnostics.length > MAX_DIAGNOSTICS) lines.push(`…and ${diagnostics.length - MAX_DIAGNOSTICS} more`)
      return `The program does not type-check against the declared tools; nothing ran.\n${lines.join('\n')}`
    },
  }
}
