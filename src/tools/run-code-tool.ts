/**
 * The one tool an agent loop offers the model: "run this program". Its description tells the
 * model how to write a program for this runtime and which tools it may call; `run` runs the
 * program and answers with the text the model reads next, beside the whole result and the files
 * of the images it showed, for the host (`execute`: the text alone).
 */
import type { PtcRuntime } from '../seam/api.js'
import { validateBindings } from '../seam/names.js'
import type { PtcBindingErrorReport, PtcBindingNamespace, PtcHoldDecision, PtcPause, PtcRunFailure, PtcRunResult } from '../seam/types.js'
import { DURABLE_TOKEN_PREFIX } from '../seam/types.js'
import { CATALOG_DECLARATION, CATALOG_GLOBAL, ToolCatalog, catalogNamespace } from './catalog.js'
import { docComment } from './doc-comment.js'
import { type ToolGroup, checkToolGroups } from './group.js'
import { throwIfDeploymentFailure } from './deployment-error.js'
import { type ResultTextBudget, resultText } from './result-text.js'
import { ImageRecord, type RunCodeImage } from './shown-images.js'
import { pythonCatalogGroups, pythonToolsText } from './python-declarations.js'
import { createProgramChecker } from './typecheck.js'
import { overlongProgram } from '../transform/program-size.js'

/** What `createRunCodeTool` needs. */
export interface RunCodeToolOptions {
  /** The runtime that runs the programs (`ctx.ptcRuntime`). */
  runtime: PtcRuntime
  /** The tools programs may call, from `defineToolGroup` or `mcpToolGroup`. */
  groups: readonly ToolGroup[]
  /** The tool's name; default `run_code`. */
  name?: string
  /** Printed output the model reads, in characters; default 10 000. */
  maxOutputChars?: number
  /** Value or failure message the model reads, in characters; default 10 000. */
  maxValueChars?: number
  /** Each run's time budget; omitted: the runtime's default (see `PtcRunRequest.timeoutMs`). */
  timeoutMs?: number | null
  /**
   * Told about every tool call that failed on the host side: a tool that threw, or resolved a
   * value the program cannot receive (see `PtcRunRequest.onBindingError`).
   */
  onToolError?: (report: PtcBindingErrorReport) => void
  /**
   * Type-check each program against the declarations the model read before running it (needs
   * the optional peer `typescript`). A program that does not check is not run: the model reads
   * the compiler's messages at its own lines and columns as an `exception`. Meant for
   * TypeScript programs; globals and modules the declarations do not describe are left to run
   * time. The check runs in a worker thread of its own, never on the host's thread, within the
   * run's time budget and a memory budget (`maxMemoryMb`, default 512); a check that runs out
   * of either fails the run saying so. A check never takes longer than `maxCheckMs` (default
   * 10 000), whatever the run's budget. Checks wait for one of two checkers by conversation
   * (`stateOwner`; checks without one count as one conversation): one whose check ran out of a
   * bound in the last minute waits behind the others, and one may have 4 checks waiting, its
   * next refused. An object turns it on with options:
   * `typescript`, the TypeScript package directory to use (5.x, 6 or 7; default: the one this
   * package resolves). Default `false`.
   */
  typecheck?: boolean | { typescript?: string; maxMemoryMb?: number; maxCheckMs?: number }
  /**
   * In-program tool discovery. A number: on when the groups hold more tools than it (default
   * 40); `'always'` or `'never'`. When on, the description lists each group with its tool count
   * and one line instead of every declaration, and programs get the global `catalog`
   * (`search(query, { limit })`, `describe('group.tool')`), served by the host from the
   * groups' schemas.
   */
  discovery?: number | 'always' | 'never'
}

/** Per call: whose retained state the program sees, and a way to stop it. */
export interface RunCodeCallOptions {
  /** The conversation; runs with the same owner share one environment when the runtime retains state. */
  stateOwner?: object
  /** Stops the run; it then reports an `abort` failure. */
  signal?: AbortSignal
  /**
   * Called when the run pauses on a held call (a tool's `needsApproval` or `interrupt`), before
   * the text saying so resolves: answer it later with `tool.resume(paused.id, decision)`.
   */
  onPause?: (paused: PtcPause) => void
}

