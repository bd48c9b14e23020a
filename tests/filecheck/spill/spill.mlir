// RUN: %sirenc-opt -p spill-across-suspends %s | filecheck %s
// %x is used after the suspension: it gets a frame slot after the 16 bytes
// already laid out, a store after its definition and a load at its use.
// %y dies before the suspension and stays in a register; the constant is
// recreated after re-entry instead of taking a slot. Suspensions are numbered.

builtin.module {
  func.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr) -> i32 attributes {smc.frame_size = 16 : i64} {
    %c = arith.constant 2.000000e+00 : f64
    %site = arith.constant 0 : i32
    %x = "smc.rt"(%ctx, %c, %site) <{callee = "sirenrt_sample_exponential"}> : (!llvm.ptr, f64, i32) -> f64
    %y = arith.mulf %x, %x : f64
    "smc.rt"(%ctx, %y, %site) <{callee = "sirenrt_add_log_weight"}> : (!llvm.ptr, f64, i32) -> ()
    "smc.suspend"() <{status = 1 : i32}> : () -> ()
    %z = arith.addf %x, %c : f64
    "smc.suspend"() <{status = 1 : i32}> : () -> ()
    %w = arith.bitcast %z : f64 to i64
    "smc.frame_store"(%frame, %w) <{offset = 8 : i64}> : (!llvm.ptr, i64) -> ()
    %ok = arith.constant 0 : i32
    func.return %ok : i32
  }
}

// CHECK:      smc.frame_size = 32 : i64
// CHECK:      %[[X:.*]] = "smc.rt"({{.*}}) <{callee = "sirenrt_sample_exponential"}>
// CHECK-NEXT: "smc.frame_store"(%{{.*}}, %[[X]]) <{offset = 16 : i64}>
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[X]], %[[X]] : f64
// CHECK-NEXT: "smc.rt"(%{{.*}}, %[[Y]], %{{.*}}) <{callee = "sirenrt_add_log_weight"}>
// CHECK-NEXT: "smc.suspend"() <{status = 1 : i32, point = 1 : i32}>
// CHECK-NEXT: %[[C:.*]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT: %[[XL:.*]] = "smc.frame_load"(%{{.*}}) <{offset = 16 : i64}> : (!llvm.ptr) -> f64
// CHECK-NEXT: %[[Z:.*]] = arith.addf %[[XL]], %[[C]] : f64
// CHECK-NEXT: "smc.frame_store"(%{{.*}}, %[[Z]]) <{offset = 24 : i64}>
// CHECK-NEXT: "smc.suspend"() <{status = 1 : i32, point = 2 : i32}>
// CHECK-NEXT: %[[ZL:.*]] = "smc.frame_load"(%{{.*}}) <{offset = 24 : i64}> : (!llvm.ptr) -> f64
// CHECK-NEXT: arith.bitcast %[[ZL]]
