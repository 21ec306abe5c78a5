#!/usr/bin/env node
/**
 * `ptc-run`: try programs against a tools module without writing a host. Starts one
 * `WorkerPtcRuntime` in a Cordis context, runs one program (or a REPL), disposes the runtime
 * and exits: 0 when the program succeeded, 1 when it failed, 2 on a usage error.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { Context } from 'cordis'
import { WorkerPtcRuntime } from '../host/provider.js'
import type { WorkerPtcRuntimeOptions } from '../host/options.js'
import type { PtcRunResult } from '../seam/types.js'
import { type Access, type Command, USAGE, UsageError, parseCommand } from './args.js'
import { jsonText } from '../json/text.js'
import { toolsChecker } from './typecheck.js'
import { answerHolds } from './holds.js'
import { printResult } from './print.js'
import { runRepl } from './repl.js'
import { loadTools } from './tools.js'

const DEFAULT_MAX_TIMEOUT_MS = 600_000
/** The runtime's own default time budget, which a type check before the run spends from. */
const DEFAULT_TIMEOUT_MS = 120_000

async function main(argv: readonly string[]): Promise<number> {
  let command: Command
  try {
    command = parseCommand(argv)
  } catch (error) {
    return usage(error)
  }
  if (command.kind === 'help') {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  let program = ''
  let bindings
  try {
    if (command.kind === 'run') program = readProgram(command.program)
    bindings = command.tools === undefined ? [] : await loadTools(command.tools, process.cwd())
  } catch (error) {
    return usage(error)
  }

  const config: WorkerPtcRuntimeOptions = { programFormat: command.format, language: command.language, retainState: command.kind === 'repl', sandbox: sandboxOf(command.access) }
  if (command.timeoutMs !== undefined) {
    config.timeoutMs = command.timeoutMs
    config.maxTimeoutMs = Math.max(command.timeoutMs, DEFAULT_MAX_TIMEOUT_MS)
  }
  const root = new Context()
  let fiber
  try {
    fiber = await root.plugin(WorkerPtcRuntime, config)
  } catch (error) {
    // A directory named by --workspace or --read that is not there.
    return usage(new UsageError((error as Error).message))
  }
  const runtime = root.ptcRuntime
  try {
    if (command.kind === 'repl') {
      return await runRepl(runtime, bindings, { input: process.stdin, out: process.stdout, err: process.stderr, interactive: process.stdin.isTTY === true })
    }
    if (command.typecheck) {
      // Checked as the ready tool checks: against what the runtime and the tools module declare.
      const checker = toolsChecker(bindings, command.format)
      const checked = await checker.check(program, { timeoutMs: command.timeoutMs ?? config.timeoutMs ?? DEFAULT_TIMEOUT_MS }).finally(() => checker.close())
      const error = !checked.ok ? { kind: checked.kind, message: checked.message } : checked.mistakes !== undefined ? { kind: 'exception' as const, message: checked.mistakes } : undefined
      if (error !== undefined) {
        const failed: PtcRunResult = { output: [], calls: [], error }
        if (command.json) process.stdout.write(`${jsonText(failed)}\n`)
        else printResult(failed, process.stdout, process.stderr)
        return 1
      }
    }
    // Ctrl-C stops the program, which then fails with `abort` like any cancelled run.
    const controller = new AbortController()
    const interrupt = () => controller.abort(new Error('interrupted (Ctrl-C)'))
    process.once('SIGINT', interrupt)
    let result: PtcRunResult
    try {
      const first = await runtime.run(runtime.resolve({ program, bindings, signal: controller.signal }))
      result = await answerHolds(runtime, first, { out: process.stdout, err: process.stderr, signal: controller.signal })
    } finally {
      process.off('SIGINT', interrupt)
    }
    // The program chose how deep its value nests: JSON.stringify overflows at a few thousand levels.
    if (command.json) process.stdout.write(`${jsonText(result)}\n`)
    else printResult(result, process.stdout, process.stderr)
    // Set now: if disposal leaves nothing that keeps the event loop alive, Node exits with this code.
    process.exitCode = result.error ? 1 : 0
    return result.error ? 1 : 0
  } finally {
    await fiber.dispose()
  }
}

/** The runtime's `sandbox` setting for what the command line grants. */
function sandboxOf(access: Access): WorkerPtcRuntimeOptions['sandbox'] {
  if (access.unconfined) return 'none'
  const absolute = (directory: string) => path.resolve(directory)
  return {
    ...(access.workspace === undefined ? {} : { workspaceRoot: absolute(access.workspace) }),
    readableRoots: access.read.map(absolute),
    ...(access.network ? { network: 'host' as const } : {}),
  }
}

function readProgram(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : path.resolve(file), 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new UsageError(code === 'ENOENT' ? `program file not found: ${file}` : `cannot read program ${file}: ${(error as Error).message}`)
  }
}

function usage(error: unknown): number {
  if (!(error instanceof UsageError)) throw error
  process.stderr.write(`ptc-run: ${error.message}\n\n${USAGE}\n`)
  return 2
}

// The runtime is disposed before this point, so exiting only drops what a tools module may
// still hold open (a database handle, a timer) that would otherwise keep the process alive.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`ptc-run: internal error: ${(error as Error)?.stack ?? String(error)}\n`)
    process.exit(1)
  },
)
