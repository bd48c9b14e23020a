// RUN: %sirenc-opt -p lower-smc-to-llvm %s | filecheck %s
// Gaussian draws and scores are inline, so that LLVM folds sqrt and log of a
// constant variance: a valid variance (> 0) draws mu + sqrt(var) * z from a
// standard normal z, else sirenrt_sample_gaussian reports it; an observation
// adds -0.5 * log(var * 2pi) - (x - mu)^2 / (var * 2) to *log_weight in place
// while the sum is > -inf, else passes it to sirenrt_add_log_weight, which
// remembers the site; an invalid variance goes to sirenrt_observe_gaussian.
// Other families call sirenrt_sample_<family> / sirenrt_observe_<family>
// (categorical's probabilities: a list handle). Both ops of the gaussian
// share the site of their location. A runtime function the module already
// declares is not declared again. The calls for an invalid variance and a zero
// weight are on rare paths: marked sirenc.cold, which the LLVM text makes `cold`.

builtin.module {
  llvm.func @sirenrt_std_normal(!llvm.ptr) -> f64
  "smc.particle"() <{sym_name = "main", model = #smc.model<"f", false, "no stream", "", 0 : i64, []>}> ({
    %mu = arith.constant 1.000000e+00 : f64
    %var = arith.constant 4.000000e+00 : f64
    %x = "smc.sample"(%mu, %var) <{family = "gaussian"}> : (f64, f64) -> f64 loc("m.si":1:10)
    "smc.observe"(%x, %var, %mu) <{family = "gaussian"}> : (f64, f64, f64) -> () loc("m.si":2:12)
    %p = "smc.sample"(%mu) <{family = "bernoulli"}> : (f64) -> f64 loc("m.si":3:10)
    "smc.observe"(%x, %p) <{family = "poisson"}> : (f64, f64) -> () loc("m.si":1:10)
    %probs = "smc.nil"() : () -> !smc.list<"f">
    %k = "smc.sample"(%mu, %var, %probs) <{family = "categorical"}> : (f64, f64, !smc.list<"f">) -> f64 loc("m.si":4:10)
    "smc.finish"(%x) : (f64) -> ()
  }) : () -> ()
}

// Each runtime function is declared once, in the order of first use.
// CHECK:      llvm.func @sirenrt_std_normal(!llvm.ptr) -> f64
// CHECK-NEXT: llvm.func @sirenrt_sample_gaussian(!llvm.ptr, f64, f64, i32) -> f64
// CHECK-NEXT: llvm.func @sirenrt_add_log_weight(!llvm.ptr, f64, i32)
// CHECK-NEXT: llvm.func @sirenrt_observe_gaussian(!llvm.ptr, f64, f64, f64, i32)
// CHECK-NEXT: llvm.func @sirenrt_sample_bernoulli(!llvm.ptr, f64, i32) -> f64
// CHECK-NEXT: llvm.func @sirenrt_observe_poisson(!llvm.ptr, f64, f64, i32)
// CHECK-NEXT: llvm.func @sirenrt_sample_categorical(!llvm.ptr, f64, f64, i64, i32) -> f64
// CHECK-NEXT: llvm.func @siren_resume(%[[CTX:.*]]: !llvm.ptr, %[[FRAME:.*]]: !llvm.ptr, %[[LW:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// CHECK-SAME:   #sirenrt.layout<16 : i64, 8 : i64, [], [loc("m.si":1:10), loc("m.si":2:12), loc("m.si":3:10), loc("m.si":4:10)], []>
// CHECK:        %[[MU:.*]] = llvm.mlir.constant(1.000000e+00 : f64) : f64
// CHECK-NEXT:   %[[VAR:.*]] = llvm.mlir.constant(4.000000e+00 : f64) : f64

// The draw.
// CHECK-NEXT:   %[[SITE0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[ZERO:.*]] = llvm.mlir.constant(0.000000e+00 : f64) : f64
// CHECK-NEXT:   %[[VALID:.*]] = llvm.fcmp "ogt" %[[VAR]], %[[ZERO]] : f64
// CHECK-NEXT:   llvm.cond_br %[[VALID]], ^[[FAST:bb[0-9]+]], ^[[SLOW:bb[0-9]+]]
// CHECK-NEXT: ^[[FAST]]:
// CHECK-NEXT:   %[[Z:.*]] = llvm.call @sirenrt_std_normal(%[[CTX]]) : (!llvm.ptr) -> f64
// CHECK-NEXT:   %[[SD:.*]] = llvm.intr.sqrt(%[[VAR]]) : (f64) -> f64
// CHECK-NEXT:   %[[SZ:.*]] = llvm.fmul %[[SD]], %[[Z]] : f64
// CHECK-NEXT:   %[[DRAW:.*]] = llvm.fadd %[[MU]], %[[SZ]] : f64
// CHECK-NEXT:   llvm.br ^[[DRAWN:bb[0-9]+]](%[[DRAW]] : f64)
// CHECK-NEXT: ^[[SLOW]]:
// CHECK-NEXT:   %[[BAD:.*]] = llvm.call @sirenrt_sample_gaussian(%[[CTX]], %[[MU]], %[[VAR]], %[[SITE0]]) {sirenc.cold} : (!llvm.ptr, f64, f64, i32) -> f64
// CHECK-NEXT:   llvm.br ^[[DRAWN]](%[[BAD]] : f64)