/** What one run of the ready tool gives its host. */
export interface RunCodeAnswer {
  /** The text the model reads: the output, then the value, the failure or the pause, cut to the budget. */
  text: string
  /** The run's whole result: `calls`, `output` with its images, `paused`, `sandbox`, `value`, `error`. */
  result: PtcRunResult
  /** The images the program showed whose files its tools gave (`PtcImage`), in output order. */
  images: RunCodeImage[]
}

/** A tool in the shape model APIs and agent frameworks take. */
export interface RunCodeTool {
  /** The name to register the tool under; the model calls it by this name. */
  name: string
  /** The runtime's `executionInstructions`, the result format and the tools' declarations. */
  description: string
  /** JSON Schema of the tool's input: `{ program: string }`. */
  inputSchema: {
    type: 'object'
    properties: { program: { type: 'string'; description: string } }
    required: ['program']
    additionalProperties: false
  }
  /** The namespaces every run installs (with discovery on, `catalog`'s last). */
  bindings: PtcBindingNamespace[]
  /** Whether in-program discovery is on: the description then declares groups, not tools. */
  discovery: boolean
  /**
   * Runs `program` and resolves with the text the model reads (the output first, then the value
   * or the failure, each cut to the budget), the whole result and the images it showed. Rejects
   * when `program` is not a string or the runtime refuses the request (disposed, bad options),
   * and with a `PtcDeploymentError` when the deployment failed the run (its confinement could
   * not be set up): the model could not fix that, so the host is told.
   */
  run(input: { program: string }, options?: RunCodeCallOptions): Promise<RunCodeAnswer>
  /** `run`, resolving with the text alone. */
  execute(input: { program: string }, options?: RunCodeCallOptions): Promise<string>
  /**
   * Answers a held call (see `RunCodeCallOptions.onPause`) and resolves with how the program
   * went on, as `run` does. Rejects as `runtime.resume` does. A durable token (a runtime or
   * request `pause: 'durable'`) is replayed with this tool's bindings.
   */
  resumeRun(id: string, decision: PtcHoldDecision, options?: Omit<RunCodeCallOptions, 'stateOwner'>): Promise<RunCodeAnswer>
  /** `resumeRun`, resolving with the text alone, for the model to read next. */
  resume(id: string, decision: PtcHoldDecision, options?: Omit<RunCodeCallOptions, 'stateOwner'>): Promise<string>
  /**
   * Ends what the tool keeps warm between calls (the type check's worker, with `typecheck`);
   * the tool still works after. Left open, an idle worker ends by itself after 30 s and never
   * keeps the process alive.
   */
  close(): Promise<void>
}

/**
 * The declarations of what the runtime itself puts in every environment. `Image` is declared
 * as an interface, so these declarations also compile beside TypeScript's DOM library (whose
 * `Image` is a value: a class would be a duplicate identifier there).
 */
export const RUNTIME_DECLARATIONS = `/** An image a tool returned; \`inspect(image)\` shows it to you. */
interface Image { readonly path: string; readonly width: number; readonly height: number; readonly mediaType: string }
/** Shows an Image; prints a readable rendering of any other value. */
declare function inspect(value: unknown): void`


/**
 * Builds the ready tool from a runtime and tool groups. Throws when two groups claim the same
 * global or error class, or a budget is not a positive integer.
 */
