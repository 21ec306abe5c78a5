/**
 * `ptc-run --typecheck`: the program checked before it runs, against what the runtime puts in
 * every environment and the tools module's namespaces. A tools module has no schemas, so each
 * tool takes and resolves `any`: the check is about the language and the names.
 */
import type { PtcBindingNamespace, PtcProgramFormat } from '../seam/types.js'
import { RUNTIME_DECLARATIONS } from '../tools/run-code-tool.js'
import { type ProgramChecker, createProgramChecker } from '../tools/typecheck.js'

/** A checker of programs over `bindings` (needs the optional peer `typescript`). */
export function toolsChecker(bindings: readonly PtcBindingNamespace[], format: PtcProgramFormat): ProgramChecker {
  const declarations = bindings.map(({ global, functions, errorClass }) => {
    const members = Object.keys(functions).map((member) => `  ${JSON.stringify(member)}(args?: any): Promise<any>`)
    const namespace = `declare const ${global}: {\n${members.join('\n')}\n}`
    return errorClass ? `${namespace}\ndeclare class ${errorClass.name} extends Error { ${errorClass.memberNameProperty}: string }` : namespace
  })
  return createProgramChecker([RUNTIME_DECLARATIONS, ...declarations].join('\n\n'), format)
}
