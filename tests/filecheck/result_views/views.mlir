// RUN: %sirenc-opt -p store-result-views %s | filecheck %s
// A result list that is List.tl^k(List.rev(x)) of floats or bools, with nothing else using the
// reversal, is stored as x, and the model's result type says so (V k a); its tails stay, applied
// to x, as the checks that fail where the tails of the reverse would.

builtin.module {
  "smc.particle"() <{sym_name = "main", model = #smc.model<"PPLfLbPfLf", true, "", "", 0 : i64, []>}> ({
    %x = arith.constant 1.500000e+00 : f64
    %nil = "smc.nil"() : () -> !smc.list<"f">
    %xs = "smc.cons"(%x, %nil) : (f64, !smc.list<"f">) -> !smc.list<"f">
    %r = "smc.reverse"(%xs) : (!smc.list<"f">) -> !smc.list<"f">
    %t = "smc.tail"(%r) : (!smc.list<"f">) -> !smc.list<"f"> loc("m.si":5:3)
    %bnil = "smc.nil"() : () -> !smc.list<"b">
    %rb = "smc.reverse"(%bnil) : (!smc.list<"b">) -> !smc.list<"b">
    %shared = "smc.reverse"(%xs) : (!smc.list<"f">) -> !smc.list<"f">
    %n = "smc.length"(%shared) : (!smc.list<"f">) -> f64
    "smc.finish"(%t, %rb, %n, %shared) : (!smc.list<"f">, !smc.list<"b">, f64, !smc.list<"f">) -> ()
  }) : () -> ()
}

// CHECK:      model = #smc.model<"PPV1fV0bPfLf"
// CHECK:      %xs = "smc.cons"(%x, %nil)
// CHECK-NEXT: %t = "smc.tail"(%xs)
// CHECK-NEXT: %bnil = "smc.nil"()
// CHECK-NEXT: %shared = "smc.reverse"(%xs)
// CHECK-NEXT: %n = "smc.length"(%shared)
// CHECK-NEXT: "smc.finish"(%xs, %bnil, %n, %shared)
