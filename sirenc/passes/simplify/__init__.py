"""The first stage after IR generation: `inline-functions` leaves one function, @main, and
`fold-constants` folds the float arithmetic that inlining left on constants. The program stays a
`siren` program; the plan analysis and every later pass read it in this form."""