// The score: observe(gaussian(x, var), mu).
// CHECK-NEXT: ^[[DRAWN]](%[[X:.*]]: f64):
// CHECK-NEXT:   %[[SITE1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[ZERO1:.*]] = llvm.mlir.constant(0.000000e+00 : f64) : f64
// CHECK-NEXT:   %[[VALID1:.*]] = llvm.fcmp "ogt" %[[VAR]], %[[ZERO1]] : f64
// CHECK-NEXT:   llvm.cond_br %[[VALID1]], ^[[SCORE:bb[0-9]+]], ^[[REPORT:bb[0-9]+]]
// CHECK-NEXT: ^[[SCORE]]:
// CHECK-NEXT:   %[[D:.*]] = llvm.fsub %[[MU]], %[[X]] : f64
// CHECK-NEXT:   %[[TWOPI:.*]] = llvm.mlir.constant(6.2831853071795862 : f64) : f64
// CHECK-NEXT:   %[[VTWOPI:.*]] = llvm.fmul %[[VAR]], %[[TWOPI]] : f64
// CHECK-NEXT:   %[[LOG:.*]] = llvm.intr.log(%[[VTWOPI]]) : (f64) -> f64
// CHECK-NEXT:   %[[HALF:.*]] = llvm.mlir.constant(-5.000000e-01 : f64) : f64
// CHECK-NEXT:   %[[NORM:.*]] = llvm.fmul %[[LOG]], %[[HALF]] : f64
// CHECK-NEXT:   %[[SQ:.*]] = llvm.fmul %[[D]], %[[D]] : f64
// CHECK-NEXT:   %[[TWO:.*]] = llvm.mlir.constant(2.000000e+00 : f64) : f64
// CHECK-NEXT:   %[[V2:.*]] = llvm.fmul %[[VAR]], %[[TWO]] : f64
// CHECK-NEXT:   %[[SCALED:.*]] = llvm.fdiv %[[SQ]], %[[V2]] : f64
// CHECK-NEXT:   %[[LP:.*]] = llvm.fsub %[[NORM]], %[[SCALED]] : f64
// CHECK-NEXT:   %[[OLD:.*]] = llvm.load %[[LW]] : !llvm.ptr -> f64
// CHECK-NEXT:   %[[NEW:.*]] = llvm.fadd %[[OLD]], %[[LP]] : f64
// CHECK-NEXT:   %[[NEGINF:.*]] = llvm.mlir.constant(0xfff0000000000000 : f64) : f64
// CHECK-NEXT:   %[[FINITE:.*]] = llvm.fcmp "ogt" %[[NEW]], %[[NEGINF]] : f64
// CHECK-NEXT:   llvm.cond_br %[[FINITE]], ^[[STORE:bb[0-9]+]], ^[[ZERO_WEIGHT:bb[0-9]+]]
// CHECK-NEXT: ^[[REPORT]]:
// CHECK-NEXT:   llvm.call @sirenrt_observe_gaussian(%[[CTX]], %[[X]], %[[VAR]], %[[MU]], %[[SITE1]]) {sirenc.cold} : (!llvm.ptr, f64, f64, f64, i32) -> ()
// CHECK-NEXT:   llvm.br ^[[SCORED:bb[0-9]+]]

// Other families, with the site of their location (1:10 again is site 0).
// CHECK-NEXT: ^[[SCORED]]:
// CHECK-NEXT:   %[[SITE2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT:   %[[P:.*]] = llvm.call @sirenrt_sample_bernoulli(%[[CTX]], %[[MU]], %[[SITE2]]) : (!llvm.ptr, f64, i32) -> f64
// CHECK-NEXT:   %[[SITE0B:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   llvm.call @sirenrt_observe_poisson(%[[CTX]], %[[X]], %[[P]], %[[SITE0B]]) : (!llvm.ptr, f64, f64, i32) -> ()
// CHECK-NEXT:   %[[PROBS:.*]] = llvm.mlir.constant(-1) : i64
// CHECK-NEXT:   %[[SITE3:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT:   llvm.call @sirenrt_sample_categorical(%[[CTX]], %[[MU]], %[[VAR]], %[[PROBS]], %[[SITE3]]) : (!llvm.ptr, f64, f64, i64, i32) -> f64
// CHECK:        llvm.return

// CHECK-NEXT: ^[[STORE]]:
// CHECK-NEXT:   llvm.store %[[NEW]], %[[LW]] : f64, !llvm.ptr
// CHECK-NEXT:   llvm.br ^[[ADDED:bb[0-9]+]]
// CHECK-NEXT: ^[[ZERO_WEIGHT]]:
// CHECK-NEXT:   llvm.call @sirenrt_add_log_weight(%[[CTX]], %[[LP]], %[[SITE1]]) {sirenc.cold} : (!llvm.ptr, f64, i32) -> ()
// CHECK-NEXT:   llvm.br ^[[ADDED]]
// CHECK-NEXT: ^[[ADDED]]:
// CHECK-NEXT:   llvm.br ^[[SCORED]]
