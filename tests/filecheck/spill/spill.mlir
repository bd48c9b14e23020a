// RUN: %sirenc-opt -p spill-across-suspends %s | filecheck %s
// %x is used after the first suspension: it gets frame slot 0, a store right
// after its definition and a load at its use. %y dies before the suspension and
// stays in a register; the constant %c is recreated after re-entry instead of
// taking a slot. The list %l lives across both suspensions: slot 1, a root of
// both. %z takes slot 0 again: %x is read for the last time just before. Suspension
// points are numbered 1, 2 in walk order, and the model records the slots and roots.

builtin.module {
  "smc.particle"() <{sym_name = "model", model = #smc.model<"Lf", false, "no stream", "", 0 : i64, []>}> ({
    %c = arith.constant 2.000000e+00 : f64
    %x = "smc.sample"(%c) <{family = "exponential"}> : (f64) -> f64
    %y = arith.mulf %x, %x : f64
    "smc.observe"(%c, %y) <{family = "exponential"}> : (f64, f64) -> ()
    %nil = "smc.nil"() : () -> !smc.list<"f">
    %l = "smc.cons"(%y, %nil) : (f64, !smc.list<"f">) -> !smc.list<"f">
    "smc.resample"() : () -> ()
    %z = arith.addf %x, %c : f64
    "smc.resample"() : () -> ()
    %l2 = "smc.cons"(%z, %l) : (f64, !smc.list<"f">) -> !smc.list<"f">
    "smc.finish"(%l2) : (!smc.list<"f">) -> ()
  }) : () -> ()
}

// CHECK:      "smc.particle"() <{sym_name = "model", model = #smc.model<"Lf", false, "no stream", "", 2 : i64, {{\[}}[1 : i32, 1 : i64, "Lf"], [2 : i32, 1 : i64, "Lf"]]>}> ({
// CHECK-NEXT:   %[[C:.*]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT:   %[[X:.*]] = "smc.sample"(%[[C]]) <{family = "exponential"}> : (f64) -> f64
// CHECK-NEXT:   "smc.frame_store"(%[[X]]) <{slot = 0 : i64}> : (f64) -> ()
// CHECK-NEXT:   %[[Y:.*]] = arith.mulf %[[X]], %[[X]] : f64
// CHECK-NEXT:   "smc.observe"(%[[C]], %[[Y]]) <{family = "exponential"}> : (f64, f64) -> ()
// CHECK-NEXT:   %[[NIL:.*]] = "smc.nil"() : () -> !smc.list<"f">
// CHECK-NEXT:   %[[L:.*]] = "smc.cons"(%[[Y]], %[[NIL]])
// CHECK-NEXT:   "smc.frame_store"(%[[L]]) <{slot = 1 : i64}> : (!smc.list<"f">) -> ()
// CHECK-NEXT:   "smc.resample"() <{point = 1 : i32}> : () -> ()
// CHECK-NEXT:   %[[C2:.*]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT:   %[[XL:.*]] = "smc.frame_load"() <{slot = 0 : i64}> : () -> f64
// CHECK-NEXT:   %[[Z:.*]] = arith.addf %[[XL]], %[[C2]] : f64
// CHECK-NEXT:   "smc.frame_store"(%[[Z]]) <{slot = 0 : i64}> : (f64) -> ()
// CHECK-NEXT:   "smc.resample"() <{point = 2 : i32}> : () -> ()
// CHECK-NEXT:   %[[LL:.*]] = "smc.frame_load"() <{slot = 1 : i64}> : () -> !smc.list<"f">
// CHECK-NEXT:   %[[ZL:.*]] = "smc.frame_load"() <{slot = 0 : i64}> : () -> f64
// CHECK-NEXT:   %[[L2:.*]] = "smc.cons"(%[[ZL]], %[[LL]])
// CHECK-NEXT:   "smc.finish"(%[[L2]]) : (!smc.list<"f">) -> ()
