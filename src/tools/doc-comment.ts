/** A JSDoc block for `text` at `indent`, ending in a newline; '' when there is no text. */
export function docComment(text: string | undefined, indent: string): string {
  if (text === undefined || text.trim() === '') return ''
  // `*/` inside the text would end the comment early.
  const lines = text.trim().replaceAll('*/', '*\\/').split(/\r?\n/)
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`
  return `${indent}/**\n${lines.map((line) => `${indent} *${line === '' ? '' : ` ${line}`}`).join('\n')}\n${indent} */\n`
}
