/**
 * The bound on a program's size (`maxProgramBytes`), one rule for every place that reads a
 * program: the host lowers it on its own thread, and the ready tool's type check reads it
 * before the run does, so an overlong program is refused before either.
 */

/**
 * Why `program` is too long, or undefined. Its length in UTF-16 units never exceeds its UTF-8
 * bytes, so an overlong program is refused without reading it.
 */
export function overlongProgram(program: string, maxProgramBytes: number): string | undefined {
  const refusal = (size: string) => `The program is ${size}; a program may be at most ${maxProgramBytes} bytes (maxProgramBytes). Keep data out of the program: have it fetched by a tool call.`
  if (program.length > maxProgramBytes) return refusal(`over ${maxProgramBytes} bytes`)
  const bytes = Buffer.byteLength(program)
  return bytes > maxProgramBytes ? refusal(`${bytes} bytes`) : undefined
}
