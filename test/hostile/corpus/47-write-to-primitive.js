// attack: writes a chunk whose string conversion throws to process.stdout
// expect: exception
// message: coercion refused
process.stdout.write({ [Symbol.toPrimitive]() { throw new Error('coercion refused') } })
