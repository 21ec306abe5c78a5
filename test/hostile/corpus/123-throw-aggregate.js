// attack: throws an AggregateError holding 10 000 errors, each with a cause chain
// expect: exception
// message: ^AggregateError: many
throw new AggregateError(Array.from({ length: 10000 }, (_, i) => new Error('inner ' + i, { cause: new Error('cause ' + i) })), 'many')