export function createRunCodeTool(options: RunCodeToolOptions): RunCodeTool {
  const { runtime, groups, name = 'run_code', timeoutMs, onToolError } = options
  checkToolGroups(groups, 'createRunCodeTool')
  const budget: ResultTextBudget = {
    maxOutputChars: positive(options.maxOutputChars ?? 10_000, 'maxOutputChars'),
    maxValueChars: positive(options.maxValueChars ?? 10_000, 'maxValueChars'),
  }
  const total = groups.reduce((sum, group) => sum + Object.keys(group.namespace.functions).length, 0)
  const discovery = discoveryOn(options.discovery ?? DEFAULT_DISCOVERY_THRESHOLD, total)
  // A group assembled by hand (as before discovery existed) has declarations but no members to index.
  const unlisted = discovery ? groups.find((group) => !Array.isArray(group.tools)) : undefined
  if (unlisted) {
    throw new TypeError(`createRunCodeTool: discovery needs each group's tools list; group "${unlisted.namespace.global}" has none (build it with defineToolGroup or mcpToolGroup, or pass discovery: 'never')`)
  }
  const bindings = groups.map((group) => group.namespace)
  /** The image records of runs paused on a live hold, by hold id, until `resume` answers them. */
  const held = new Map<string, ImageRecord>()
  const python = runtime.language === 'python'
  if (discovery) bindings.push(catalogNamespace(new ToolCatalog(python ? pythonCatalogGroups(groups) : groups)))
  validateBindings(bindings)
  const languageName = python ? 'Python' : runtime.language === 'typescript' ? 'TypeScript' : 'JavaScript'
  const declarations = [RUNTIME_DECLARATIONS, ...groups.map((group) => group.declarations)].join('\n\n')
  const typecheck = options.typecheck
  if (python && typecheck !== undefined && typecheck !== false) throw new TypeError('createRunCodeTool: typecheck checks TypeScript; the runtime runs Python programs')
  const checker = typecheck === true || (typeof typecheck === 'object' && typecheck !== null) ? createProgramChecker(declarations, runtime.programFormat, typecheck === true ? {} : typecheck) : undefined
  const description = [
    `Run a ${languageName} program that calls the tools declared below, and read what it printed and what it returned.`,
    runtime.executionInstructions,
    `You get back the printed output first (beyond ${budget.maxOutputChars} characters its middle is cut), ` +
      `then the result as JSON or the error (cut after ${budget.maxValueChars} characters).`,
    checker ? 'Each program is type-checked against these declarations before it runs; one that does not check does not run.' : '',
    python ? pythonToolsText(groups, discovery, total) : discovery ? discoveryText(groups, total) : `Tools available as globals:\n\`\`\`ts\n${declarations}\n\`\`\``,
  ]
    .filter((part) => part !== '')
    .join('\n\n')

  return {
    name,
    description,
    inputSchema: {
      type: 'object',
      properties: { program: { type: 'string', description: `The program (${runtime.programFormat} format${runtime.language === 'javascript' ? '' : `, ${languageName}`}).` } },
      required: ['program'],
      additionalProperties: false,
    },
    bindings,
    discovery,
    run,
    execute: async (input, call) => (await run(input, call)).text,
    resumeRun,
    resume: async (id, decision, call) => (await resumeRun(id, decision, call)).text,
    async close() {
      await checker?.close()
    },
  }

  async function run(input: { program: string }, call: RunCodeCallOptions = {}): Promise<RunCodeAnswer> {
    const program = input?.program
    if (typeof program !== 'string') throw new TypeError(`${name}: input.program must be a string, got ${typeof program}`)
    const images = new ImageRecord()
    const watched = images.watch(bindings)
    const request = (budgetMs: number | null | undefined) => runtime.resolve({
      program,
      bindings: watched,
      ...(call.stateOwner !== undefined ? { stateOwner: call.stateOwner } : {}),
      ...(call.signal !== undefined ? { signal: call.signal } : {}),
      ...(budgetMs !== undefined ? { timeoutMs: budgetMs } : {}),
      ...(onToolError !== undefined ? { onBindingError: onToolError } : {}),
    })
    let spec = request(timeoutMs)
    if (checker) {
      const failed = (kind: PtcRunFailure['kind'], message: string) => answer({ output: [], calls: [], error: { kind, message } }, images, call.onPause)
      // The run refuses an overlong program unread; its check would read it all, in the compiler, first.
      const tooLong = runtime.maxProgramBytes === undefined ? undefined : overlongProgram(program, runtime.maxProgramBytes)
      if (tooLong) return failed('exception', tooLong)
      // The check spends the run's time budget; the run gets what is left.
      const started = performance.now()
      const checked = await checker.check(program, { timeoutMs: spec.timeoutMs ?? Number.POSITIVE_INFINITY, signal: call.signal, owner: call.stateOwner })
      if (!checked.ok) return failed(checked.kind, checked.message)
      if (checked.mistakes !== undefined) return failed('exception', checked.mistakes)
      if (spec.timeoutMs !== null) spec = request(Math.max(1, Math.round(spec.timeoutMs - (performance.now() - started))))
    }
    return answer(await runtime.run(spec), images, call.onPause)
  }

  async function resumeRun(id: string, decision: PtcHoldDecision, call: Omit<RunCodeCallOptions, 'stateOwner'> = {}): Promise<RunCodeAnswer> {
    // A live hold goes on with the bindings its run was given; a durable token replays the
    // run, which needs the tool's bindings again.
    const durable = typeof id === 'string' && id.startsWith(DURABLE_TOKEN_PREFIX)
    const images = (!durable && held.get(id)) || new ImageRecord()
    held.delete(id)
    const options = {
      ...(call.signal ? { signal: call.signal } : {}),
      ...(durable ? { bindings: images.watch(bindings), ...(onToolError !== undefined ? { onBindingError: onToolError } : {}) } : {}),
    }
    return answer(await runtime.resume(id, decision, options), images, call.onPause)
  }

  function answer(result: PtcRunResult, images: ImageRecord, onPause: RunCodeCallOptions['onPause']): RunCodeAnswer {
    throwIfDeploymentFailure(result)
    if (result.paused) {
      // The paused run's later calls still note their images in its record.
      held.set(result.paused.id, images)
      // A hold nobody answers expires in the runtime; its record goes once many newer ones wait.
      if (held.size > MAX_HELD_RECORDS) held.delete(held.keys().next().value!)
      onPause?.(result.paused)
    }
    return { text: resultText(result, budget), result, images: images.shown(result) }
  }
}

