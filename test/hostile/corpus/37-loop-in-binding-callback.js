// attack: an infinite loop inside the callback of a binding call's promise
// expect: timeout
// timeout: 500
await tools.echo(1).then(() => { for (;;) {} })
