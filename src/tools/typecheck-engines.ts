/**
 * The two ways a type check asks TypeScript for a program's diagnostics, run inside the type
 * check's worker (typecheck-worker.ts), never on the host's thread:
 * - TypeScript 5 and 6 (the compiler in JavaScript): one language service, so the standard
 *   library and the declarations are parsed once and each check only re-reads the program;
 * - TypeScript 7 (the native compiler): its synchronous API (`typescript/unstable/sync`), which
 *   runs the compiler as a process of its own over a virtual directory, one snapshot per check.
 */
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type * as TS from 'typescript'
import type { TypescriptLocation } from './typescript-location.js'

/** One diagnostic: its code, where it starts in the checked file, its message with its chain. */
export interface FoundDiagnostic {
  code: number
  start: number
  message: string
}

/** Diagnostics of the program file for a given text; `pid` is the compiler's own process, if any. */
export interface CheckEngine {
  readonly version: string
  readonly pid: number | undefined
  diagnostics(text: string): FoundDiagnostic[]
}

const DIRECTORY = '/ptc-typecheck'
const DECLARATIONS = `${DIRECTORY}/declarations.d.ts`
const PROGRAM = `${DIRECTORY}/program.ts`

/** The options of every check (TypeScript 7 reads them as a tsconfig.json). */
const OPTIONS = {
  strict: true,
  noImplicitAny: false,
  useUnknownInCatchVariables: false,
  noEmit: true,
  target: 'es2022',
  module: 'esnext',
  moduleResolution: 'bundler',
  lib: ['es2023'],
  types: [],
}

/** The engine for the TypeScript at `location`. Throws, saying why, when it cannot be loaded. */
export async function loadEngine(declarations: string, location: TypescriptLocation): Promise<CheckEngine> {
  if (location.compiler !== undefined) return nativeEngine(declarations, { ...location, compiler: location.compiler })
  const ts = createRequire(path.join(location.directory, 'package.json'))(location.directory) as typeof TS
  return languageServiceEngine(declarations, ts, location.version)
}

/**
 * Whether the compiler may read `file`: the checker's own files and the standard library
 * (`lib.*.d.ts` in `library`) only. The compiler runs in the host, where the sandbox hides
 * nothing; a program that imports or references a host file would otherwise read it in the
 * compiler's messages (a literal type), or learn whether it exists.
 */
const isLibraryFile = (library: string) => (file: string) => path.dirname(file) === library && /^lib\.[\w.-]+\.d\.ts$/.test(path.basename(file))

function languageServiceEngine(declarations: string, ts: typeof TS, version: string): CheckEngine {
  const options: TS.CompilerOptions = {
    ...OPTIONS,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2023.d.ts'],
  }
  let text = ''
  let revision = 0
  const library = path.dirname(ts.getDefaultLibFilePath(options))
  const isLibrary = isLibraryFile(library)
  const virtual = (name: string) => (name === DECLARATIONS ? declarations : name === PROGRAM ? text : undefined)
  const read = (name: string) => virtual(name) ?? (isLibrary(name) ? ts.sys.readFile(name) : undefined)
  const host: TS.LanguageServiceHost = {
    getCompilationSettings: () => options,
    getScriptFileNames: () => [DECLARATIONS, PROGRAM],
    getScriptVersion: (name) => (name === PROGRAM ? String(revision) : '0'),
    getScriptSnapshot: (name) => {
      const content = read(name)
      return content === undefined ? undefined : ts.ScriptSnapshot.fromString(content)
    },
    getCurrentDirectory: () => DIRECTORY,
    getDefaultLibFileName: (settings) => ts.getDefaultLibFilePath(settings),
    fileExists: (name) => virtual(name) !== undefined || (isLibrary(name) && ts.sys.fileExists(name)),
    readFile: read,
    directoryExists: (name) => name === DIRECTORY || name === library,
    getDirectories: () => [],
    realpath: (name) => name,
  }
  const service = ts.createLanguageService(host, ts.createDocumentRegistry())
  return {
    version,
    pid: undefined,
    diagnostics(next) {
      text = next
      revision++
      return [...service.getSyntacticDiagnostics(PROGRAM), ...service.getSemanticDiagnostics(PROGRAM)].map((diagnostic) => ({
        code: diagnostic.code,
        start: diagnostic.start ?? 0,
        message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n  '),
      }))
    },
  }
}

/** The parts of `typescript/unstable/sync` used here (TypeScript 7). */
interface NativeApi {
  API: new (options: { tsserverPath: string; cwd: string; fs: object }) => {
    updateSnapshot(params: object): NativeSnapshot
    close(): void
  }
}
interface NativeSnapshot {
  getProject(configFileName: string): { program: { getSyntacticDiagnostics(file: string): NativeDiagnostic[]; getSemanticDiagnostics(file: string): NativeDiagnostic[] } } | undefined
  dispose(): void
}
interface NativeDiagnostic {
  code: number
  pos: number
  text: string
  messageChain?: readonly NativeDiagnostic[]
}

async function nativeEngine(declarations: string, { directory, version, compiler }: Required<TypescriptLocation>): Promise<CheckEngine> {
  const entry = createRequire(path.join(directory, 'package.json')).resolve('typescript/unstable/sync')
  const { API } = (await import(pathToFileURL(entry).href)) as NativeApi
  const config = `${DIRECTORY}/tsconfig.json`
  const files = new Map([
    [config, JSON.stringify({ compilerOptions: OPTIONS, files: [DECLARATIONS, PROGRAM] })],
    [DECLARATIONS, declarations],
    [PROGRAM, ''],
  ])
  // The compiler reads our three files from here and its standard library, beside it, from its
  // own disk (`undefined`); every other file does not exist (`null`, `false`).
  const library = path.dirname(compiler)
  const isLibrary = isLibraryFile(library)
  const api = new API({
    tsserverPath: compiler,
    cwd: DIRECTORY,
    fs: {
      readFile: (name: string) => files.get(name) ?? (isLibrary(name) ? undefined : null),
      fileExists: (name: string) => files.has(name) || (isLibrary(name) ? undefined : false),
      directoryExists: (name: string) => name === DIRECTORY || (name === library ? undefined : false),
      getAccessibleEntries: (name: string) =>
        name === DIRECTORY ? { files: [...files.keys()].map((file) => path.basename(file)), directories: [] } : name === library ? undefined : { files: [], directories: [] },
      realpath: (name: string) => (isLibrary(name) ? undefined : name),
    },
  })
  // The API keeps its compiler process private; the host needs its id to bound and kill it.
  const pid = (api as unknown as { client?: { channel?: { child?: { pid?: number } } } }).client?.channel?.child?.pid
  let snapshot = api.updateSnapshot({ openProjects: [config] })
  return {
    version,
    pid,
    diagnostics(text) {
      files.set(PROGRAM, text)
      snapshot.dispose()
      snapshot = api.updateSnapshot({ fileChanges: { changed: [PROGRAM] } })
      const program = snapshot.getProject(config)?.program
      if (!program) throw new Error('the native compiler lost its project')
      return [...program.getSyntacticDiagnostics(PROGRAM), ...program.getSemanticDiagnostics(PROGRAM)].map((diagnostic) => ({
        code: diagnostic.code,
        start: diagnostic.pos,
        message: flatten(diagnostic, '\n  '),
      }))
    },
  }
}

function flatten(diagnostic: NativeDiagnostic, indent: string): string {
  return [diagnostic.text, ...(diagnostic.messageChain ?? []).map((next) => flatten(next, `${indent}  `))].join(indent)
}
