// attack: writes a chunk whose string conversion throws to process.stdout
// expect: exception
// message: The "chunk" argument must be of type string or an instance of Buffer, TypedArray, or DataView
/* Node's streams refuse a chunk that is neither a string nor bytes without converting it, and
   so does the capture: the hostile conversion never runs. */
process.stdout.write({ [Symbol.toPrimitive]() { throw new Error('coercion refused') } })
