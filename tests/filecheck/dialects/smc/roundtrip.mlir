// RUN: %sirenc-opt %s | %sirenc-opt | filecheck %s --check-prefixes=CHECK,CUSTOM
// RUN: %sirenc-opt %s --print-op-generic | %sirenc-opt --print-op-generic | filecheck %s --check-prefixes=CHECK,GENERIC
// RUN: %sirenc-opt %s --print-op-generic | %sirenc-opt | filecheck %s --check-prefixes=CHECK,CUSTOM
// Every op, type and attribute of the smc dialect parses, verifies and prints
// back unchanged, from the custom and from the generic form. The smc ops have
// no custom syntax of their own: both forms print them generically, only the
// arith ops around them differ.

builtin.module {
  "smc.particle"() <{sym_name = "model", model = #smc.model<"PfLb", true, "", "/data.csv", 2 : i64, [[1 : i32, 1 : i64, "Lb"]]>}> ({
    %m = arith.constant 0.000000e+00 : f64
    %v = arith.constant 1.000000e+00 : f64
    %i = arith.constant 0 : i64
    %x = "smc.sample"(%m, %v) <{family = "gaussian"}> : (f64, f64) -> f64
    "smc.observe"(%m, %v, %x) <{family = "gaussian"}> : (f64, f64, f64) -> ()
    %probs = "smc.nil"() : () -> !smc.list<"f">
    %k = "smc.sample"(%m, %v, %probs) <{family = "categorical"}> : (f64, f64, !smc.list<"f">) -> f64
    "smc.observe"(%m, %v, %probs, %k) <{family = "categorical"}> : (f64, f64, !smc.list<"f">, f64) -> ()
    "smc.frame_store"(%x) <{slot = 0 : i64}> : (f64) -> ()
    "smc.resample"() <{point = 1 : i32}> : () -> ()
    "smc.resample"() : () -> ()
    %more, %row = "smc.next_row"(%i) <{point = 2 : i32}> : (i64) -> (i1, !smc.list<"f">)
    %x1 = "smc.frame_load"() <{slot = 0 : i64}> : () -> f64
    %nil = "smc.nil"() : () -> !smc.list<"Pfb">
    %lit = "smc.const_list"() <{words = array<i64: 4607182418800017408, 1, -4611686018427387904, 0>}> : () -> !smc.list<"Pfb">
    %empty = "smc.is_nil"(%nil) : (!smc.list<"Pfb">) -> i1
    %cell = "smc.cons"(%x1, %more, %nil) : (f64, i1, !smc.list<"Pfb">) -> !smc.list<"Pfb">
    %h:2 = "smc.head"(%cell) : (!smc.list<"Pfb">) -> (f64, i1)
    %t = "smc.tail"(%cell) : (!smc.list<"Pfb">) -> !smc.list<"Pfb">
    %n = "smc.length"(%t) : (!smc.list<"Pfb">) -> f64
    %r = "smc.reverse"(%t) : (!smc.list<"Pfb">) -> !smc.list<"Pfb">
    %range = "smc.range"(%m, %n) : (f64, f64) -> !smc.list<"f">
    %rows = "smc.read_file"() <{path = "/abs/data.csv"}> : () -> !smc.list<"Lf">
    %units = "smc.nil"() : () -> !smc.list<"u">
    %bs = "smc.nil"() : () -> !smc.list<"b">
    "smc.finish"(%x1, %bs) : (f64, !smc.list<"b">) -> ()
  }) : () -> ()
}

// CHECK:        "smc.particle"() <{sym_name = "model", model = #smc.model<"PfLb", true, "", "/data.csv", 2 : i64, {{\[}}[1 : i32, 1 : i64, "Lb"]]>}> ({
// CUSTOM-NEXT:    %m = arith.constant 0.000000e+00 : f64
// GENERIC-NEXT:   %m = "arith.constant"() <{value = 0.000000e+00 : f64}> : () -> f64
// CUSTOM-NEXT:    %v = arith.constant 1.000000e+00 : f64
// GENERIC-NEXT:   %v = "arith.constant"() <{value = 1.000000e+00 : f64}> : () -> f64
// CUSTOM-NEXT:    %i = arith.constant 0 : i64
// GENERIC-NEXT:   %i = "arith.constant"() <{value = 0 : i64}> : () -> i64
// CHECK-NEXT:     %x = "smc.sample"(%m, %v) <{family = "gaussian"}> : (f64, f64) -> f64
// CHECK-NEXT:     "smc.observe"(%m, %v, %x) <{family = "gaussian"}> : (f64, f64, f64) -> ()
// CHECK-NEXT:     %probs = "smc.nil"() : () -> !smc.list<"f">
// CHECK-NEXT:     %k = "smc.sample"(%m, %v, %probs) <{family = "categorical"}> : (f64, f64, !smc.list<"f">) -> f64
// CHECK-NEXT:     "smc.observe"(%m, %v, %probs, %k) <{family = "categorical"}> : (f64, f64, !smc.list<"f">, f64) -> ()
// CHECK-NEXT:     "smc.frame_store"(%x) <{slot = 0 : i64}> : (f64) -> ()
// CHECK-NEXT:     "smc.resample"() <{point = 1 : i32}> : () -> ()
// CHECK-NEXT:     "smc.resample"() : () -> ()
// CHECK-NEXT:     %more, %row = "smc.next_row"(%i) <{point = 2 : i32}> : (i64) -> (i1, !smc.list<"f">)
// CHECK-NEXT:     %x1 = "smc.frame_load"() <{slot = 0 : i64}> : () -> f64
// CHECK-NEXT:     %nil = "smc.nil"() : () -> !smc.list<"Pfb">
// CHECK-NEXT:     %lit = "smc.const_list"() <{words = array<i64: 4607182418800017408, 1, -4611686018427387904, 0>}> : () -> !smc.list<"Pfb">
// CHECK-NEXT:     %empty = "smc.is_nil"(%nil) : (!smc.list<"Pfb">) -> i1
// CHECK-NEXT:     %cell = "smc.cons"(%x1, %more, %nil) : (f64, i1, !smc.list<"Pfb">) -> !smc.list<"Pfb">
// CHECK-NEXT:     %h, %h_1 = "smc.head"(%cell) : (!smc.list<"Pfb">) -> (f64, i1)
// CHECK-NEXT:     %t = "smc.tail"(%cell) : (!smc.list<"Pfb">) -> !smc.list<"Pfb">
// CHECK-NEXT:     %n = "smc.length"(%t) : (!smc.list<"Pfb">) -> f64
// CHECK-NEXT:     %r = "smc.reverse"(%t) : (!smc.list<"Pfb">) -> !smc.list<"Pfb">
// CHECK-NEXT:     %range = "smc.range"(%m, %n) : (f64, f64) -> !smc.list<"f">
// CHECK-NEXT:     %rows = "smc.read_file"() <{path = "/abs/data.csv"}> : () -> !smc.list<"Lf">
// CHECK-NEXT:     %units = "smc.nil"() : () -> !smc.list<"u">
// CHECK-NEXT:     %bs = "smc.nil"() : () -> !smc.list<"b">
// CHECK-NEXT:     "smc.finish"(%x1, %bs) : (f64, !smc.list<"b">) -> ()
// CHECK-NEXT:   }) : () -> ()
