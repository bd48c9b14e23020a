// RUN: %sirenc-opt %s --verify-diagnostics --split-input-file | filecheck %s
// One case per error the smc dialect's verifiers (sirenc/ir/smc/) raise, in the
// order of the definitions there; each case must fail with its own message.
// Attributes and types are verified as they are parsed (no op to point at).

// A descriptor with an unknown kind.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"q", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: bad type descriptor 'q'

// -----
// CHECK: -----

// A descriptor with characters after the type.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"ff", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: bad type descriptor 'ff'

// -----
// CHECK: -----

// A descriptor that stops inside a pair.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"Pf", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: bad type descriptor 'Pf'

// -----
// CHECK: -----

// A list type's element is a descriptor too.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %l = "smc.nil"() : () -> !smc.list<"x">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: bad type descriptor 'x'

// -----
// CHECK: -----

// The particle takes no arguments.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
  ^bb0(%a: f64):
    %x = arith.constant 0.000000e+00 : f64
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: a particle program takes no arguments

// -----
// CHECK: -----

// The particle ends with smc.finish.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    "llvm.unreachable"() : () -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: a particle program ends with smc.finish

// -----
// CHECK: -----

// smc.finish gives the model's result type.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0 : i64
    "smc.finish"(%x) : (i64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.finish's values do not match the model's result type

// -----
// CHECK: -----

// smc.finish ends an smc.particle, nothing else.
func.func @f(%x: f64) {
  "smc.finish"(%x) : (f64) -> ()
}
// CHECK: Operation does not verify: smc.finish ends an smc.particle

// -----
// CHECK: -----

// An unknown distribution family.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %y = "smc.sample"(%x) <{family = "cauchy"}> : (f64) -> f64
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: unknown distribution family 'cauchy'

// -----
// CHECK: -----

// A family's parameters are its machine scalars.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    "smc.observe"(%x, %x) <{family = "gaussian"}> : (f64, f64) -> ()
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: gaussian takes parameters (f64, f64), got (f64)

// -----
// CHECK: -----

// smc.next_row's types.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %i = arith.constant 0 : i32
    %more, %row = "smc.next_row"(%i) : (i32) -> (i1, !smc.list<"f">)
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.next_row takes an i64 index and gives (i1, !smc.list<"f">)

// -----
// CHECK: -----

// A frame slot holds a machine scalar or a list handle (load).
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %y = "smc.frame_load"() <{slot = 0 : i64}> : () -> f32
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: a frame slot must be a machine scalar or a list handle, got f32

// -----
// CHECK: -----

// Frame slots are numbered from 0 (load).
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %y = "smc.frame_load"() <{slot = -1 : i64}> : () -> f64
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: frame slots are numbered from 0

// -----
// CHECK: -----

// A frame slot holds a machine scalar or a list handle (store).
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %y = arith.constant 0.000000e+00 : f32
    "smc.frame_store"(%y) <{slot = 0 : i64}> : (f32) -> ()
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: a frame slot must be a machine scalar or a list handle, got f32

// -----
// CHECK: -----

// Frame slots are numbered from 0 (store).
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    "smc.frame_store"(%x) <{slot = -1 : i64}> : (f64) -> ()
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: frame slots are numbered from 0

// -----
// CHECK: -----

// A const_list of lists holds its encoding: [1] is one element, [1.]'s length is missing.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %l = "smc.const_list"() <{words = array<i64: 1>}> : () -> !smc.list<"Lf">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.const_list's words are not the encoding of a non-empty list of its type

// -----
// CHECK: -----

// ... and its bools are 0 or 1 there too.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %l = "smc.const_list"() <{words = array<i64: 1, 1, 2>}> : () -> !smc.list<"Lb">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.const_list's words are not the encoding of a non-empty list of its type

// -----
// CHECK: -----

// smc.const_list's elements are at least one word each.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %l = "smc.const_list"() <{words = array<i64: 1>}> : () -> !smc.list<"u">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.const_list's elements are floats and bools (in tuples), at least one word each

// -----
// CHECK: -----

// smc.const_list's words are i64.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %l = "smc.const_list"() <{words = array<i32: 1>}> : () -> !smc.list<"f">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.const_list's words are i64

// -----
// CHECK: -----

// smc.const_list is not empty (the empty list is smc.nil).
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %l = "smc.const_list"() <{words = array<i64>}> : () -> !smc.list<"f">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.const_list has 0 words, not a positive multiple of its elements' 1

// -----
// CHECK: -----

// smc.const_list holds whole elements.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %l = "smc.const_list"() <{words = array<i64: 0, 1, 0>}> : () -> !smc.list<"Pfb">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.const_list has 3 words, not a positive multiple of its elements' 2

// -----
// CHECK: -----

// smc.const_list's bool words are 0 or 1.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %l = "smc.const_list"() <{words = array<i64: 0, 1, 0, 2>}> : () -> !smc.list<"Pfb">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.const_list's bool words are 0 or 1

// -----
// CHECK: -----

// smc.cons gives a list of its tail's type.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %n = "smc.nil"() : () -> !smc.list<"f">
    %l = "smc.cons"(%x, %n) : (f64, !smc.list<"f">) -> !smc.list<"b">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.cons gives a list of its tail's type

// -----
// CHECK: -----

// smc.cons's head is the element's scalars.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %n = "smc.nil"() : () -> !smc.list<"Pff">
    %l = "smc.cons"(%x, %n) : (f64, !smc.list<"Pff">) -> !smc.list<"Pff">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.cons's head does not match the list's element type

// -----
// CHECK: -----

// smc.head gives the element's scalars.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %n = "smc.nil"() : () -> !smc.list<"Pfb">
    %h = "smc.head"(%n) : (!smc.list<"Pfb">) -> f64
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.head's results do not match the list's element type

// -----
// CHECK: -----

// smc.tail gives a list of its operand's type.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %n = "smc.nil"() : () -> !smc.list<"f">
    %t = "smc.tail"(%n) : (!smc.list<"f">) -> !smc.list<"b">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.tail gives a list of its operand's type

// -----
// CHECK: -----

// smc.reverse gives a list of its operand's type.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %n = "smc.nil"() : () -> !smc.list<"f">
    %t = "smc.reverse"(%n) : (!smc.list<"f">) -> !smc.list<"b">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.reverse gives a list of its operand's type

// -----
// CHECK: -----

// smc.range gives a list of floats.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %r = "smc.range"(%x, %x) : (f64, f64) -> !smc.list<"b">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.range gives a list of floats

// -----
// CHECK: -----

// smc.read_file gives a list of rows.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %d = "smc.read_file"() <{path = "/d.csv"}> : () -> !smc.list<"f">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.read_file gives a list of rows (!smc.list<"Lf">)

// -----
// CHECK: -----

// smc.read_file takes an absolute path.
builtin.module {
  "smc.particle"() <{sym_name = "m", model = #smc.model<"f", false, "no", "", 0 : i64, []>}> ({
    %x = arith.constant 0.000000e+00 : f64
    %d = "smc.read_file"() <{path = "d.csv"}> : () -> !smc.list<"Lf">
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: Operation does not verify: smc.read_file takes an absolute path
