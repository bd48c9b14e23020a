// RUN: %sirenc-opt -p lower-smc-to-llvm %s --verify-diagnostics --split-input-file | filecheck %s
// What lower-smc-to-llvm refuses, each a compiler bug upstream: an op no
// pattern lowers (never kept or dropped silently), a suspension point that
// spill-across-suspends has not numbered, a row request whose index is not
// reloaded right before it (that pass's contract), two particles in a module,
// a runtime function's name taken by something else.

builtin.module {
  "smc.particle"() <{sym_name = "main", model = #smc.model<"f", false, "no stream", "", 0 : i64, []>}> ({
    %x = arith.constant 1.000000e+00 : f64
    %e = math.exp %x : f64 loc("m.si":3:7)
    "smc.finish"(%e) : (f64) -> ()
  }) : () -> ()
}
// CHECK: lower-smc-to-llvm: no lowering for math.exp (at m.si:3:7)

// -----
// CHECK: -----

builtin.module {
  "smc.particle"() <{sym_name = "main", model = #smc.model<"f", false, "no stream", "", 0 : i64, []>}> ({
    %x = arith.constant 1.000000e+00 : f64
    %lo = arith.constant 0 : index
    %r = scf.for %k = %lo to %lo step %lo iter_args(%a = %x) -> (f64) {
      scf.yield %a : f64
    }
    "smc.finish"(%r) : (f64) -> ()
  }) : () -> ()
}
// CHECK: lower-smc-to-llvm: no lowering for scf.for

// -----
// CHECK: -----

builtin.module {
  "smc.particle"() <{sym_name = "main", model = #smc.model<"f", false, "no stream", "", 0 : i64, []>}> ({
    %x = arith.constant 1.000000e+00 : f64
    "smc.resample"() : () -> ()
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: lower-smc-to-llvm: smc.resample has no point (run spill-across-suspends first)

// -----
// CHECK: -----

builtin.module {
  "smc.particle"() <{sym_name = "main", model = #smc.model<"f", true, "", "/data.csv", 0 : i64, []>}> ({
    %zero = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %i = arith.addi %zero, %one : i64
    %more, %row = "smc.next_row"(%i) <{point = 1 : i32}> : (i64) -> (i1, !smc.list<"f">) loc("m.si":4:1)
    %x = arith.constant 1.000000e+00 : f64
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: lower-smc-to-llvm: the index of smc.next_row is not reloaded right before it (run spill-across-suspends first) (at m.si:4:1)

// -----
// CHECK: -----

builtin.module {
  "smc.particle"() <{sym_name = "a", model = #smc.model<"f", false, "no stream", "", 0 : i64, []>}> ({
    %x = arith.constant 1.000000e+00 : f64
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
  "smc.particle"() <{sym_name = "b", model = #smc.model<"f", false, "no stream", "", 0 : i64, []>}> ({
    %x = arith.constant 1.000000e+00 : f64
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}
// CHECK: lower-smc-to-llvm: one smc.particle per module (@siren_resume), got 2

// -----
// CHECK: -----

builtin.module {
  llvm.func @sirenrt_std_normal(!llvm.ptr, f64) -> f64
  "smc.particle"() <{sym_name = "main", model = #smc.model<"f", false, "no stream", "", 0 : i64, []>}> ({
    %x = arith.constant 1.000000e+00 : f64
    %y = "smc.sample"(%x, %x) <{family = "gaussian"}> : (f64, f64) -> f64
    "smc.finish"(%y) : (f64) -> ()
  }) : () -> ()
}
// CHECK: lower-smc-to-llvm: @sirenrt_std_normal is already defined as something else
