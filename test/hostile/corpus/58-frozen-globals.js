// attack: freezes the global object and the core prototypes
// expect: ok
// value: "frozen"
// follow-up: exception
/* A frozen global object cannot take the next run's bindings: that run fails saying so, and the
   environment is discarded, so the run after it starts fresh. */
for (const target of [Object.prototype, Array.prototype, Function.prototype, Promise.prototype, Error.prototype]) Object.freeze(target)
Object.freeze(globalThis)
/* completion */ await tools.echo('frozen')
