// attack: a completion with -0, NaN and a sparse array
// expect: invalid-output
/* completion */ ({ values: [1, -0, NaN, , 5] })