/** What a group is before its tools are found: `catalog.describe` gives each one's real type. */
const TOOL_GROUP_TYPE = '/** Each tool: `await group.tool(args)`; its declaration says which args. */\ntype ToolGroup = { [tool: string]: (args?: object) => Promise<any> }'

/** Image records of paused runs kept for their `resume`. */
const MAX_HELD_RECORDS = 1_000

/** Above this many tools, the description declares groups and programs search for tools. */
export const DEFAULT_DISCOVERY_THRESHOLD = 40

function discoveryOn(setting: number | 'always' | 'never', total: number): boolean {
  if (setting === 'always') return true
  if (setting === 'never') return false
  if (!Number.isSafeInteger(setting) || setting < 0) {
    throw new TypeError(`createRunCodeTool: discovery must be 'always', 'never' or a tool count (a non-negative integer), got ${JSON.stringify(setting)}`)
  }
  return total > setting
}

/**
 * The description's tool section with discovery on: how to find tools (models that were told
 * only "search" called it as a tool of their own, so the text says where it works), then each
 * group as a global with its count and the first line of its description, and its error class.
 */
function discoveryText(groups: readonly ToolGroup[], total: number): string {
  const first = groups.flatMap((group) => group.tools)[0]?.name ?? 'group.tool'
  const declarations = groups.map((group) => {
    const { global, errorClass } = group.namespace
    const line = (group.description ?? '').split('\n')[0]!.trim()
    const summary = `${line === '' ? '' : `${line.replace(/\.?$/, '.')} `}${group.tools.length} tools: find them with ${CATALOG_GLOBAL}.search.`
    const block = `${docComment(summary, '')}declare const ${global}: ToolGroup`
    if (!errorClass) return block
    return `${block}\ndeclare class ${errorClass.name} extends Error { ${errorClass.memberNameProperty}: string } // a failed ${global} call`
  })
  return [
    `0 of ${total} tools shown. Find the ones you need inside your program with the global \`${CATALOG_GLOBAL}\`: ` +
      `\`await ${CATALOG_GLOBAL}.search('words for what you need', { limit: 5 })\` resolves to the best matches, each \`{ name, description, declaration }\`, ` +
      `and \`await ${CATALOG_GLOBAL}.describe('${first}')\` to one tool's declaration. ` +
      `Search works only inside a program: \`${CATALOG_GLOBAL}\` is not a tool you can call directly. ` +
      'Search and call in the same program when the match is clear; print what you found when it is not.',
    `Tools available as globals:\n\`\`\`ts\n${[RUNTIME_DECLARATIONS, CATALOG_DECLARATION, TOOL_GROUP_TYPE, ...declarations].join('\n\n')}\n\`\`\``,
  ].join('\n\n')
}

function positive(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`createRunCodeTool: ${field} must be a positive integer, got ${value}`)
  return value
}
