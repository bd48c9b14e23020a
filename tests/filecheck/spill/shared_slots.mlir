// RUN: %sirenc-opt -p spill-across-suspends --split-input-file %s | filecheck %s
// Values never kept at once share a slot: %a is read for the last time before %b is
// stored, so both take slot 0 and the frame has one slot.

builtin.module {
  "smc.particle"() <{sym_name = "model", model = #smc.model<"f", false, "no stream", "", 0 : i64, []>}> ({
    %c = arith.constant 1.000000e+00 : f64
    %a = "smc.sample"(%c) <{family = "exponential"}> : (f64) -> f64
    "smc.resample"() : () -> ()
    %b = "smc.sample"(%a) <{family = "exponential"}> : (f64) -> f64
    "smc.resample"() : () -> ()
    "smc.finish"(%b) : (f64) -> ()
  }) : () -> ()
}

// CHECK:      model = #smc.model<"f", false, "no stream", "", 1 : i64, []>
// CHECK:      %[[A:.*]] = "smc.sample"
// CHECK-NEXT: "smc.frame_store"(%[[A]]) <{slot = 0 : i64}> : (f64) -> ()
// CHECK-NEXT: "smc.resample"() <{point = 1 : i32}> : () -> ()
// CHECK-NEXT: %[[AL:.*]] = "smc.frame_load"() <{slot = 0 : i64}> : () -> f64
// CHECK-NEXT: %[[B:.*]] = "smc.sample"(%[[AL]])
// CHECK-NEXT: "smc.frame_store"(%[[B]]) <{slot = 0 : i64}> : (f64) -> ()

// -----

// A use in the other branch of the if never follows the then-branch's resample(): the list
// %l is live across the else-branch's point only (a root there), though in program order its use
// comes after both.

builtin.module {
  "smc.particle"() <{sym_name = "model", model = #smc.model<"Lf", false, "no stream", "", 0 : i64, []>}> ({
    %c = arith.constant 1.000000e+00 : f64
    %x = "smc.sample"(%c) <{family = "exponential"}> : (f64) -> f64
    %nil = "smc.nil"() : () -> !smc.list<"f">
    %l = "smc.cons"(%x, %nil) : (f64, !smc.list<"f">) -> !smc.list<"f">
    %t = arith.cmpf olt, %x, %c : f64
    %r = scf.if %t -> (!smc.list<"f">) {
      "smc.resample"() : () -> ()
      scf.yield %nil : !smc.list<"f">
    } else {
      "smc.resample"() : () -> ()
      scf.yield %l : !smc.list<"f">
    }
    "smc.finish"(%r) : (!smc.list<"f">) -> ()
  }) : () -> ()
}

// CHECK:      model = #smc.model<"Lf", false, "no stream", "", 2 : i64, {{\[}}[1 : i32, 0 : i64, "Lf"], [2 : i32, 1 : i64, "Lf"]]>
// CHECK:      "smc.resample"() <{point = 1 : i32}> : () -> ()
// CHECK-NEXT: %{{.*}} = "smc.frame_load"() <{slot = 0 : i64}>
// CHECK-NEXT: scf.yield %{{.*}} : !smc.list<"f">
// CHECK:      "smc.resample"() <{point = 2 : i32}> : () -> ()
// CHECK-NEXT: %[[LL:.*]] = "smc.frame_load"() <{slot = 1 : i64}> : () -> !smc.list<"f">
// CHECK-NEXT: scf.yield %[[LL]] : !smc.list<"f">
