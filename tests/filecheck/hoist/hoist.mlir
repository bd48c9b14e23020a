// RUN: %sirenc-opt -p hoist-above-resample --split-input-file %s | filecheck %s
// Pure arithmetic after a resample() whose operands are ready before it moves above it when
// that keeps no more values across the point: here %m + %k * (%y - %m0) folds four values
// into one (a conjugate posterior's mean, as tier 2 leaves it). The constant comes along.

builtin.module {
  "smc.particle"() <{sym_name = "model", model = #smc.model<"f", false, "no stream", "", 0 : i64, []>}> ({
    %one = arith.constant 1.000000e+00 : f64
    %m = "smc.sample"(%one) <{family = "exponential"}> : (f64) -> f64
    %k = "smc.sample"(%m) <{family = "exponential"}> : (f64) -> f64
    %y = "smc.sample"(%k) <{family = "exponential"}> : (f64) -> f64
    %m0 = "smc.sample"(%y) <{family = "exponential"}> : (f64) -> f64
    "smc.resample"() : () -> ()
    %two = arith.constant 2.000000e+00 : f64
    %d = arith.subf %y, %m0 : f64
    %kd = arith.mulf %k, %d : f64
    %mean = arith.addf %m, %kd : f64
    %twice = arith.mulf %mean, %two : f64
    "smc.finish"(%twice) : (f64) -> ()
  }) : () -> ()
}

// CHECK:      %[[M0:[a-z0-9]+]] = "smc.sample"(%y)
// CHECK-NEXT: %[[D:.*]] = arith.subf %{{.*}}, %[[M0]] : f64
// CHECK-NEXT: %[[KD:.*]] = arith.mulf %{{.*}}, %[[D]] : f64
// CHECK-NEXT: %[[MEAN:.*]] = arith.addf %{{.*}}, %[[KD]] : f64
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT: %[[TWICE:.*]] = arith.mulf %[[MEAN]], %[[TWO]] : f64
// CHECK-NEXT: "smc.resample"() : () -> ()
// CHECK-NEXT: "smc.finish"(%[[TWICE]]) : (f64) -> ()

// -----

// Nothing moves that would keep more across the point (%x and %y are used after it anyway,
// so %s would be one more), that is not pure (smc.head can fail), or whose operand comes
// after the point.

builtin.module {
  "smc.particle"() <{sym_name = "model", model = #smc.model<"f", false, "no stream", "", 0 : i64, []>}> ({
    %c = arith.constant 1.000000e+00 : f64
    %x = "smc.sample"(%c) <{family = "exponential"}> : (f64) -> f64
    %y = "smc.sample"(%c) <{family = "exponential"}> : (f64) -> f64
    %nil = "smc.nil"() : () -> !smc.list<"f">
    %l = "smc.cons"(%x, %nil) : (f64, !smc.list<"f">) -> !smc.list<"f">
    "smc.resample"() : () -> ()
    %s = arith.addf %x, %y : f64
    %h = "smc.head"(%l) : (!smc.list<"f">) -> f64
    %z = "smc.sample"(%c) <{family = "exponential"}> : (f64) -> f64
    %t = arith.addf %z, %h : f64
    %u = arith.mulf %s, %x : f64
    %v = arith.mulf %u, %y : f64
    %w = arith.addf %v, %t : f64
    "smc.finish"(%w) : (f64) -> ()
  }) : () -> ()
}

// CHECK:      %[[L:.*]] = "smc.cons"
// CHECK-NEXT: "smc.resample"() : () -> ()
// CHECK-NEXT: %[[S:.*]] = arith.addf
// CHECK-NEXT: "smc.head"(%[[L]])

// -----

// Inside a loop, a value from outside it lives across the point whatever moves (the next
// iteration reads it again): %a + %i moves only because %i dies there; %a + %b does not.

builtin.module {
  "smc.particle"() <{sym_name = "model", model = #smc.model<"f", false, "no stream", "", 0 : i64, []>}> ({
    %c = arith.constant 1.000000e+00 : f64
    %a = "smc.sample"(%c) <{family = "exponential"}> : (f64) -> f64
    %b = "smc.sample"(%c) <{family = "exponential"}> : (f64) -> f64
    %r = scf.while (%acc = %c) : (f64) -> f64 {
      %go = arith.cmpf olt, %acc, %b : f64
      scf.condition(%go) %acc : f64
    } do {
    ^bb0(%i: f64):
      "smc.resample"() : () -> ()
      %ab = arith.addf %a, %b : f64
      %ai = arith.addf %a, %i : f64
      %n = arith.addf %ai, %ab : f64
      scf.yield %n : f64
    }
    "smc.finish"(%r) : (f64) -> ()
  }) : () -> ()
}

// CHECK:      ^{{.*}}(%[[I:.*]]: f64):
// CHECK-NEXT:   %[[AI:.*]] = arith.addf %{{.*}}, %[[I]] : f64
// CHECK-NEXT:   "smc.resample"() : () -> ()
// CHECK-NEXT:   %[[AB:.*]] = arith.addf
// CHECK-NEXT:   arith.addf %[[AI]], %[[AB]] : f64
