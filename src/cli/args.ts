/**
 * Command-line arguments of `ptc-run`. Parsing never exits: it returns what to do, or a
 * `UsageError` whose message says which argument is wrong, so the entry point owns exit codes.
 */
import { parseArgs } from 'node:util'
import { PROGRAM_FORMATS, PROGRAM_LANGUAGES, type PtcProgramFormat, type PtcProgramLanguage } from '../seam/types.js'

export const USAGE = `Usage:
  ptc-run <program.js | program.ts | -> [--tools <module>] [--format <format>] [--language <language>] [--typecheck] [--timeout <ms>] [--json] [access]
  ptc-run --repl [--tools <module>] [--format <format>] [--language <language>] [--timeout <ms>] [access]

Runs a JavaScript program the way a model's program runs in an agent loop, and prints what
it printed, then its value or its failure.

What programs may touch: by default, nothing of yours. They run confined by bubblewrap: the
system read-only, your home and this directory out of sight, no network, and an empty private
scratch directory (their working directory) and /tmp to write in. The tools module runs here,
unconfined, with your access. Widen it with:
  --workspace <dir>   a directory programs may write in, and their working directory
  --read <dir>        a directory programs may read (repeatable)
  --network host      this machine's network
  --unconfined        no confinement at all: your files, your network (trusted programs only)

  <program.js>        file holding the program; "-" reads it from standard input
  --tools <module>    ES module whose named exports become the program's tool globals
  --format <format>   function-body (default for files), script, repl (default for --repl),
                      or scoped-repl
  --language <name>   javascript, typescript (default for a .ts, .mts or .cts file) or python
                      (needs the pyodide package; not with --repl)
  --typecheck         type-check the program against the tools before it runs (needs typescript)
  --timeout <ms>      time budget of each run in milliseconds (default 120000)
  --json              print the exact PtcRunResult as one line of JSON instead
  --repl              read programs from the terminal, one retained environment for all
  -h, --help          show this help

Exit codes: 0 the program succeeded, 1 the program failed, 2 usage error.`

/** The longest budget a Node timer can hold. */
const MAX_TIMEOUT_MS = 2_147_483_647

/** A command line `ptc-run` cannot act on; the entry point prints it with the usage and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** What the command line asks for. */
export type Command =
  | { kind: 'help' }
  | { kind: 'run'; program: string; tools?: string; format: PtcProgramFormat; language: PtcProgramLanguage; typecheck: boolean; timeoutMs?: number; json: boolean; access: Access }
  | { kind: 'repl'; tools?: string; format: PtcProgramFormat; language: PtcProgramLanguage; timeoutMs?: number; access: Access }

/** What programs may touch beyond the default confinement, as the command line grants it. */
export interface Access {
  unconfined: boolean
  workspace?: string
  read: string[]
  network: boolean
}

export function parseCommand(argv: readonly string[]): Command {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        tools: { type: 'string' },
        format: { type: 'string' },
        language: { type: 'string' },
        typecheck: { type: 'boolean' },
        timeout: { type: 'string' },
        json: { type: 'boolean' },
        repl: { type: 'boolean' },
        workspace: { type: 'string' },
        read: { type: 'string', multiple: true },
        network: { type: 'string' },
        unconfined: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    })
  } catch (error) {
    // parseArgs explains unknown flags and missing values well; keep its first sentence.
    throw new UsageError((error as Error).message.split('. ')[0] ?? 'invalid arguments')
  }
  const { values, positionals } = parsed
  if (values.help) return { kind: 'help' }
  const format = parseFormat(values.format)
  const timeoutMs = parseTimeout(values.timeout)
  const access = parseAccess(values)
  const common = { ...(values.tools === undefined ? {} : { tools: values.tools }), ...(timeoutMs === undefined ? {} : { timeoutMs }), access }
  if (values.repl) {
    if (positionals.length > 0) throw new UsageError(`--repl reads programs from the terminal; unexpected argument ${JSON.stringify(positionals[0])}`)
    if (values.json) throw new UsageError('--json cannot be combined with --repl')
    if (values.typecheck) throw new UsageError('--typecheck checks a program file; it cannot be combined with --repl')
    const replLanguage = parseLanguage(values.language) ?? 'javascript'
    if (replLanguage === 'python') throw new UsageError('--language cannot be combined with --repl for python: the REPL reads JavaScript')
    return { kind: 'repl', format: format ?? 'repl', language: replLanguage, ...common }
  }
  if (positionals.length === 0) throw new UsageError('missing program file (or --repl)')
  if (positionals.length > 1) throw new UsageError(`expected one program file, got ${positionals.length}: ${positionals.join(' ')}`)
  const program = positionals[0]!
  // A TypeScript file says so by its extension, as it does to Node and tsc.
  const language = parseLanguage(values.language) ?? (/\.[mc]?ts$/.test(program) ? 'typescript' : 'javascript')
  return { kind: 'run', program, format: format ?? 'function-body', language, typecheck: values.typecheck === true, json: values.json === true, ...common }
}

function parseAccess(values: { workspace?: string; read?: string[]; network?: string; unconfined?: boolean }): Access {
  if (values.network !== undefined && values.network !== 'host') {
    throw new UsageError(`--network takes only "host" (programs have no network without it), got ${JSON.stringify(values.network)}`)
  }
  const unconfined = values.unconfined === true
  if (unconfined && (values.workspace !== undefined || values.read !== undefined || values.network !== undefined)) {
    throw new UsageError('--unconfined already grants everything; it cannot be combined with --workspace, --read or --network')
  }
  return { unconfined, ...(values.workspace === undefined ? {} : { workspace: values.workspace }), read: values.read ?? [], network: values.network === 'host' }
}

function parseFormat(value: string | undefined): PtcProgramFormat | undefined {
  if (value === undefined) return undefined
  if (!(PROGRAM_FORMATS as readonly string[]).includes(value)) {
    throw new UsageError(`--format must be one of ${PROGRAM_FORMATS.join(', ')}, got ${JSON.stringify(value)}`)
  }
  return value as PtcProgramFormat
}

function parseLanguage(value: string | undefined): PtcProgramLanguage | undefined {
  if (value === undefined) return undefined
  if (!(PROGRAM_LANGUAGES as readonly string[]).includes(value)) {
    throw new UsageError(`--language must be one of ${PROGRAM_LANGUAGES.join(', ')}, got ${JSON.stringify(value)}`)
  }
  return value as PtcProgramLanguage
}

function parseTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const ms = /^\d+$/.test(value) ? Number(value) : Number.NaN
  if (!Number.isSafeInteger(ms) || ms <= 0 || ms > MAX_TIMEOUT_MS) {
    throw new UsageError(`--timeout must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${JSON.stringify(value)}`)
  }
  return ms
}
