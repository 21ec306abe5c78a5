/**
 * Names bound by declarations, and the rules for which names lowered code may spell out as
 * identifiers of its own.
 */
import type { Pattern } from 'acorn'
import { BOOTSTRAP_NAME } from '../seam/names.js'

/**
 * Add every name `pattern` binds to `names`, in source order: identifiers, object and array
 * patterns at any depth, defaults (`a = 1` binds `a`), rest elements, and holes (bind nothing).
 */
export function addPatternNames(pattern: Pattern, names: Set<string>): void {
  switch (pattern.type) {
    case 'Identifier':
      names.add(pattern.name)
      return
    case 'ObjectPattern':
      for (const property of pattern.properties) {
        addPatternNames(property.type === 'RestElement' ? property.argument : property.value, names)
      }
      return
    case 'ArrayPattern':
      for (const element of pattern.elements) if (element) addPatternNames(element, names)
      return
    case 'RestElement':
      addPatternNames(pattern.argument, names)
      return
    case 'AssignmentPattern':
      addPatternNames(pattern.left, names)
      return
    case 'MemberExpression':
      // Only assignment patterns contain member targets; declarations never do.
      return
  }
}

/**
 * Names that cannot be bound with `let` in strict code or in our async wrapper (reserved words,
 * strict-mode restrictions, our parameter), so lowered code never declares or closes over them
 * itself. A sloppy program may still declare some of them.
 */
const UNBINDABLE = new Set([
  'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do',
  'else', 'enum', 'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'import', 'in',
  'instanceof', 'new', 'null', 'return', 'super', 'switch', 'this', 'throw', 'true', 'try',
  'typeof', 'var', 'void', 'while', 'with', 'await', 'yield', 'let', 'static', 'implements',
  'interface', 'package', 'private', 'protected', 'public', 'eval', 'arguments', BOOTSTRAP_NAME,
])

const IDENTIFIER = /^[\p{ID_Start}$_][\p{ID_Continue}$\u200C\u200D]*$/u

/**
 * Whether lowered code may write `name` as a binding of its own. Carried names come from the
 * host; checking their spelling keeps a bad name from becoming code.
 */
export function isBindableName(name: string): boolean {
  return IDENTIFIER.test(name) && !UNBINDABLE.has(name)
}

/** `"a", "b"`: names as a list of string literals for a hook call. */
export function nameList(names: Iterable<string>): string {
  const literals: string[] = []
  for (const name of names) literals.push(JSON.stringify(name))
  return literals.join(', ')
}
