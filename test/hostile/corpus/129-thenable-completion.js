// attack: the completion is a thenable that never settles
// expect: timeout
// timeout: 500
/* completion */ ({ then() {} })
